"""The token gate in front of every request, the websocket upgrade included.

textual-serve has no authentication hook, so this is an aiohttp middleware on its app. A
browser logs in once (``/?token=…`` from the printed link, or the form that any refused page
shows); the answer sets an HttpOnly, SameSite=Strict session cookie and redirects to the same
page without the token, so the token stays out of history, bookmarks and ``Referer``. Scripts
may send ``Authorization: Bearer TOKEN`` instead. Every comparison is ``hmac.compare_digest``.

The cookie holds an HMAC of the token, not the token: rotating the token ends every session.
A websocket whose ``Origin`` is not the served origin is refused even with the cookie (a
second line behind SameSite against cross-site websocket hijacking).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode, urlsplit

from aiohttp import web

log = logging.getLogger("monque_tui.serve")

SESSION_COOKIE = "monque_session"
LOGIN_PATH = "/login"
#: Shown to refused requests; the same every time, so it tells a prober nothing.
_REFUSED = "a valid token is required: open the link monque-tui printed, or log in at /login"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def describe_peer(request: web.Request) -> str:
    """Who is asking, for the log: the socket's peer, plus a proxy's claim if there is one."""
    peer = request.remote or "unknown"
    forwarded = request.headers.get("X-Forwarded-For")
    if forwarded:
        return f"{peer} (X-Forwarded-For: {forwarded[:200]})"
    return peer


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    port = f":{parts.port}" if parts.port not in (None, default) else ""
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}".lower()


class TokenGate:
    """Decides, per request, whether it carries the token; and turns a valid token into a cookie."""

    def __init__(self, token: str, public_url: str, *, canonical_host: bool) -> None:
        self._token = token.encode("utf-8")
        self._session = hmac.new(self._token, b"monque-tui serve session v1", hashlib.sha256).hexdigest()
        self.public_url = public_url
        self.origin = _origin_of(public_url)
        self.secure = public_url.startswith("https://")
        #: Served directly (no proxy): a request for another host name (localhost vs 127.0.0.1)
        #: is sent to the public URL first, or its cookie would not reach the websocket.
        self.canonical_host = canonical_host

    def token_matches(self, offered: str) -> bool:
        return hmac.compare_digest(offered.encode("utf-8"), self._token)

    def session_matches(self, offered: str) -> bool:
        return hmac.compare_digest(offered.encode("utf-8"), self._session.encode("utf-8"))

    def authenticated(self, request: web.Request) -> bool:
        cookie = request.cookies.get(SESSION_COOKIE)
        if cookie is not None and self.session_matches(cookie):
            return True
        scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
        return scheme.lower() == "bearer" and bool(credentials) and self.token_matches(credentials.strip())

    def set_session(self, response: web.StreamResponse) -> None:
        response.set_cookie(
            SESSION_COOKIE, self._session, httponly=True, samesite="Strict", secure=self.secure, path="/"
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.canonical_host and _origin_of(f"{self.public_url.split('://')[0]}://{request.host}") != self.origin:
            raise web.HTTPTemporaryRedirect(self.public_url + request.path_qs)
        if request.path == LOGIN_PATH:
            return await self._login(request)
        offered = request.query.get("token")
        if offered is not None:
            return self._login_by_query(request, offered)
        if not self.authenticated(request):
            log.info("refused %s %s from %s: no valid session", request.method, request.path, describe_peer(request))
            return _refused(request)
        if _is_websocket(request):
            origin = request.headers.get("Origin")
            if origin is not None and origin.lower() != self.origin:
                log.warning(
                    "refused a websocket from %s: Origin %r is not %s",
                    describe_peer(request),
                    origin[:200],
                    self.origin,
                )
                raise web.HTTPForbidden(text="websocket from another origin refused\n")
        return await handler(request)

    def _login_by_query(self, request: web.Request, offered: str) -> web.StreamResponse:
        if not self.token_matches(offered):
            log.warning("login refused from %s: wrong token (in the URL)", describe_peer(request))
            return _refused(request, wrong=True)
        rest = [(key, value) for key, value in request.query.items() if key != "token"]
        target = request.path + (f"?{urlencode(rest)}" if rest else "")
        log.info("login from %s (token in the URL)", describe_peer(request))
        response = _see_other(target)
        self.set_session(response)
        return response

    async def _login(self, request: web.Request) -> web.StreamResponse:
        if request.method == "GET":
            return _login_page(status=200)
        if request.method != "POST":
            raise web.HTTPMethodNotAllowed(request.method, ["GET", "POST"])
        form = await request.post()
        offered = form.get("token")
        if not isinstance(offered, str) or not self.token_matches(offered.strip()):
            log.warning("login refused from %s: wrong token (form)", describe_peer(request))
            return _login_page(status=401, wrong=True)
        log.info("login from %s (form)", describe_peer(request))
        response = _see_other("/")
        self.set_session(response)
        return response


def _see_other(target: str) -> web.Response:
    return web.Response(status=303, headers={"Location": target})


def _is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


def _refused(request: web.Request, *, wrong: bool = False) -> web.StreamResponse:
    if request.method == "GET" and not _is_websocket(request) and "text/html" in request.headers.get("Accept", ""):
        return _login_page(status=401, wrong=wrong)
    return web.Response(status=401, text=_REFUSED + "\n", headers={"WWW-Authenticate": 'Bearer realm="monque-tui"'})


def _login_page(*, status: int, wrong: bool = False) -> web.Response:
    message = "That token is not right." if wrong else "This console can change and delete jobs: it needs a token."
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>monque-tui: log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{background:#0c181f;color:#eee;font-family:monospace;display:flex;justify-content:center;margin-top:20vh}}
form{{background:#12232d;padding:2em;max-width:32em}}input{{width:100%;margin:1em 0;padding:.5em;font-family:monospace}}</style>
</head><body><form method="post" action="{LOGIN_PATH}">
<p>{html.escape(message)}</p>
<p>Open the link <code>monque-tui --serve</code> printed, or paste the token.</p>
<input type="password" name="token" autocomplete="current-password" autofocus aria-label="token">
<button type="submit">Log in</button></form></body></html>
"""
    return web.Response(
        status=status,
        text=body,
        content_type="text/html",
        headers={"WWW-Authenticate": 'Bearer realm="monque-tui"'} if status == 401 else None,
    )


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """On every response (``on_response_prepare``): no framing, no sniffing, no referrer, no caching."""
    headers = response.headers
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "no-referrer")
    if not request.path.startswith("/static/"):
        headers.setdefault("Cache-Control", "no-store")

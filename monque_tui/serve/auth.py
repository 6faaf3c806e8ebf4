"""The token gate in front of every request, the websocket upgrade included (ADR 0016, 0017).

textual-serve has no authentication hook, so this is an aiohttp middleware on its app. A
browser logs in once, by one of:

* the **one-time link** monque-tui prints (``/login?once=NONCE``): the nonce is a credential of
  its own, not the token, and is exchanged for a session once; opened again (from a proxy's
  access log, a shared screen, the shell's history) it is refused with a page saying so.
  ``kill -USR1 PID`` prints a new link;
* the **form** at ``/login``, with the token posted (never in a URL: proxies log URLs).

Either sets a session cookie: a random id (not the token, nor anything derived from it),
HttpOnly, SameSite=Strict, ``Secure`` behind https, that lives ``session_lifetime`` seconds
(the server forgets it then, and the browser too through ``Max-Age``). ``POST /logout`` ends
it and closes its consoles. Sessions live in this process: a restart logs everyone out.
Scripts send ``Authorization: Bearer TOKEN`` instead; the token works for the server's life.
Every comparison of a secret is ``hmac.compare_digest``. A websocket whose ``Origin`` is not
the served origin is refused even with the cookie (a second line behind SameSite against
cross-site websocket hijacking).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from aiohttp import web

log = logging.getLogger("monque_tui.serve")

SESSION_COOKIE = "monque_session"
LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
#: The query parameter of the one-time link.
ONCE_PARAM = "once"
#: Used nonces remembered, so a second use is told "used" rather than "not valid".
USED_REMEMBERED = 1000
#: Shown to refused requests; the same every time, so it tells a prober nothing.
_REFUSED = "a valid session or token is required: open the link monque-tui printed, or log in at /login"
HOW_TO_GET_A_LINK = (
    "Ask whoever runs monque-tui --serve for a new link (kill -USR1 on the server's process prints one, "
    "as its start-up lines say), or log in with the token below."
)

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


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()  # a header's bad bytes: no match, no 500


class LoginLinks:
    """One-time login nonces: one current link, each exchanged for a session at most once."""

    def __init__(self) -> None:
        self._current: bytes | None = None
        self._used: OrderedDict[bytes, None] = OrderedDict()

    def issue(self) -> str:
        """A new nonce; it replaces the previous link if that was never used."""
        nonce = secrets.token_urlsafe(32)
        self._current = _digest(nonce)
        return nonce

    def redeem(self, offered: str) -> str:
        """``"ok"`` (now spent), ``"used"`` (spent before) or ``"unknown"``."""
        digest = _digest(offered)
        if self._current is not None and hmac.compare_digest(digest, self._current):
            self._current = None
            self._used[digest] = None
            while len(self._used) > USED_REMEMBERED:
                self._used.popitem(last=False)
            return "ok"
        return "used" if digest in self._used else "unknown"


@dataclass(slots=True)
class Session:
    id: str
    expires: float  # time.monotonic()


class Sessions:
    """The live browser sessions, by the random id their cookie holds. In memory only."""

    def __init__(self, lifetime: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.lifetime = lifetime
        self._clock = clock
        self._by_digest: dict[bytes, Session] = {}

    def start(self) -> Session:
        now = self._clock()
        for key in [key for key, session in self._by_digest.items() if session.expires <= now]:
            del self._by_digest[key]
        session = Session(secrets.token_urlsafe(32), now + self.lifetime)
        self._by_digest[_digest(session.id)] = session
        return session

    def find(self, cookie: str) -> tuple[Session | None, str]:
        """The live session of ``cookie``, or None with why: ``"expired"`` or ``"unknown"``."""
        session = self._by_digest.get(_digest(cookie))  # a lookup by hash: timing tells nothing of an id
        if session is None:
            return None, "unknown"
        if session.expires <= self._clock():
            return None, "expired"
        return session, "ok"

    def end(self, cookie: str) -> Session | None:
        return self._by_digest.pop(_digest(cookie), None)

    def remaining(self, session: Session) -> float:
        return max(0.0, session.expires - self._clock())


class TokenGate:
    """Decides, per request, whether it carries a session or the token; logs browsers in and out."""

    def __init__(
        self,
        token: str,
        public_url: str,
        *,
        canonical_host: bool,
        session_lifetime: float,
        on_logout: Callable[[Session], None] | None = None,
    ) -> None:
        self._token = token.encode("utf-8")
        self.public_url = public_url
        self.origin = _origin_of(public_url)
        self.secure = public_url.startswith("https://")
        #: Served directly (no proxy): a request for another host name (localhost vs 127.0.0.1)
        #: is sent to the public URL first, or its cookie would not reach the websocket.
        self.canonical_host = canonical_host
        self.links = LoginLinks()
        self.sessions = Sessions(session_lifetime)
        self._on_logout = on_logout

    def login_link(self) -> str:
        """A new one-time login link (the previous one, if unused, stops working)."""
        return f"{self.public_url}{LOGIN_PATH}?{ONCE_PARAM}={self.links.issue()}"

    def token_matches(self, offered: str) -> bool:
        # aiohttp hands undecodable header bytes over as lone surrogates: they match nothing
        return hmac.compare_digest(offered.encode("utf-8", "surrogatepass"), self._token)

    def session_of(self, request: web.Request) -> tuple[Session | None, str]:
        cookie = request.cookies.get(SESSION_COOKIE)
        if cookie is None:
            return None, "none"
        return self.sessions.find(cookie)

    def _bearer(self, request: web.Request) -> bool:
        scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
        return scheme.lower() == "bearer" and bool(credentials) and self.token_matches(credentials.strip())

    def _start_session(self, response: web.StreamResponse) -> None:
        session = self.sessions.start()
        response.set_cookie(
            SESSION_COOKIE,
            session.id,
            max_age=int(self.sessions.lifetime),
            httponly=True,
            samesite="Strict",
            secure=self.secure,
            path="/",
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.canonical_host and _origin_of(f"{self.public_url.split('://')[0]}://{request.host}") != self.origin:
            if _is_api(request.path):
                # Not a redirect: clients drop Authorization when the host changes, so a caller
                # using localhost for 127.0.0.1 got a text 307, then a puzzling 401 (a probe).
                return web.json_response(
                    {"error": f"This server answers at {self.public_url}: call the API there, not at {request.host}"},
                    status=421,
                )
            raise web.HTTPTemporaryRedirect(self.public_url + request.path_qs)
        if request.path == LOGIN_PATH:
            return await self._login(request)
        if request.path == LOGOUT_PATH:
            return self._logout(request)
        if "token" in request.query:
            log.warning("login refused from %s: a token in the URL (no longer accepted)", describe_peer(request))
            return _refused(request, "token-in-url")
        session, why = self.session_of(request)
        if session is None and not self._bearer(request):
            log.info(
                "refused %s %s from %s: %s",
                request.method,
                request.path,
                describe_peer(request),
                {"expired": "the session expired", "unknown": "an unknown or ended session"}.get(why, "no session"),
            )
            return _refused(request, why)
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
        request["monque_session"] = session
        return await handler(request)

    async def _login(self, request: web.Request) -> web.StreamResponse:
        if request.method == "GET":
            offered = request.query.get(ONCE_PARAM)
            if offered is None:
                return _login_page(status=200, reason="out" if "out" in request.query else None)
            return self._login_by_link(request, offered)
        if request.method != "POST":
            raise web.HTTPMethodNotAllowed(request.method, ["GET", "POST"])
        form = await request.post()
        offered_token = form.get("token")
        if not isinstance(offered_token, str) or not self.token_matches(offered_token.strip()):
            log.warning("login refused from %s: wrong token (form)", describe_peer(request))
            return _login_page(status=401, reason="wrong")
        log.info("login from %s (form)", describe_peer(request))
        response = _see_other("/")
        self._start_session(response)
        return response

    def _login_by_link(self, request: web.Request, offered: str) -> web.StreamResponse:
        outcome = self.links.redeem(offered)
        if outcome != "ok" and self.session_of(request)[0] is not None:
            return _see_other("/")  # the link again, from a browser logged in already: no harm, no page
        if outcome != "ok":
            log.warning(
                "login refused from %s: %s",
                describe_peer(request),
                "a one-time link used before" if outcome == "used" else "not a valid login link",
            )
            return _login_page(status=410 if outcome == "used" else 401, reason=f"link-{outcome}")
        rest = [(key, value) for key, value in request.query.items() if key != ONCE_PARAM]
        log.info("login from %s (one-time link)", describe_peer(request))
        response = _see_other("/" + (f"?{urlencode(rest)}" if rest else ""))
        self._start_session(response)
        return response

    def _logout(self, request: web.Request) -> web.StreamResponse:
        if request.method == "GET":
            return _logout_page()
        if request.method != "POST":
            raise web.HTTPMethodNotAllowed(request.method, ["GET", "POST"])
        cookie = request.cookies.get(SESSION_COOKIE)
        ended = self.sessions.end(cookie) if cookie is not None else None
        if ended is not None:
            log.info("logout from %s", describe_peer(request))
            if self._on_logout is not None:
                self._on_logout(ended)
        response = _see_other(f"{LOGIN_PATH}?out=1")
        response.del_cookie(SESSION_COOKIE, path="/", secure=self.secure, httponly=True, samesite="Strict")
        return response


def _see_other(target: str) -> web.Response:
    return web.Response(status=303, headers={"Location": target})


def _is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


def _refused(request: web.Request, reason: str) -> web.StreamResponse:
    if _is_api(request.path):  # the management API answers {"error": ...}, as all its errors
        return web.json_response(
            {"error": _REFUSED}, status=401, headers={"WWW-Authenticate": 'Bearer realm="monque-tui"'}
        )
    if request.method == "GET" and not _is_websocket(request) and "text/html" in request.headers.get("Accept", ""):
        return _login_page(status=401, reason=reason)
    return web.Response(status=401, text=_REFUSED + "\n", headers={"WWW-Authenticate": 'Bearer realm="monque-tui"'})


#: What the login page says first, by why it is shown.
_MESSAGES = {
    None: "This console can change and delete jobs: it needs you to log in.",
    "none": "This console can change and delete jobs: it needs you to log in.",
    "wrong": "That token is not right.",
    "out": "You are logged out.",
    "expired": "Your session expired: log in again.",
    "unknown": "Your session has ended (you logged out, it expired, or the server restarted): log in again.",
    "token-in-url": "The token no longer goes in a URL (proxies and browsers keep URLs): paste it below instead.",
    "link-used": "This login link was used already: each link logs in once.",
    "link-unknown": "This login link is not valid (a newer one replaced it, or the server restarted).",
}


def _login_page(*, status: int, reason: str | None = None) -> web.Response:
    message = _MESSAGES.get(reason, _MESSAGES[None])
    how = (
        HOW_TO_GET_A_LINK
        if reason and reason.startswith("link-")
        else ("Open the one-time link monque-tui --serve printed, or paste the token.")
    )
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>monque-tui: log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{_STYLE}input{{width:100%;margin:1em 0;padding:.5em;font-family:monospace}}</style>
</head><body><form method="post" action="{LOGIN_PATH}">
<p id="message">{html.escape(message)}</p>
<p id="how">{html.escape(how)}</p>
<input type="password" name="token" autocomplete="current-password" autofocus aria-label="token">
<button type="submit">Log in</button></form></body></html>
"""
    return web.Response(
        status=status,
        text=body,
        content_type="text/html",
        headers={"WWW-Authenticate": 'Bearer realm="monque-tui"'} if status == 401 else None,
    )


_STYLE = (
    "body{background:#0c181f;color:#eee;font-family:monospace;display:flex;justify-content:center;margin-top:20vh}"
    "form{background:#12232d;padding:2em;max-width:32em}"
)


def _logout_page() -> web.Response:
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>monque-tui: log out</title>
<style>{_STYLE}</style></head><body><form method="post" action="{LOGOUT_PATH}">
<p>Log out of the monque-tui console? Its open consoles close.</p>
<button type="submit">Log out</button></form></body></html>
"""
    return web.Response(text=body, content_type="text/html")


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """On every response (``on_response_prepare``): no framing, no sniffing, no referrer, no caching."""
    headers = response.headers
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "no-referrer")
    if not request.path.startswith("/static/"):
        headers.setdefault("Cache-Control", "no-store")


def _is_api(path: str) -> bool:
    """The management API's paths (``/api`` itself included): every answer there is its JSON."""
    return path.rstrip("/") == "/api" or path.startswith("/api/")

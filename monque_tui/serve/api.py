"""The management API inside ``monque-tui --serve``: the engine's core behind aiohttp.

The server process opens its own ``Monque`` (``open_api``) and answers ``/api/...`` itself;
browser sessions still run their own console processes. Auth is the gate's, in front of
every path: ``Authorization: Bearer TOKEN`` for scripts, the login's session cookie for a
browser. Read-only is enforced here, by the core (every write is 403 before any store call),
not only by the store URL. A cookie-authenticated write must come from the served origin
(``Origin``), a second line behind SameSite=Strict, as for the websocket.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import ClientPayloadError, web

from monque_engine import Monque
from monque_engine.management import ApiRequest, ApiResponse, ManagementApi
from monque_engine.store.urls import mask_url

log = logging.getLogger("monque_tui.serve")

API_PREFIX = "/api/"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


async def open_api(url: str, options: dict[str, Any], *, read_only: bool) -> ManagementApi:
    """A ``Monque`` opened for the API alone (no workers, no stale recovery: it only answers
    requests), and the core over it. Raises what ``initialize`` raises."""
    monque = Monque(url, **{**options, "recover_stale_jobs": False})
    await monque.initialize()
    log.info("management API: %s opened%s", mask_url(url), " read-only" if read_only else "")
    return ManagementApi(monque, read_only=read_only)


class ApiHandler:
    """The aiohttp handler for ``/api/{tail}``: an ``ApiRequest`` in, JSON out."""

    def __init__(self, api: ManagementApi, origin: str) -> None:
        self.api = api
        self.origin = origin

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        if (
            request.method not in _SAFE_METHODS
            and request.get("monque_session") is not None
            and request.headers.get("Origin", self.origin).lower() != self.origin
        ):
            return _json(
                ApiResponse(403, {"error": "A write with the session cookie must come from the served origin"})
            )
        try:
            body, oversized = await _read_body(request, self.api.max_body_bytes)
        except (ConnectionError, ClientPayloadError) as error:
            # the client went away mid-body: nothing runs, and no traceback for the log
            log.info(
                "management API: %s %s: the client went away before its body arrived (%s)",
                request.method,
                request.path,
                error,
            )
            raise web.HTTPBadRequest() from None
        except web.RequestPayloadError as error:  # e.g. Content-Encoding: gzip over a body that is not
            said = " ".join(str(getattr(error.__cause__, "message", None) or error).split())
            return _json(ApiResponse(400, {"error": f"{said}: send the body as its Content-Encoding says, or plain"}))
        if oversized:
            return _json(ApiResponse(400, {"error": f"The body is larger than {self.api.max_body_bytes} bytes"}))
        answer = await self.api.handle(
            ApiRequest(
                method=request.method,
                path=request.path,
                query=list(request.query.items()),
                body=body,
                headers=dict(request.headers),
                native=request,
            )
        )
        return _json(answer)


async def _read_body(request: web.Request, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(16 * 1024):
        size += len(chunk)
        if size > limit:
            return b"", True
        chunks.append(chunk)
    return b"".join(chunks), False


def _json(answer: ApiResponse) -> web.Response:
    return web.Response(
        status=answer.status, body=answer.json_bytes(), content_type="application/json", headers=dict(answer.headers)
    )


def add_api_routes(app: web.Application, api: ManagementApi, origin: str) -> None:
    """Every path under ``/api`` to the core, so every answer there is the API's JSON: the
    tail may hold any character a percent-escape decodes to (``.`` alone stops at a newline,
    and ``/api/v1/jobs/%0A`` fell through to aiohttp's plain-text 404)."""
    app.router.add_route("*", API_PREFIX.rstrip("/") + r"{tail:(?:/[\s\S]*)?}", ApiHandler(api, origin))


async def close_api(api: ManagementApi) -> None:
    await api.monque.close()

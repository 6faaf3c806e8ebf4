"""``management_app``: the core as an ASGI application, for Starlette and FastAPI.

    app.mount("/monque", management_app(monque, read_only=False, authorize=...))

Written against the ASGI spec by hand rather than on Starlette: the core then needs only
pydantic, a FastAPI or Starlette app mounts it as it is, and any other ASGI server (or
framework) can serve it too. It reads the body up to the core's limit (a larger one is
refused without reading the rest), and hands ``authorize`` an ``ApiRequest`` whose
``native`` is the ASGI scope (Starlette's ``Request(scope)`` reads it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from ..scheduler.monque import Monque
from .core import ManagementApi
from .inputs import MAX_BODY_BYTES
from .messages import ApiRequest, ApiResponse, Authorize

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class ManagementApp:
    """An ASGI app over a ``ManagementApi``; http requests only (lifespan is acknowledged)."""

    def __init__(self, api: ManagementApi) -> None:
        self.api = api

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        root = scope.get("root_path", "")
        path: str = scope.get("path", "/")
        if root and path.startswith(root):  # Starlette's Mount keeps the prefix in path
            path = path[len(root) :] or "/"
        body, oversized = await _read_body(receive, self.api.max_body_bytes)
        if body is None:  # the client went away before its body arrived: nothing to answer, nothing done
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        if oversized:
            response = ApiResponse(400, {"error": f"The body is larger than {self.api.max_body_bytes} bytes"})
        else:
            request = ApiRequest(
                method=scope.get("method", "GET"),
                path=path,
                query=parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True),
                body=body,
                headers=headers,
                native=scope,
            )
            response = await self.api.handle(request)
        payload = response.json_bytes()
        await send(
            {
                "type": "http.response.start",
                "status": response.status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"cache-control", b"no-store"),
                    *(
                        (key.lower().encode("latin-1"), value.encode("latin-1"))
                        for key, value in response.headers.items()
                    ),
                ],
            }
        )
        # HEAD: the GET's status and headers (its Content-Length too), no body (RFC 9110 9.3.2)
        head = str(scope.get("method", "GET")).upper() == "HEAD"
        await send({"type": "http.response.body", "body": b"" if head else payload})


async def _read_body(receive: Receive, limit: int) -> tuple[bytes | None, bool]:
    """The body and whether it was over ``limit``; None when the client disconnected first
    (a request cut short must not run as if its body were empty: a single-job action takes
    an empty body)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None, False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"", True
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def management_app(
    monque: Monque,
    *,
    read_only: bool = False,
    authorize: Authorize | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> ManagementApp:
    """The management API as an ASGI app over ``monque`` (initialize it first, e.g. in your
    app's lifespan; the app never opens or closes it). ``read_only``: every write is 403
    before any store call. ``authorize(action, request)``: False (or an awaitable of it) is 403."""
    return ManagementApp(ManagementApi(monque, read_only=read_only, authorize=authorize, max_body_bytes=max_body_bytes))

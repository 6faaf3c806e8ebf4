"""The framework-neutral core: one request in, one ``{status, body}`` out.

An adapter (ASGI in ``asgi.py``, aiohttp in ``monque_tui.serve.api``) turns its request into
an ``ApiRequest`` with the path below its mount point, awaits ``ManagementApi.handle``, and
writes the ``ApiResponse`` back. Everything else happens here, in this order:

1. the route (404 / 405 as ``{"error"}``); HEAD runs the GET route (RFC 9110): the answer
   is the GET's, status and headers, and the adapter leaves its body out;
2. read-only: a write is 403 before anything is parsed or read;
3. the input: query and body validated by the route's models (400);
4. ``authorize(action, request)``: False is 403 (upstream's hook);
5. the operation over the ``Monque``; engine errors mapped by ``errors.from_engine``;
6. the response validated by the route's model, so no field outside the contract leaves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from ..scheduler.monque import Monque
from .dto import NoQuery
from .errors import ACTION_DENIED, INTERNAL, READ_DENIED, READ_ONLY, ApiError, forbidden, from_engine, log
from .inputs import MAX_BODY_BYTES, parse_body, parse_model, query_fields
from .messages import ApiRequest, ApiResponse, Authorize, Policy
from .openapi import openapi_document
from .operations import Operations
from .routes import ROUTES, Route, X, match_route

#: The document itself, served beside the routes it describes.
OPENAPI_PATH = f"{X}/openapi.json"


class ManagementApi:
    """Upstream's management API and our own routes over one ``Monque`` (initialized by the caller)."""

    def __init__(
        self,
        monque: Monque,
        *,
        read_only: bool = False,
        authorize: Authorize | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.monque = monque
        self.policy = Policy(read_only, authorize)
        self.max_body_bytes = max_body_bytes
        self.operations = Operations(monque, self.policy)

    @property
    def read_only(self) -> bool:
        return self.policy.read_only

    async def allowed(self, action: str, request: ApiRequest) -> bool:
        """Whether ``action`` may run for ``request``: never a write when read-only, then the hook."""
        return await self.policy.allowed(action, request)

    async def handle(self, request: ApiRequest) -> ApiResponse:
        try:
            if request.path.rstrip("/") == OPENAPI_PATH:
                if request.method.upper() not in ("GET", "HEAD"):
                    raise ApiError(
                        405,
                        f"{request.method.upper()} is not allowed on {OPENAPI_PATH}; use GET or HEAD",
                        {"Allow": "GET, HEAD"},
                    )
                if not await self.allowed("read", request):
                    raise forbidden(READ_DENIED)
                return ApiResponse(200, openapi_document())
            route, params = match_route(request.method, request.path)
            return ApiResponse(200, await self._run(route, params, request))
        except ApiError as error:
            return ApiResponse(error.status, {"error": error.message}, error.headers)
        except Exception as error:  # noqa: BLE001 - no traceback reaches a client; logged by from_engine
            answer = from_engine(error, getattr(self.monque, "_url", None) or "")
            return ApiResponse(answer.status, {"error": answer.message})

    async def _run(self, route: Route, params: dict[str, str], request: ApiRequest) -> dict[str, Any]:
        if route.write and self.read_only:
            raise forbidden(READ_ONLY)
        # A route that takes no query ignores one (a dashboard's cache-buster ``?_=…``), as
        # upstream's routes without an input schema do; one that takes a query refuses a
        # field it does not know, so a typo (``?stauts=``) is not read as "no filter".
        query = NoQuery() if route.query is None else parse_model(route.query, query_fields(request.query), "query")
        body = None
        if route.body is not None:
            body = parse_body(route.body, request.body, self.max_body_bytes)
        elif len(request.body) > self.max_body_bytes:
            raise ApiError(400, f"The body is {len(request.body)} bytes; at most {self.max_body_bytes} are accepted")
        if not await self.allowed(route.action, request):
            raise forbidden(READ_DENIED if route.action == "read" else ACTION_DENIED)
        handler: Callable[..., Awaitable[dict[str, Any]]] = getattr(self.operations, route.handler)
        result = await handler(params=params, query=query, body=body, request=request)
        return _checked(route.response, result)


def _checked(model: type[BaseModel], result: dict[str, Any]) -> dict[str, Any]:
    """The body, validated against the route's response model (strict: no extra field)."""
    try:
        return model.model_validate(result).model_dump(mode="json", exclude_unset=True)
    except ValidationError as error:
        log.error("management API: a response broke its contract (%s): %s", model.__name__, error)
        raise ApiError(500, INTERNAL) from None


__all__ = ["ROUTES", "ApiRequest", "ApiResponse", "Authorize", "ManagementApi"]

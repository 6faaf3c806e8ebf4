"""The management API: upstream Monque's ``/api/v1`` HTTP contract, answered by this engine.

A framework-neutral core (``ManagementApi``: requests in, ``{status, body}`` out, validated
both ways by pydantic models that also generate the OpenAPI document) and an ASGI app for
Starlette / FastAPI (``management_app``). ``monque-tui --serve`` serves the same core through
aiohttp (``monque_tui.serve.api``). ADR 0021.

pydantic is an optional extra (``api``; ``serve`` brings it too): the engine itself never
needs it, so it is imported here, where a missing extra is one clear line.
"""

from __future__ import annotations

try:
    import pydantic  # noqa: F401 - only to say which extra is missing
except ImportError:  # pragma: no cover - exercised by tests/test_management_extra.py in a subprocess
    raise ImportError(
        "monque_engine.management needs the api extra (pydantic): pip install 'monque-tui[api]'"
    ) from None

from .asgi import management_app
from .core import ManagementApi
from .messages import ApiRequest, ApiResponse, Authorize
from .openapi import openapi_document

__all__ = ["ApiRequest", "ApiResponse", "Authorize", "ManagementApi", "management_app", "openapi_document"]

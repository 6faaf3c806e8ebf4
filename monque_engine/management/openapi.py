"""The OpenAPI 3.1 document, written from the route table and the pydantic models.

Shaped as upstream's generator (oRPC's ``OpenAPIGenerator`` over zod 4) writes it, so our
document's 13 upstream operations equal those of upstream's ``openapi.json``: models that
are components are referenced (``#/components/schemas/Name``), every other nested model is
inlined, pydantic's ``title`` and the ``default`` of an optional field are dropped, query
fields become parameters (``allowEmptyValue``, ``allowReserved``; a list field
``deepObject``). Our own routes follow the same rules under ``/api/x/v1``.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from pydantic import BaseModel

from ..version import __version__
from . import dto, dto_ours
from .routes import ROUTES, Route
from .types import JOB_ID_SCHEMA

ERROR_REF = {"$ref": "#/components/schemas/ManagementError"}
#: Upstream's components (``src/schemas/registry.ts``), in its order, then ours.
COMPONENTS: tuple[type[BaseModel], ...] = (
    dto.Capabilities,
    dto.Job,
    dto.JobCursorPage,
    dto.JobSelector,
    dto.BulkActionResult,
    dto.DeleteJob,
    dto.ManagementError,
    dto.QueueStats,
    dto.QueueViewSummaryList,
    dto.RescheduleJobRequest,
    dto.SchedulerHealth,
    dto_ours.XSelector,
    dto_ours.XBoundedSelector,
    dto_ours.XBulkCount,
    dto_ours.XErrorGroupList,
    dto_ours.XAttemptList,
    dto_ours.XInstanceList,
    dto_ours.XPausedList,
    dto_ours.XQueueName,
    dto_ours.XPauseResult,
    dto_ours.XStopRequest,
    dto_ours.XJobRun,
)
_NAMES = frozenset(model.__name__ for model in COMPONENTS)
_REF = "#/$defs/{model}"


def _clean(node: Any, defs: dict[str, Any]) -> Any:
    """pydantic's schema in upstream's shape (see the module docstring)."""
    if isinstance(node, list):
        return [_clean(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in _NAMES:
            return {"$ref": f"#/components/schemas/{name}"}
        return _clean(defs[name], defs)
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "default", "$defs"):
            continue
        if key == "properties":
            cleaned[key] = {name: _clean(schema, defs) for name, schema in value.items()}
        else:
            cleaned[key] = _clean(value, defs)
    return cleaned


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s own schema: nested components referenced, other nested models inlined."""
    raw = model.model_json_schema(ref_template=_REF, mode="serialization")
    defs = raw.get("$defs", {})
    return _clean({key: value for key, value in raw.items() if key != "$defs"}, defs)  # type: ignore[no-any-return]


def _json_body(model: type[BaseModel]) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}


def _path_schema(route: Route, segment: str) -> dict[str, Any]:
    """Upstream's routes keep upstream's plain string; ours state the id's form."""
    return dict(JOB_ID_SCHEMA) if segment == "{id}" and not route.upstream else {"type": "string"}


def _parameters(route: Route) -> list[dict[str, Any]]:
    parameters: list[dict[str, Any]] = [
        {"name": segment[1:-1], "in": "path", "required": True, "schema": _path_schema(route, segment)}
        for segment in route.segments
        if segment.startswith("{")
    ]
    if route.query is not None:
        for name, schema in model_schema(route.query).get("properties", {}).items():
            parameter: dict[str, Any] = {"name": name, "in": "query", "schema": schema}
            if "anyOf" in schema or schema.get("type") in ("array", "object"):
                parameter.update(style="deepObject", explode=True)
            if route.upstream:  # as upstream's generator writes them; ours refuse an empty value
                parameter.update(allowEmptyValue=True, allowReserved=True)
            else:
                parameter.update(allowReserved=True)
            parameters.append(parameter)
    return parameters


def _operation(route: Route) -> dict[str, Any]:
    operation: dict[str, Any] = {"operationId": route.operation_id}
    if route.summary is not None:
        operation["summary"] = route.summary
    parameters = _parameters(route)
    if parameters:
        operation["parameters"] = parameters
    if route.body is not None:
        operation["requestBody"] = {"required": True, "content": _json_body(route.body)}
    elif route.any_body:
        operation["requestBody"] = {"required": False, "content": {}}
    responses: dict[str, Any] = {"200": {"description": "Successful response", "content": _json_body(route.response)}}
    for status in route.errors:
        responses[str(status)] = {"description": str(status), "content": {"application/json": {"schema": ERROR_REF}}}
    operation["responses"] = responses
    return operation


@cache
def _document() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "info": {
            "title": "Monque Management API",
            "version": __version__,
            "description": (
                "Upstream Monque's management API (/api/v1, @monque/management 0.2.2) answered by Monque for "
                'Python, and its own routes under /api/x/v1. Errors are {"error": "message"}.'
            ),
        },
        "openapi": "3.1.1",
        "components": {"schemas": {model.__name__: model_schema(model) for model in COMPONENTS}},
        "paths": paths,
    }


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (a fresh copy: the caller may change it)."""
    return copy.deepcopy(_document())

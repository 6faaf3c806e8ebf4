"""Our OpenAPI document against upstream's ``openapi.json`` (issue 39): the 13 upstream
operations equal field for field (paths, methods, parameters, request bodies, responses,
operationIds) and so do the components they use; our own routes stay under ``/api/x/v1``
with components of their own, and the whole document is valid JSON Schema where it holds one."""

from __future__ import annotations

from typing import Any

from api_support import upstream_document
from jsonschema import Draft202012Validator

from monque_engine.management import openapi_document
from monque_engine.management.routes import UPSTREAM_OPERATIONS

THIRTEEN = {
    "getSchedulerHealth",
    "getCapabilities",
    "listQueueViews",
    "listJobs",
    "getJobStats",
    "getJob",
    "cancelJob",
    "retryJob",
    "rescheduleJob",
    "deleteJob",
    "cancelJobs",
    "retryJobs",
    "deleteJobs",
}


def _operations(document: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {
        operation["operationId"]: (path, method, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }


def test_the_thirteen_operations_equal_upstreams() -> None:
    ours, theirs = _operations(openapi_document()), _operations(upstream_document())
    assert set(theirs) == THIRTEEN == set(UPSTREAM_OPERATIONS)
    for operation_id, (path, method, operation) in theirs.items():
        assert ours[operation_id][:2] == (path, method), operation_id
        assert ours[operation_id][2] == operation, operation_id


def test_upstreams_components_equal_ours() -> None:
    ours = openapi_document()["components"]["schemas"]
    for name, schema in upstream_document()["components"]["schemas"].items():
        assert ours[name] == schema, name


def test_our_routes_are_under_our_prefix_with_components_of_our_own() -> None:
    document = openapi_document()
    upstream = upstream_document()
    for path in document["paths"]:
        assert path in upstream["paths"] or path.startswith("/api/x/v1/"), path
    for name in document["components"]["schemas"]:
        assert name in upstream["components"]["schemas"] or name.startswith("X"), name
    assert document["openapi"] == upstream["openapi"] == "3.1.1"


def test_every_component_is_a_valid_schema() -> None:
    for name, schema in openapi_document()["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema), name


_SAMPLES = [
    "email",
    "a\ufeffb",
    "a b",
    " x ",
    "",
    " ",
    "\t",
    "a\nb",
    "a\x00",
    "a\x85b",
    "é-ü",
    "x" * 300,
    "a\u2028",
    "1",
]


def test_our_documented_text_patterns_agree_with_the_rules() -> None:
    """Our own routes' document states what the rules accept (schemathesis, generating from
    it, found every blank filter, short id and spaced name it allowed refused by the server):
    the patterns are held to the rules themselves, sample by sample."""
    import re

    from monque_engine.errors import MonqueError
    from monque_engine.management.types import JOB_ID_SCHEMA
    from monque_engine.selector_rules import check_filter_value
    from monque_engine.validation import normalize_job_id, validate_job_name

    document = openapi_document()
    selector = document["components"]["schemas"]["XSelector"]["properties"]["name"]
    name = document["components"]["schemas"]["XQueueName"]["properties"]["name"]

    def documented(schema: dict[str, Any], value: str) -> bool:
        fits = len(value) >= schema.get("minLength", 0) and len(value) <= schema.get("maxLength", len(value))
        return fits and re.search(schema["pattern"], value) is not None

    def accepted(check: Any, value: str) -> bool:
        try:
            check(value)
        except (MonqueError, ValueError, TypeError):
            return False
        return True

    for value in _SAMPLES:
        assert documented(selector, value) == accepted(lambda v: check_filter_value(v, "name"), value), repr(value)
        assert documented(name, value) == accepted(validate_job_name, value), repr(value)
    for value in ("6b1570606fd6b1ad1327bf01", "6B1570606FD6B1AD1327BF01", "0", "6b1570606fd6b1ad1327bf0g", ""):
        assert (re.search(JOB_ID_SCHEMA["pattern"], value) is not None) == (normalize_job_id(value) is not None)
    from monque_engine.payload_filter import parse_terms

    term = document["components"]["schemas"]["XSelector"]["properties"]["data"]["items"]["pattern"]
    for text in ("data.a missing", " DATA.a = 1", "data.a.b exists, data.c = x", "0", "", "x = 1", "data.", "data. a"):
        given = accepted(parse_terms, text) and bool(parse_terms(text))  # a blank item is refused as blank
        assert (re.search(term, text) is not None) == given, repr(text)
    paths = document["paths"]
    assert paths["/api/x/v1/jobs/{id}/run"]["get"]["parameters"][0]["schema"] == JOB_ID_SCHEMA
    assert paths["/api/v1/jobs/{id}"]["get"]["parameters"][0]["schema"] == {"type": "string"}  # upstream's, as is

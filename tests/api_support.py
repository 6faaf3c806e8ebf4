"""Shared helpers for the management API's tests (tests/api/).

``ApiClient`` drives the framework-neutral core (``ManagementApi.handle``) and checks every
response it gets against the OpenAPI documents: a response of one of upstream's 13
operations against the component schemas of upstream's own ``openapi.json`` (a copy in
tests/fixtures/upstream-management/, ISC, from ../shared/upstream-management/), a response
of our own routes against our document. So every response any API test produces is
validated by a JSON Schema validator, not only those a test looks at.

``mongo_monque`` is a Monque on the MongoDB store whose collection is mongomock's
evaluator (``test_mongo_evaluator``): the MongoDB store's queries, with no server.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from monque_engine import Job, Monque
from monque_engine.management import ApiRequest, ApiResponse, ManagementApi, openapi_document
from monque_engine.management.core import OPENAPI_PATH
from monque_engine.management.routes import ROUTES, match_route

UPSTREAM_OPENAPI = Path(__file__).parent / "fixtures" / "upstream-management" / "openapi.json"
#: What JavaScript's toISOString writes, the only form our responses use.
#: Every write route with a body it accepts: what a read-only surface must refuse, one
#: request each. ``write_requests()`` checks it against the route table, so a new write
#: route without a sample here fails the read-only tests instead of going untested.
_WRITE_BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/v1/jobs/{id}/actions/cancel"): None,
    ("POST", "/api/v1/jobs/{id}/actions/retry"): None,
    ("POST", "/api/v1/jobs/{id}/actions/reschedule"): {"nextRunAt": "2031-01-01T00:00:00Z"},
    ("DELETE", "/api/v1/jobs/{id}"): None,
    ("POST", "/api/v1/jobs/actions/cancel"): {},
    ("POST", "/api/v1/jobs/actions/retry"): {},
    ("POST", "/api/v1/jobs/actions/delete"): {},
    ("POST", "/api/x/v1/jobs/actions/cancel"): {"asOf": "1.1.0000000000000000"},
    ("POST", "/api/x/v1/jobs/actions/retry"): {"asOf": "1.1.0000000000000000"},
    ("POST", "/api/x/v1/jobs/actions/delete"): {"asOf": "1.1.0000000000000000"},
    ("POST", "/api/x/v1/jobs/actions/stop"): {"asOf": "1.1.0000000000000000"},
    ("POST", "/api/x/v1/jobs/{id}/actions/stop"): {},
    ("POST", "/api/x/v1/queues/actions/pause"): {"name": "email"},
    ("POST", "/api/x/v1/queues/actions/resume"): {"name": "email"},
}


def write_requests() -> list[tuple[str, str, Any]]:
    """(method, path with ``{id}``, body) for every write route of the table."""
    writes = [(route.method, route.path) for route in ROUTES if route.write]
    assert sorted(writes) == sorted(_WRITE_BODIES), "a write route has no sample body in api_support"
    return [(method, path, _WRITE_BODIES[method, path]) for method, path in writes]


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
_FORMATS = FormatChecker(formats=())
_FORMATS.checks("date-time")(lambda value: not isinstance(value, str) or bool(_ISO.match(value)))


@cache
def upstream_document() -> dict[str, Any]:
    return json.loads(UPSTREAM_OPENAPI.read_text())  # type: ignore[no-any-return]


def _validator(document: dict[str, Any], ref: Any) -> Draft202012Validator:
    schema = {"components": document["components"], **ref}
    return Draft202012Validator(schema, format_checker=_FORMATS)


def response_schema(document: dict[str, Any], path: str, method: str, status: int) -> dict[str, Any]:
    operation = document["paths"][path][method.lower()]
    response = operation["responses"].get(str(status))
    if response is None:  # upstream lists no error for its reads; their body is still the error body
        assert status != 200, f"{method} {path} has no 200 response"
        return {"$ref": "#/components/schemas/ManagementError"}
    return response["content"]["application/json"]["schema"]  # type: ignore[no-any-return]


def check_response(method: str, path: str, answer: ApiResponse) -> None:
    """``answer`` against the document its route belongs to (upstream's for the 13 operations)."""
    if path == OPENAPI_PATH and answer.status == 200:
        assert answer.body == openapi_document()
        return
    try:
        route, _ = match_route(method, path)
    except Exception:  # noqa: BLE001 - no route: a 404/405, whose body is the error body
        assert set(answer.body) == {"error"}, answer.body
        return
    document = upstream_document() if route.upstream else openapi_document()
    schema = response_schema(document, route.path, route.method, answer.status)
    errors = sorted(_validator(document, schema).iter_errors(answer.body), key=str)
    assert not errors, f"{method} {path} {answer.status}: {errors[0].message} in {answer.body}"
    if answer.status != 200:
        assert answer.body["error"] and "Traceback" not in answer.body["error"], answer.body


class ApiClient:
    """Calls the core as an adapter would; every response is schema-checked (``check_response``)."""

    def __init__(self, api: ManagementApi) -> None:
        self.api = api
        self.seen: list[tuple[str, str, int]] = []

    async def call(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]] | dict[str, str] = (),
        body: Any = None,
        *,
        raw: bytes | None = None,
    ) -> ApiResponse:
        pairs = list(query.items()) if isinstance(query, dict) else list(query)
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        answer = await self.api.handle(ApiRequest(method, path, pairs, data))
        check_response(method, path, answer)
        self.seen.append((method, path, answer.status))
        return answer

    async def ok(self, method: str, path: str, query: Any = (), body: Any = None) -> dict[str, Any]:
        answer = await self.call(method, path, query, body)
        assert answer.status == 200, (method, path, answer.status, answer.body)
        return answer.body


async def mongo_monque(**options: Any) -> Monque:
    """A Monque on the MongoDB store over mongomock's evaluator (no server; not opened: the
    evaluator's collection stands in for the one ``initialize`` would open). The store's side
    collections (instances, paused names, outcome and error counters) are the fleet tests'
    mongomock-backed adapter, so every route reaches them."""
    from test_mongo_fleet import fleet_store

    store, _adapter, _database = fleet_store()
    monque = Monque(store, recover_stale_jobs=False, **options)
    monque._initialized = True  # the collection is in place; there is no server to open
    return monque


@asynccontextmanager
async def seeded_monque(kind: str, directory: Path, seed: Sequence[Job]) -> AsyncIterator[Monque]:
    """A Monque on ``kind`` ("sqlite": a real file in ``directory``; "mongodb": ``mongo_monque``)
    holding ``seed``: what the API tests' store fixtures are parametrized over."""
    if kind == "sqlite":
        monque = Monque(f"sqlite:///{directory}/jobs.db", recover_stale_jobs=False)
        await monque.initialize()
    else:
        monque = await mongo_monque()
    await monque.import_jobs(list(seed))
    try:
        yield monque
    finally:
        if kind == "sqlite":
            await monque.close()


async def snapshot(monque: Monque) -> list[tuple[Any, ...]]:
    """Every job's fields that any action changes: to prove a refused request changed nothing."""
    page = await monque.get_jobs(limit=1000)
    return sorted(
        (job.id, str(job.status), job.next_run_at_ms, job.updated_at_ms, job.fail_count, job.data and str(job.data))
        for job in page
    )

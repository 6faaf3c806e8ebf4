"""The management API's core over both stores: upstream's 13 operations, our own routes,
each error code, bad input, read-only, ``authorize`` refusals and pagination while jobs are
added (issue 39). SQLite is a real file; MongoDB is the MongoDB store over mongomock's
evaluator (no server), as the rest of the suite's MongoDB tests. Every response is checked
against the OpenAPI schemas by ``ApiClient`` (api_support)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from api_support import ApiClient, seeded_monque, snapshot, write_requests

from monque_engine import Job, JobStatus, Monque
from monque_engine.errorgroups import error_group_key
from monque_engine.management import ApiRequest, ManagementApi
from monque_engine.timeutil import now_ms

T0 = 1_780_000_000_000  # 2026-05-28: instants the seed sets explicitly


GROUP = error_group_key("email", "ValueError", "boom")


def oid(n: int) -> str:
    return f"65f0{n:020x}"


def _job(n: int, name: str, status: JobStatus, **fields: Any) -> Job:
    at = T0 + n * 1000
    return Job(
        id=oid(n),
        name=name,
        data={"n": n},
        status=status,
        next_run_at_ms=at,
        created_at_ms=at,
        updated_at_ms=at,
        **fields,
    )


SEED = [
    *(_job(n, "email", JobStatus.PENDING) for n in range(1, 7)),
    *(
        _job(n, "email", JobStatus.FAILED, fail_count=3, fail_reason="boom", error_type="ValueError", error_group=GROUP)
        for n in range(7, 11)
    ),
    _job(11, "report", JobStatus.COMPLETED, repeat_interval="0 * * * *", unique_key="hourly"),
    _job(12, "report", JobStatus.COMPLETED),
    _job(
        13,
        "report",
        JobStatus.PROCESSING,
        claimed_by="w1",
        locked_at_ms=T0,
        last_heartbeat_ms=T0,
        heartbeat_interval_ms=30000,
    ),
    _job(14, "sms", JobStatus.CANCELLED),
]


@pytest.fixture(params=["sqlite", "mongodb"])
async def monque(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[Monque]:
    async with seeded_monque(request.param, tmp_path, SEED) as m:
        yield m


@pytest.fixture
def client(monque: Monque) -> ApiClient:
    return ApiClient(ManagementApi(monque))


# -- upstream's reads -----------------------------------------------------------------------------
async def test_health_capabilities_and_queue_views(client: ApiClient) -> None:
    assert await client.ok("GET", "/api/v1/health") == {"status": "ok", "scheduler": {"healthy": True}}
    caps = await client.ok("GET", "/api/v1/capabilities")
    assert caps == {"readOnly": False, "actions": dict.fromkeys(caps["actions"], True)}
    assert len(caps["actions"]) == 8
    views = {view["name"]: view for view in (await client.ok("GET", "/api/v1/queue-views"))["queueViews"]}
    assert set(views) == {"email", "report", "sms"}
    assert views["email"]["stats"]["failed"] == 4 and views["email"]["stats"]["pending"] == 6
    assert views["email"]["worker"] is None and views["email"]["hasPersistedJobs"] is True


async def test_a_job_as_upstream_writes_it(client: ApiClient) -> None:
    job = await client.ok("GET", f"/api/v1/jobs/{oid(13)}")
    assert job == {
        "id": oid(13),
        "name": "report",
        "status": "processing",
        "payload": {"n": 13},
        "nextRunAt": "2026-05-28T20:26:53.000Z",
        "lockedAt": "2026-05-28T20:26:40.000Z",
        "claimedBy": "w1",
        "lastHeartbeat": "2026-05-28T20:26:40.000Z",
        "heartbeatInterval": 30000,
        "failCount": 0,
        "failureReason": None,
        "createdAt": "2026-05-28T20:26:53.000Z",
        "updatedAt": "2026-05-28T20:26:53.000Z",
    }
    recurring = await client.ok("GET", f"/api/v1/jobs/{oid(11).upper()}")  # any case, as an ObjectId
    assert recurring["repeatInterval"] == "0 * * * *" and recurring["uniqueKey"] == "hourly"
    assert "heartbeatInterval" not in recurring  # optional fields are absent, never null


async def test_list_filters_sort_and_stats(client: ApiClient) -> None:
    page = await client.ok("GET", "/api/v1/jobs")
    assert [job["id"] for job in page["jobs"]] == [oid(n) for n in range(14, 0, -1)]  # newest created first
    assert page["hasNextPage"] is False and page["hasPreviousPage"] is False
    failed = await client.ok("GET", "/api/v1/jobs", [("name", "email"), ("status", "failed")])
    assert [job["id"] for job in failed["jobs"]] == [oid(n) for n in range(10, 6, -1)]
    two = await client.ok("GET", "/api/v1/jobs", [("status[]", "completed"), ("status[]", "cancelled")])
    assert {job["id"] for job in two["jobs"]} == {oid(11), oid(12), oid(14)}
    indexed = await client.ok("GET", "/api/v1/jobs", [("status[0]", "processing")])
    assert [job["id"] for job in indexed["jobs"]] == [oid(13)]
    since = await client.ok(
        "GET",
        "/api/v1/jobs",
        {"updatedAtFrom": "2026-05-28T20:26:52.000Z", "sortBy": "identifier", "sortDirection": "asc"},
    )
    assert [job["id"] for job in since["jobs"]] == [oid(12), oid(13), oid(14)]
    stats = await client.ok("GET", "/api/v1/jobs/stats")
    assert (stats["total"], stats["pending"], stats["failed"], stats["cancelled"]) == (14, 6, 4, 1)
    assert (await client.ok("GET", "/api/v1/jobs/stats", {"name": "report"}))["total"] == 3


async def test_pages_follow_their_cursor_while_jobs_are_added(client: ApiClient, monque: Monque) -> None:
    """Five pages of 3, newest first; jobs enqueued between pages are newer than the cursor,
    so they never show up later and no seeded job is skipped or repeated."""
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        query = {"limit": "3"} | ({"cursor": cursor} if cursor else {})
        page = await client.ok("GET", "/api/v1/jobs", query)
        pages += 1
        seen += [job["id"] for job in page["jobs"]]
        assert page["hasPreviousPage"] is (pages > 1)
        await monque.enqueue("email", {"added": pages})  # arrives between pages
        if not page["hasNextPage"]:
            break
        cursor = page["cursor"]
    assert pages == 5
    assert seen == [oid(n) for n in range(14, 0, -1)]
    limited = await client.ok("GET", "/api/v1/jobs", {"limit": "1000"})
    assert len(limited["jobs"]) == 19 and limited["hasNextPage"] is False  # 100 at most; 19 here


# -- upstream's writes ----------------------------------------------------------------------------
async def test_single_job_actions(client: ApiClient, monque: Monque) -> None:
    cancelled = await client.ok("POST", f"/api/v1/jobs/{oid(1)}/actions/cancel")
    assert cancelled["status"] == "cancelled"
    retried = await client.ok("POST", f"/api/v1/jobs/{oid(7)}/actions/retry")
    assert retried["status"] == "pending" and retried["failureReason"] is None
    moved = await client.ok(
        "POST", f"/api/v1/jobs/{oid(2)}/actions/reschedule", body={"nextRunAt": "2031-01-01T01:00:00+01:00"}
    )
    assert moved["nextRunAt"] == "2031-01-01T00:00:00.000Z"
    assert await client.ok("DELETE", f"/api/v1/jobs/{oid(3)}") == {"deleted": True}
    assert await monque.get_job(oid(3)) is None
    assert (await client.call("DELETE", f"/api/v1/jobs/{oid(3)}")).status == 404


async def test_state_conflicts_are_409(client: ApiClient, monque: Monque) -> None:
    before = await snapshot(monque)
    conflict = await client.call("POST", f"/api/v1/jobs/{oid(13)}/actions/cancel")  # processing
    assert conflict.status == 409 and "processing" in conflict.body["error"]
    assert (await client.call("POST", f"/api/v1/jobs/{oid(1)}/actions/retry")).status == 409  # pending
    assert (
        await client.call(
            "POST", f"/api/v1/jobs/{oid(11)}/actions/reschedule", body={"nextRunAt": "2031-01-01T00:00:00Z"}
        )
    ).status == 409
    assert await snapshot(monque) == before


async def test_bulk_actions_and_the_empty_selector(client: ApiClient, monque: Monque) -> None:
    assert await client.ok("POST", "/api/v1/jobs/actions/retry", body={"name": "email", "status": "failed"}) == {
        "count": 4,
        "errors": [],
    }
    assert (await client.ok("POST", "/api/v1/jobs/actions/cancel", body={"newerThan": "2026-05-28T20:26:47.500Z"}))[
        "count"
    ] == 3  # jobs 8, 9 and 10 (pending again since the retry) were created after 20:26:47.5
    deleted = await client.ok("POST", "/api/v1/jobs/actions/delete", body={})  # upstream: {} is every job
    assert deleted["count"] == 14
    assert (await monque.get_queue_stats()).total == 0


# -- bad input: 400, nothing changed ------------------------------------------------------------------
BAD_INPUT: list[tuple[str, str, Any, Any, str]] = [
    ("GET", "/api/v1/jobs", {"status": "bogus"}, None, 'Invalid status "bogus"'),
    ("GET", "/api/v1/jobs", {"cursor": "Fnot-a-cursor"}, None, "Invalid cursor"),
    ("GET", "/api/v1/jobs", {"cursor": ""}, None, "cursor"),
    ("GET", "/api/v1/jobs", {"createdAtFrom": "yesterday"}, None, "not an ISO 8601"),
    ("GET", "/api/v1/jobs", {"updatedAtTo": "2026-05-28T10:00:00"}, None, "no offset"),
    ("GET", "/api/v1/jobs", {"limit": "0"}, None, "Invalid limit"),
    ("GET", "/api/v1/jobs", {"limit": "ten"}, None, "Invalid limit"),
    ("GET", "/api/v1/jobs", {"sortBy": "name"}, None, "Invalid sortBy"),
    ("GET", "/api/v1/jobs", {"color": "red"}, None, 'Unknown query field "color"'),
    ("GET", "/api/v1/jobs", [("name", "a"), ("name", "b")], None, "more than once"),
    ("GET", "/api/v1/jobs", {"name": ""}, None, "name is empty"),
    ("GET", "/api/v1/jobs", {"name": "   "}, None, "only whitespace"),
    ("GET", "/api/v1/jobs", {"name": "a\nb"}, None, "control character"),
    ("GET", "/api/v1/jobs/stats", {"name": " "}, None, "only whitespace"),
    ("GET", "/api/v1/jobs/stats", {"x": "1"}, None, 'Unknown query field "x"'),
    ("GET", "/api/v1/jobs/not-an-id", {}, None, "Invalid job id"),
    ("POST", "/api/v1/jobs/123/actions/cancel", {}, None, "Invalid job id"),
    ("POST", "/api/v1/jobs/{id}/actions/reschedule", {}, {"nextRunAt": "tomorrow"}, "not an ISO 8601"),
    (
        "POST",
        "/api/v1/jobs/{id}/actions/reschedule",
        {},
        {"nextRunAt": "2031-01-01T00:00:00Z", "why": 1},
        'Unknown body field "why"',
    ),
    ("POST", "/api/v1/jobs/{id}/actions/reschedule", {}, {}, '"nextRunAt" is required'),
    ("POST", "/api/v1/jobs/{id}/actions/reschedule", {}, b"{not json", "not JSON"),
    ("POST", "/api/v1/jobs/actions/delete", {}, b"", "A JSON body is required"),
    ("POST", "/api/v1/jobs/actions/delete", {}, b"[]", "must be a JSON object"),
    ("POST", "/api/v1/jobs/actions/delete", {}, {"name": ""}, "name is empty"),
    ("POST", "/api/v1/jobs/actions/delete", {}, {"name": None}, "name"),
    ("POST", "/api/v1/jobs/actions/delete", {}, {"status": []}, "status"),
    ("POST", "/api/v1/jobs/actions/delete", {}, {"status": "gone"}, 'Invalid status "gone"'),
    ("POST", "/api/v1/jobs/actions/cancel", {}, {"olderThan": "2026-13-45T00:00:00Z"}, "not an ISO 8601"),
    ("POST", "/api/v1/jobs/actions/retry", {}, {"selector": {}}, 'Unknown body field "selector"'),
    ("POST", "/api/v1/jobs/actions/delete", {}, b'{"name": "x"' + b" " * 70_000 + b"}", "at most 65536"),
    ("POST", "/api/x/v1/jobs/actions/delete", {}, {"name": "email"}, '"asOf" is required'),
    ("POST", "/api/x/v1/jobs/actions/delete", {}, {"asOf": "12"}, "Invalid asOf"),
    ("POST", "/api/x/v1/jobs/actions/delete/count", {}, {"errorGroup": " "}, "errorGroup"),
    ("POST", "/api/x/v1/queues/actions/pause", {}, {"name": ""}, "name"),
    ("GET", "/api/x/v1/error-groups", {"limit": "-1"}, None, "Invalid limit"),
    # found by the probe of the served API (schemathesis and by hand): each was accepted or a 500
    ("GET", "/api/v1/jobs", {"name[]": "email"}, None, "takes one value, not an array"),  # was "more than once"
    ("GET", "/api/v1/jobs", {"limit": "5_0"}, None, "Invalid limit"),
    ("GET", "/api/v1/jobs", {"limit": "\uff15"}, None, "Invalid limit"),  # a full-width 5: int() reads it
    ("GET", "/api/x/v1/error-groups", {"limit": "1_0"}, None, "Invalid limit"),
    ("POST", "/api/x/v1/jobs/actions/delete/count", {}, b"[" * 30_000 + b"]" * 30_000, "nested too deeply"),
    ("POST", "/api/v1/jobs/actions/delete", {}, b'{"name": ' + b"[" * 30_000 + b"]" * 30_000 + b"}", "too deeply"),
    ("POST", "/api/v1/jobs/actions/delete", {}, b'{"name": "email", "name": "report"}', "more than once"),
    ("POST", "/api/x/v1/jobs/actions/delete/count", {}, {"data": ["data.a = " + "[" * 30_000]}, "array or object"),
]


async def paused_names(monque: Monque) -> Any:
    """Paused names (on MongoDB, the fake's side collection)."""
    return await monque.paused()


@pytest.mark.parametrize(("method", "path", "query", "body", "says"), BAD_INPUT, ids=[row[4] for row in BAD_INPUT])
async def test_bad_input_is_400_and_changes_nothing(
    client: ApiClient, monque: Monque, method: str, path: str, query: Any, body: Any, says: str
) -> None:
    before = await snapshot(monque)
    paused = await paused_names(monque)
    raw = body if isinstance(body, bytes) else None
    answer = await client.call(method, path.replace("{id}", oid(1)), query, None if raw is not None else body, raw=raw)
    assert answer.status == 400, answer.body
    assert says in answer.body["error"] and "\n" not in answer.body["error"], answer.body
    assert await snapshot(monque) == before and await paused_names(monque) == paused


async def test_unknown_routes_and_methods(client: ApiClient) -> None:
    assert (await client.call("GET", f"/api/v1/jobs/{oid(99)}")).status == 404
    assert (await client.call("GET", "/api/v2/jobs")).status == 404
    wrong = await client.call("PUT", "/api/v1/jobs")
    assert wrong.status == 405 and "GET" in wrong.body["error"]
    assert wrong.headers == {"Allow": "GET, HEAD"}  # RFC 9110: a 405 lists what is allowed
    assert (await client.call("PUT", f"/api/v1/jobs/{oid(1)}")).headers == {"Allow": "DELETE, GET, HEAD"}
    # the literal path wins: /jobs/stats is not also /jobs/{id} with the id "stats"
    for method in ("OPTIONS", "DELETE"):
        wrong = await client.call(method, "/api/v1/jobs/stats")
        assert (wrong.status, wrong.headers) == (405, {"Allow": "GET, HEAD"}), wrong.body
    wrong = await client.call("POST", "/api/x/v1/openapi.json")  # a GET route: 405, as every other, not 404
    assert wrong.status == 405 and "use GET" in wrong.body["error"]


@pytest.mark.parametrize("position", [2**63, -(2**63) - 1, 10**19 - 1])
async def test_an_as_of_out_of_the_stores_range_is_400_not_500(
    client: ApiClient, monque: Monque, position: int
) -> None:
    """The check binds a token to its action, selection and store, not its numbers to a real
    count (the key is no secret): a forged position past 64 bits reached SQLite as an OverflowError."""
    from monque_engine.management.bounds import _check

    selection = {"name": "email"}
    token = f"{position}.1.{_check('cancel', selection, position, 1, monque.store.position_scope)}"
    answer = await client.call("POST", "/api/x/v1/jobs/actions/cancel", body={**selection, "asOf": token})
    assert answer.status == 400 and "out of range" in answer.body["error"], answer.body


#: Inputs far longer than any sensible value, in each place an error echoes what it refuses.
_HUGE = "x" * 40_000
HUGE_INPUT: list[tuple[str, str, Any, Any]] = [
    ("GET", "/api/v1/jobs", {"limit": _HUGE}, None),
    ("GET", "/api/v1/jobs", {"sortBy": _HUGE}, None),
    ("GET", "/api/v1/jobs", {"status": [_HUGE, "x"]}, None),
    ("GET", "/api/v1/jobs", {"createdAtFrom": _HUGE}, None),
    ("GET", "/api/v1/jobs", {"createdAtFrom": "T" + _HUGE}, None),
    ("GET", f"/api/v1/jobs/{_HUGE}", {}, None),
    ("POST", "/api/v1/jobs/actions/delete", {}, {"olderThan": "T" + _HUGE[:60_000]}),
    ("POST", "/api/x/v1/jobs/actions/delete/count", {}, {"data": ["data." + "a." * 20_000 + "b = 1"]}),
    ("POST", "/api/x/v1/jobs/actions/delete/count", {}, {"data": [_HUGE]}),
    ("POST", "/api/x/v1/jobs/actions/delete/count", {}, {"data": ["data.a = " + "9" * 4_000]}),
    ("POST", "/api/x/v1/jobs/actions/delete/count", {}, {"data": [f"data.-{_HUGE} = 1"]}),
]


@pytest.mark.parametrize(("method", "path", "query", "body"), HUGE_INPUT)
async def test_an_error_echoes_a_huge_input_cut_short(
    client: ApiClient, method: str, path: str, query: Any, body: Any
) -> None:
    pairs = [("status", value) for value in query["status"]] if "status" in query else query
    answer = await client.call(method, path, pairs, body)
    assert answer.status == 400, answer.body
    assert len(answer.body["error"]) < 400 and "\n" not in answer.body["error"], answer.body["error"][:500]


async def test_an_unexpected_error_is_500_without_a_traceback(
    client: ApiClient, monque: Monque, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire at /secret/path")

    monque.get_queue_stats = broken  # type: ignore[method-assign]
    answer = await client.call("GET", "/api/v1/jobs/stats")
    assert answer.status == 500 and "secret" not in answer.body["error"]
    assert "disk on fire" in caplog.text  # the server's log has it


async def test_a_store_error_is_its_own_line_with_the_password_masked(
    client: ApiClient, monque: Monque, caplog: pytest.LogCaptureFixture
) -> None:
    """The store's failures (unreachable, locked) answer the engine's one line, as the
    command line prints it, with a MongoDB password masked in the answer and the log."""
    from monque_engine.errors import ConnectionError as StoreConnectionError
    from monque_engine.management.errors import from_engine

    url = "mongodb://admin:S3cretPw@db.example:27017/jobs"

    async def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise StoreConnectionError(f"Cannot reach MongoDB at {url} within 5 s: db.example:27017: timed out")

    monque.get_queue_stats = unreachable  # type: ignore[method-assign]
    answer = await client.call("GET", "/api/v1/jobs/stats")
    assert answer.status == 500 and "Cannot reach MongoDB at mongodb://admin:***@db.example" in answer.body["error"]
    assert "S3cretPw" not in answer.body["error"] and "S3cretPw" not in caplog.text and "Traceback" not in caplog.text
    quoted = from_engine(StoreConnectionError("auth failed: password S3cretPw was refused"), url)  # a driver's echo
    assert "S3cretPw" not in quoted.message


# -- read-only and authorize ------------------------------------------------------------------------
async def test_read_only_refuses_every_write_before_any_store_call(monque: Monque) -> None:
    client = ApiClient(ManagementApi(monque, read_only=True))
    caps = await client.ok("GET", "/api/v1/capabilities")
    assert caps["readOnly"] is True and caps["actions"] == {"read": True} | dict.fromkeys(
        list(caps["actions"])[1:], False
    )
    before, paused = await snapshot(monque), await paused_names(monque)
    calls: list[str] = []
    for name in (
        "cancel_job",
        "retry_job",
        "reschedule_job",
        "delete_job",
        "cancel_jobs",
        "retry_jobs",
        "delete_jobs",
        "get_job",
        "count_bulk",
        "pause",
        "resume",
    ):
        original = getattr(monque, name)

        async def spy(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            calls.append(_name)
            return await _original(*args, **kwargs)

        setattr(monque, name, spy)
    for method, path, body in write_requests():
        answer = await client.call(method, path.replace("{id}", oid(1)), body=body)
        assert answer.status == 403 and answer.body == {"error": "Management surface is read-only"}, (path, answer.body)
    bad_id = await client.call("POST", "/api/v1/jobs/bad/actions/cancel")
    assert bad_id.status == 403  # read-only is decided before the input is even read
    assert calls == []
    assert await snapshot(monque) == before and await paused_names(monque) == paused
    assert (await client.call("GET", "/api/v1/jobs")).status == 200  # reads still answer


async def test_authorize_refusals_are_403(monque: Monque) -> None:
    asked: list[tuple[str, str]] = []

    async def authorize(action: str, request: ApiRequest) -> bool:
        asked.append((action, request.path))
        return request.headers.get("x-role") == "admin" or (
            action == "read" and request.headers.get("x-role") == "viewer"
        )

    api = ManagementApi(monque, authorize=authorize)
    before = await snapshot(monque)

    async def call(role: str, method: str, path: str, body: Any = None) -> Any:
        import json

        data = b"" if body is None else json.dumps(body).encode()
        return await api.handle(ApiRequest(method, path, [], data, {"x-role": role}))

    refused = await call("viewer", "POST", f"/api/v1/jobs/{oid(1)}/actions/cancel")
    assert (refused.status, refused.body) == (403, {"error": "Action denied"})
    refused = await call("nobody", "GET", "/api/v1/jobs")
    assert (refused.status, refused.body) == (403, {"error": "Read access denied"})
    assert (await call("viewer", "POST", "/api/v1/jobs/actions/delete", {})).status == 403
    assert (await call("viewer", "POST", "/api/x/v1/queues/actions/pause", {"name": "email"})).status == 403
    assert await snapshot(monque) == before
    caps = (await call("viewer", "GET", "/api/v1/capabilities")).body
    assert caps["actions"]["read"] is True and caps["actions"]["deleteBulk"] is False
    assert (await call("admin", "POST", f"/api/v1/jobs/{oid(1)}/actions/cancel")).status == 200
    assert ("cancel", f"/api/v1/jobs/{oid(1)}/actions/cancel") in asked and (
        "deleteBulk",
        "/api/v1/jobs/actions/delete",
    ) in asked

    sync_api = ManagementApi(monque, authorize=lambda action, request: action == "read")
    assert (await sync_api.handle(ApiRequest("GET", "/api/v1/jobs"))).status == 200
    assert (await sync_api.handle(ApiRequest("DELETE", f"/api/v1/jobs/{oid(2)}"))).status == 403


# -- our own routes --------------------------------------------------------------------------------
async def test_bounded_bulk_never_acts_on_more_than_counted(client: ApiClient, monque: Monque) -> None:
    selection = {"name": "email", "status": "failed"}
    counted = await client.ok("POST", "/api/x/v1/jobs/actions/retry/count", body=selection)
    assert counted["count"] == 4
    late = _job(50, "email", JobStatus.FAILED, fail_count=1, fail_reason="late")
    late.created_at_ms = late.updated_at_ms = now_ms()
    await monque.import_jobs([late])  # fails after the count: the bounded retry leaves it
    result = await client.ok("POST", "/api/x/v1/jobs/actions/retry", body=selection | {"asOf": counted["asOf"]})
    assert result == {"count": 4, "errors": []}
    assert (await monque.get_job(oid(50))).status == JobStatus.FAILED  # type: ignore[union-attr]
    other = await client.call("POST", "/api/x/v1/jobs/actions/retry", body={"name": "sms", "asOf": counted["asOf"]})
    assert other.status == 400 and "not counted for this retry and this selection" in other.body["error"]
    wrong_action = await client.call(
        "POST", "/api/x/v1/jobs/actions/delete", body=selection | {"asOf": counted["asOf"]}
    )
    assert wrong_action.status == 400
    everything = await client.ok("POST", "/api/x/v1/jobs/actions/delete/count", body={})
    assert everything["count"] == 15


async def test_error_groups_attempts_instances_and_pauses(client: ApiClient, monque: Monque) -> None:
    groups = (await client.ok("GET", "/api/x/v1/error-groups", {"name": "email"}))["errorGroups"]
    assert [(group["name"], group["count"]) for group in groups] == [("email", 4)]
    retried = await client.ok("POST", "/api/x/v1/jobs/actions/retry/count", body={"errorGroup": groups[0]["key"]})
    assert retried["count"] == 4
    attempts = await client.ok("GET", f"/api/x/v1/jobs/{oid(7)}/attempts")
    assert attempts == {"jobId": oid(7), "attempts": []}
    assert (await client.call("GET", f"/api/x/v1/jobs/{oid(99)}/attempts")).status == 404
    if monque.store.kind != "sqlite":
        return  # instances and pauses live in collections of their own, which the evaluator lacks
    assert isinstance((await client.ok("GET", "/api/x/v1/instances"))["instances"], list)
    assert await client.ok("POST", "/api/x/v1/queues/actions/pause", body={"name": "email"}) == {
        "name": "email",
        "paused": True,
        "changed": True,
    }
    assert (await client.ok("POST", "/api/x/v1/queues/actions/pause", body={"name": "email"}))["changed"] is False
    assert [entry["name"] for entry in (await client.ok("GET", "/api/x/v1/paused"))["paused"]] == ["email"]
    assert (await client.ok("POST", "/api/x/v1/queues/actions/resume", body={"name": "email"}))["changed"] is True
    assert (await client.ok("GET", "/api/x/v1/paused"))["paused"] == []
    document = await client.ok("GET", "/api/x/v1/openapi.json")
    assert document["openapi"] == "3.1.1" and "/api/x/v1/paused" in document["paths"]


async def test_an_as_of_counted_on_another_store_is_refused(
    client: ApiClient, monque: Monque, tmp_path: Any, request: pytest.FixtureRequest
) -> None:
    """A count of 4 on one store once bounded a delete on another to every matching job there
    (the token bound the action and selection, not the store): now refused, nothing changed."""
    kind = request.node.callspec.params["monque"]
    selection = {"name": "email", "status": "failed"}
    counted = await client.ok("POST", "/api/x/v1/jobs/actions/delete/count", body=selection)
    assert counted["count"] == 4
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    many = [_job(100 + n, "email", JobStatus.FAILED, fail_count=1, fail_reason="x") for n in range(12)]
    async with seeded_monque(kind, elsewhere, many) as other:
        if kind == "mongodb":  # the evaluator's collection of another deployment
            other.store.position_scope = "mongodb:prod.example:27017/monque.monque_jobs"
        before = await snapshot(other)
        answer = await ApiClient(ManagementApi(other)).call(
            "POST", "/api/x/v1/jobs/actions/delete", body=selection | {"asOf": counted["asOf"]}
        )
        assert answer.status == 400, answer.body
        assert "on this store" in answer.body["error"]
        assert await snapshot(other) == before
    result = await client.ok("POST", "/api/x/v1/jobs/actions/delete", body=selection | {"asOf": counted["asOf"]})
    assert result == {"count": 4, "errors": []}  # on its own store the token still acts


async def test_a_count_route_with_a_trailing_slash_counts(client: ApiClient) -> None:
    counted = await client.ok("POST", "/api/x/v1/jobs/actions/retry/count/", body={"status": "failed"})
    assert counted["count"] == 4


async def test_a_route_without_a_query_ignores_one_and_unknown_fields_are_named_as_sent(client: ApiClient) -> None:
    """A dashboard's cache-buster (``?_=…``) on a route that takes no query was a 400; upstream
    ignores it. A route that takes a query still names a field it does not know, as the
    client spelt it (``page-size`` was shown as ``""``)."""
    for path in ("/api/v1/health", "/api/v1/capabilities", "/api/v1/queue-views"):
        answer = await client.call("GET", path, [("_", "1733500000000")])
        assert answer.status == 200, (path, answer.body)
    answer = await client.call("GET", "/api/v1/jobs", [("page-size", "10")])
    assert answer.status == 400 and answer.body["error"] == 'Unknown query field "page-size"'
    answer = await client.call("POST", "/api/v1/jobs/actions/delete", body={"older-than": "2026-01-01T00:00:00Z"})
    assert answer.status == 400 and answer.body["error"] == 'Unknown body field "older-than"'


async def test_an_empty_body_says_what_the_route_needs(client: ApiClient) -> None:
    """A reschedule with no body was told "send {} for an empty selection", and {} is refused
    there (a probe): a route with required fields names them."""
    answer = await client.call("POST", f"/api/v1/jobs/{oid(1)}/actions/reschedule")
    assert answer.status == 400 and answer.body["error"] == "A JSON body is required: an object with nextRunAt"
    answer = await client.call("POST", "/api/v1/jobs/actions/cancel")
    assert answer.status == 400 and "send {} for an empty selection" in answer.body["error"]

"""Bad input from Python that used to escape as a bare TypeError / AttributeError, or be
stored on SQLite although MongoDB refuses it (found by the acceptance probe). Each is a typed
MonqueError with one actionable line, and nothing is stored, on every store."""

from __future__ import annotations

from typing import Any

import pytest

from monque_engine import InvalidJobQueryError, JobSort, MonqueError, PayloadValidationError
from monque_engine.validation import MAX_PAYLOAD_DEPTH


def _nested(depth: int) -> Any:
    """``depth`` containers, alternating lists and dicts, innermost holding a scalar."""
    value: Any = 1
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [MAX_PAYLOAD_DEPTH + 1, 150, 5000])
async def test_payloads_nested_deeper_than_mongodb_stores_are_refused_on_every_path(monque, depth):
    # MongoDB refuses a document nested more than 100 levels deep (the job is the first);
    # SQLite used to store these, so a job could not be moved to or read the same by MongoDB.
    m = await monque()
    data = _nested(depth)
    calls = [
        lambda: m.enqueue("deep", data),
        lambda: m.enqueue_many([{"name": "deep", "data": {"ok": 1}}, {"name": "deep", "data": data}]),
        lambda: m.schedule("* * * * *", "deep", data),
    ]
    for call in calls:
        with pytest.raises(PayloadValidationError) as info:
            await call()
        message = str(info.value)
        assert "\n" not in message
        assert f"at most {MAX_PAYLOAD_DEPTH}" in message and "flatten it" in message
    assert await m.count_jobs() == 0


async def test_payloads_at_the_depth_limit_round_trip(monque):
    m = await monque()
    data = _nested(MAX_PAYLOAD_DEPTH)
    job = await m.enqueue("deep", data)
    stored = await m.get_job(job.id)
    assert stored is not None and stored.data == data
    # Many containers side by side are not deep: a long list of records is fine.
    wide = [{"row": [i]} for i in range(500)]
    assert (await m.get_job((await m.enqueue("wide", wide)).id)).data == wide


async def test_a_circular_payload_is_refused_with_its_own_reason(monque):
    m = await monque()
    data: dict[str, Any] = {}
    data["self"] = data
    with pytest.raises(PayloadValidationError, match="circular reference") as info:
        await m.enqueue("loop", data)
    assert "NaN" not in str(info.value)
    assert await m.count_jobs() == 0


@pytest.mark.parametrize("sort", ["created_at", ("created_at", "desc"), {"by": "id"}, 1])
async def test_a_sort_that_is_not_a_job_sort_is_a_query_error(monque, sort):
    m = await monque()
    job = await m.enqueue("x", {})
    with pytest.raises(InvalidJobQueryError, match=r"sort must be a JobSort"):
        await m.get_jobs_with_cursor(sort=sort)
    with pytest.raises(InvalidJobQueryError, match=r"sort must be a JobSort"):
        m.cursor_at(job, sort)


async def test_cursor_at_needs_a_job(monque):
    m = await monque()
    job = await m.enqueue("x", {})
    with pytest.raises(InvalidJobQueryError, match="cursor_at takes a Job"):
        m.cursor_at(job.id)  # type: ignore[arg-type]
    assert isinstance(m.cursor_at(job, JobSort("created_at", "desc")), str)


@pytest.mark.parametrize("items", [5, None, 2.5, "abc", b"ab", {"name": "x", "data": 1}], ids=repr)
async def test_enqueue_many_of_something_that_is_not_a_list_of_jobs_is_a_query_error(monque, items):
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match="enqueue_many takes a list") as info:
        await m.enqueue_many(items)
    assert isinstance(info.value, MonqueError) and "\n" not in str(info.value)
    assert await m.count_jobs() == 0


async def test_enqueue_many_still_takes_any_iterable_of_mappings(monque):
    m = await monque()
    jobs = await m.enqueue_many({"name": "gen", "data": i} for i in range(3))
    assert [job.data for job in jobs] == [0, 1, 2]


@pytest.mark.parametrize("store", [5, None, b"sqlite:///jobs.db", ["sqlite:///jobs.db"]], ids=repr)
def test_a_store_that_is_neither_a_url_nor_a_store_is_refused_at_construction(store):
    # It used to be accepted and fail at initialize() with "'int' object has no attribute 'open'".
    from monque_engine import InvalidStoreUrlError, Monque

    with pytest.raises(InvalidStoreUrlError, match=r"Monque\(\) takes a store URL .* or a JobStore, got"):
        Monque(store)


@pytest.mark.parametrize("listener", ["print", None, 5], ids=repr)
async def test_a_listener_that_cannot_be_called_is_refused_by_on_and_once(monque, listener):
    # It used to be stored, then fail (and be logged) on every emit, far from the mistake.
    from monque_engine import InvalidEventError

    m = await monque()
    for subscribe in (m.on, m.once):
        with pytest.raises(InvalidEventError, match="must be callable"):
            subscribe("job:complete", listener)
    assert not m.events.has_listeners("job:complete")


@pytest.mark.parametrize("event", ["job:done", 5, None], ids=repr)
async def test_an_unknown_event_is_a_monque_error_and_still_a_value_error(monque, event):
    from monque_engine import InvalidEventError

    m = await monque()
    with pytest.raises(InvalidEventError, match="Unknown event") as info:
        m.on(event, print)
    assert isinstance(info.value, ValueError) and isinstance(info.value, MonqueError)


async def test_payloads_are_limited_to_what_a_mongodb_document_leaves_room_for(monque):
    """16 MiB per MongoDB document, and the job grows after the insert (attempt history):
    a payload that filled it made the job's outcome unwritable (run again after every
    recovery). Both stores refuse what is over MAX_PAYLOAD_BYTES, measured as BSON of {data}."""
    from monque_engine import PayloadTooLargeError
    from monque_engine.validation import MAX_PAYLOAD_BYTES

    m = await monque()
    over = "x" * (MAX_PAYLOAD_BYTES - 15)  # BSON of {"data": s} is len(s) + 16 bytes
    for call in (
        lambda: m.enqueue("big", over),
        lambda: m.enqueue_many([{"name": "big", "data": over}]),
        lambda: m.schedule("@daily", "big", over),
    ):
        with pytest.raises(PayloadTooLargeError) as info:
            await call()
        assert info.value.max_size == MAX_PAYLOAD_BYTES and info.value.actual_size == MAX_PAYLOAD_BYTES + 1
        assert "15 MiB" in str(info.value) and "configured" not in str(info.value)
    # Small JSON can still be large BSON (arrays of small ints): measured as BSON, not JSON.
    with pytest.raises(PayloadTooLargeError):
        await m.enqueue("big", [1] * 1_500_000)  # 3 MB of JSON, over 15 MiB of BSON
    assert await m.count_jobs() == 0
    at_limit = await m.enqueue("big", over[:-1])
    assert len((await m.get_job(at_limit.id)).data) == MAX_PAYLOAD_BYTES - 16


@pytest.mark.parametrize("include_data", ["no", 0, None], ids=repr)
async def test_include_data_must_be_a_bool(monque, include_data):
    # A truthy string such as "no" used to include the payloads.
    m = await monque()
    await m.enqueue("x", {"secret": 1})
    with pytest.raises(InvalidJobQueryError, match="include_data must be True or False"):
        await m.get_jobs_with_cursor(include_data=include_data)


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "ok", "data": {"x": float("nan")}},
        {"name": "", "data": {}},
        {"name": "ok", "data": {}, "unique_key": " "},
        {"name": "ok", "data": b"bytes"},
    ],
    ids=["nan-payload", "empty-name", "blank-unique-key", "bytes-payload"],
)
async def test_enqueue_many_says_which_item_is_bad_and_stores_none(monque, bad):
    """In a batch of 1,000 the error said "payload contains NaN" and nothing of where (a probe)."""
    m = await monque()
    items = [{"name": "ok", "data": {"n": n}} for n in range(637)] + [bad] + [{"name": "ok", "data": {}}] * 10
    with pytest.raises(MonqueError, match=r"^enqueue_many item 637: "):
        await m.enqueue_many(items)
    assert await m.count_jobs() == 0

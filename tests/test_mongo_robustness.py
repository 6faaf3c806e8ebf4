"""Foreign documents, BSON refusals and failing claims: one bad thing never stops a loop.

Issue 11 items 2 and 5. The store runs against the mongomock evaluator adapter (a
MongoDB query-language evaluator, not a server: see test_mongo_evaluator.py), whose
writes BSON-encode their documents first as PyMongo does, so an int past 64 bits or a NUL
in a key fails exactly where the driver fails. Driver errors are PyMongo's own classes.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest
from bson import ObjectId
from pymongo.errors import AutoReconnect
from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine.errors import ConnectionError, InvalidJobDocumentError, MonqueError, PayloadValidationError
from monque_engine.job import Job, JobSort, JobStatus
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import intake as mongo_intake

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
T0_MS = int(T0.timestamp() * 1000)


def _claim_fails_on(adapter: Any, call: int) -> None:
    count = {"n": 0}

    def hook(args: Any, kwargs: Any) -> None:
        count["n"] += 1
        if count["n"] == call:
            raise AutoReconnect("connection to evaluator:27017 closed")

    adapter.before_find_one_and_update = hook


async def test_claim_failing_part_way_returns_what_was_claimed(caplog: pytest.LogCaptureFixture) -> None:
    """Claims 1 and 2 are committed as ours when claim 3 fails: they are returned to run
    (not orphaned behind our heartbeats) and the failure is logged."""
    store, adapter = evaluator_store()
    for n in range(1, 6):
        await store.insert(new_job(oid(n), run_at=n))
    _claim_fails_on(adapter, 3)
    with caplog.at_level(logging.WARNING, logger="monque_engine.mongo"):
        claimed = await store.claim("email", "me", 1_000, 5, 30_000)
    assert [j.id for j in claimed] == [oid(1), oid(2)]
    assert all(j.status is JobStatus.PROCESSING and j.claimed_by == "me" for j in claimed)
    assert "then a claim failed" in caplog.text and "connection to evaluator" in caplog.text
    assert adapter.sync.count_documents({"status": "pending"}) == 3


async def test_claim_failing_first_raises_connection_error() -> None:
    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))
    _claim_fails_on(adapter, 1)
    with pytest.raises(ConnectionError) as info:
        await store.claim("email", "me", 1_000, 5, 30_000)
    assert isinstance(info.value.__cause__, AutoReconnect)


def test_from_document_reads_foreign_documents_or_names_the_field() -> None:
    """Missing optional fields and dates a JavaScript caller wrote as strings or numbers
    are read; what cannot be read raises InvalidJobDocumentError (a MonqueError), never a
    KeyError or AttributeError."""
    oid1 = ObjectId("65f000000000000000000001")
    job = Job.from_document(
        {"_id": oid1, "name": "email", "status": "pending", "nextRunAt": "2026-01-02T03:04:05.000Z"}
    )
    assert job.next_run_at_ms == T0_MS and job.data is None and job.fail_count == 0
    assert job.created_at_ms == int(oid1.generation_time.timestamp() * 1000) == job.updated_at_ms
    job = Job.from_document(
        {
            "_id": oid1,
            "name": "email",
            "status": "failed",
            "nextRunAt": T0_MS,
            "createdAt": T0,
            "failCount": 3.0,
            "failReason": 42,
        }
    )
    assert (job.next_run_at_ms, job.fail_count, job.fail_reason) == (T0_MS, 3, "42")
    for broken, field in (
        ({"_id": oid1, "status": "pending", "nextRunAt": T0}, "name"),
        ({"_id": oid1, "name": "x", "status": "paused", "nextRunAt": T0}, "status"),
        ({"_id": oid1, "name": "x", "status": {"$bad": 1}, "nextRunAt": T0}, "status"),
        ({"_id": oid1, "name": "x", "status": "pending"}, "nextRunAt"),
        ({"_id": oid1, "name": "x", "status": "pending", "nextRunAt": "next tuesday"}, "nextRunAt"),
        ({"_id": oid1, "name": "x", "status": "pending", "nextRunAt": T0, "failCount": "many"}, "failCount"),
        ({"_id": "x", "name": "x", "status": "pending", "nextRunAt": T0}, "createdAt"),
    ):
        with pytest.raises(InvalidJobDocumentError, match=field) as info:
            Job.from_document(broken)
        assert isinstance(info.value, MonqueError) and str(broken["_id"]) in str(info.value)


def _foreign(n: int, **fields: Any) -> dict[str, Any]:
    doc = mongo_intake.new_job_document(new_job(oid(n), run_at=n))
    doc.update(fields)
    return doc


async def test_listings_skip_unreadable_documents_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    store, adapter = evaluator_store()
    adapter.sync.insert_many([_foreign(1), _foreign(2, name=None), _foreign(3), _foreign(4, status="paused")])
    with caplog.at_level(logging.WARNING, logger="monque_engine.mongo"):
        page = await store.page(StoreListFilter(), JobSort("id", "asc"), "forward", None, 10)
        again = await store.page(StoreListFilter(), JobSort("id", "asc"), "forward", None, 10)
        found = await store.find(StoreSelector(), 10, 0)
    assert [j.id for j in page] == [j.id for j in again] == [j.id for j in found] == [oid(1), oid(3)]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2  # one per bad document, however often it is listed
    assert oid(2) in warnings[0].getMessage() and "name" in warnings[0].getMessage()
    with pytest.raises(InvalidJobDocumentError):
        await store.get(oid(2))


async def test_claim_marks_an_unreadable_claimed_document_failed_and_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    """A claimed document we cannot read is ours: left processing, our heartbeats would keep
    it alive forever. It is failed with the reason, and the other claims still run."""
    store, adapter = evaluator_store()
    adapter.sync.insert_many([_foreign(1, createdAt="yesterday-ish"), _foreign(2)])
    with caplog.at_level(logging.WARNING, logger="monque_engine.mongo"):
        claimed = await store.claim("email", "me", 1_000, 5, 30_000)
    assert [j.id for j in claimed] == [oid(2)]
    bad = adapter.sync.find_one({"_id": q.oid(oid(1))})
    assert bad["status"] == "failed" and "createdAt" in bad["failReason"] and "claimedBy" not in bad
    assert "createdAt" in caplog.text


async def test_string_next_run_at_does_not_break_next_due_or_stats() -> None:
    """BSON sorts strings before dates: a pending job whose nextRunAt a JavaScript caller
    wrote as a string must not become "the next due job" (it used to raise AttributeError
    and end the poll loop), and a completed one must not fail the stats aggregation."""
    store, adapter = evaluator_store()
    adapter.sync.insert_many(
        [
            _foreign(1, nextRunAt="2026-01-02T03:04:05Z"),
            _foreign(2),
            _foreign(3, status="completed", createdAt="2026-01-02T03:04:05Z"),
        ]
    )
    assert await store.next_due_ms(["email"]) == 2
    stats = await store.stats("email")
    assert (stats.pending, stats.completed, stats.total) == (2, 1, 3)


@pytest.mark.parametrize("payload", [{"big": 2**63}, {"key\x00nul": 1}, [{"deep": {"k\x00": 1}}]])
async def test_bson_refusals_become_payload_validation_errors(payload: Any) -> None:
    """What BSON cannot store raises PayloadValidationError (not a raw OverflowError or
    InvalidDocument) from single and batch intake, and no job is stored."""
    store, adapter = evaluator_store()
    with pytest.raises(PayloadValidationError, match="64 bits and keys without NUL"):
        await store.insert(new_job(oid(1), data=payload))
    with pytest.raises(PayloadValidationError):
        await store.insert(new_job(oid(2), data=payload, unique_key="k"))
    with pytest.raises(PayloadValidationError):
        await store.insert_many([new_job(oid(3)), new_job(oid(4), data=payload)])
    assert adapter.sync.count_documents({}) == 0


async def test_listing_and_count_are_bounded_by_max_time_ms_with_a_clear_message() -> None:
    """Issue 11 item 13: a search that scans too much ends at maxTimeMS with one clear
    AggregationTimeoutError telling the operator how to narrow it (the server's error is
    PyMongo's ExecutionTimeout, code 50)."""
    from pymongo.errors import ExecutionTimeout

    from monque_engine.errors import AggregationTimeoutError

    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1), unique_key="order-42"))
    search = StoreListFilter(search="der-4")
    assert [j.id for j in await store.page(search, JobSort("created_at", "desc"), "forward", None, 10)] == [oid(1)]
    await store.find(StoreSelector(), 10, 0)
    assert [c.max_time for c in adapter.cursors] == [q.LIST_MAX_TIME_MS] * 2
    assert await store.count(search) == 1
    assert adapter.calls[-1][2] == {"maxTimeMS": q.LIST_MAX_TIME_MS}

    async def slow(*args: Any, **kwargs: Any) -> int:
        raise ExecutionTimeout("operation exceeded time limit", 50)

    adapter.count_documents = slow  # type: ignore[method-assign]
    with pytest.raises(AggregationTimeoutError) as info:
        await store.count(search)
    message = str(info.value)
    assert message.startswith("Could not count jobs on MongoDB evaluator:27017/monque: it exceeded its time limit")
    assert "type more of the job id or unique key" in message and "\n" not in message


async def test_undecodable_reply_is_a_clear_monque_error() -> None:
    """PyMongo raises bson's InvalidBSON (not a PyMongoError) for a reply it cannot decode;
    it arrives as InvalidJobDocumentError, which every scheduler loop handles."""
    from bson.errors import InvalidBSON

    store, adapter = evaluator_store()

    async def undecodable(*args: Any, **kwargs: Any) -> Any:
        raise InvalidBSON("invalid length or type code")

    adapter.find_one = undecodable  # type: ignore[method-assign]
    with pytest.raises(InvalidJobDocumentError, match="cannot decode it") as info:
        await store.get(oid(1))
    assert str(info.value).startswith("A stored document is not a readable Monque job")

"""Retrying jobs whose unique key another live job holds (issue 11 item 12). FAKES.

Run against the mongomock evaluator adapter (a query-language evaluator with the store's
real partial unique index, not a server). Its ``bulk_write`` applies a multi-document
update the way a server does: document by document, stopping at the first E11000 with the
earlier documents already changed, reported as PyMongo reports it (BulkWriteError with
nModified and keyValue), so the store's recovery from a half-applied update is exercised.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine.errors import UniqueKeyConflictError
from monque_engine.job import JobStatus
from monque_engine.store.base import StoreSelector
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import intake, management

RETRYABLE = StoreSelector(statuses=(JobStatus.FAILED, JobStatus.CANCELLED))


def _doc(n: int, status: str, key: str | None = None) -> dict[str, Any]:
    doc = intake.new_job_document(new_job(oid(n), unique_key=key))
    doc["status"] = status
    if status == "failed":
        doc.update(failCount=3, failReason="boom")
    return doc


def _status(adapter: Any, n: int) -> str:
    return adapter.sync.find_one({"_id": q.oid(oid(n))})["status"]


async def test_retry_raises_unique_key_conflict_naming_the_holder() -> None:
    store, adapter = evaluator_store()
    adapter.sync.insert_many([_doc(1, "pending", "k"), _doc(2, "failed", "k")])
    with pytest.raises(UniqueKeyConflictError) as info:
        await store.retry(oid(2), 5_000)
    error = info.value
    assert (error.job_id, error.holder_id, error.name, error.unique_key) == (oid(2), oid(1), "email", "k")
    assert oid(1) in str(error) and "\n" not in str(error)
    assert _status(adapter, 2) == "failed"  # untouched
    adapter.sync.update_one({"_id": q.oid(oid(1))}, {"$set": {"status": "completed"}})
    result = await store.retry(oid(2), 6_000)
    assert result is not None and result[1] is JobStatus.FAILED and _status(adapter, 2) == "pending"


async def test_retry_many_retries_every_non_clashing_job_and_lists_each_clash() -> None:
    store, adapter = evaluator_store()
    adapter.sync.insert_many(
        [
            _doc(1, "pending", "k1"),  # live holder of k1
            _doc(2, "failed", "k1"),  # clashes with 1
            _doc(3, "failed", "k2"),  # oldest of two retryable k2 jobs: retried
            _doc(4, "cancelled", "k2"),  # clashes with 3
            _doc(5, "failed"),  # no key
            _doc(6, "cancelled", "k3"),  # key nobody holds
            _doc(7, "completed", "k1"),  # not selected
        ]
    )
    count, errors = await store.retry_many(RETRYABLE, 9_000, 30_000)
    assert count == 3
    assert [_status(adapter, n) for n in range(1, 8)] == [
        "pending",
        "failed",
        "pending",
        "cancelled",
        "pending",
        "pending",
        "completed",
    ]
    by_id = {e["jobId"]: e["error"] for e in errors}
    assert set(by_id) == {oid(2), oid(4)}
    assert oid(1) in by_id[oid(2)] and oid(3) in by_id[oid(4)] and "unique key 'k2'" in by_id[oid(4)]
    retried = adapter.sync.find_one({"_id": q.oid(oid(3))})
    assert retried["failCount"] == 0 and "failReason" not in retried


async def test_retry_many_recovers_from_a_clash_that_appears_during_the_update() -> None:
    """A job with key k9 is enqueued elsewhere after the clash look-up: the update stops
    at E11000 half-way (jobs before it already retried); the store runs it again without
    k9's jobs and still retries everything else, counting both rounds."""
    store, adapter = evaluator_store()
    adapter.sync.insert_many([_doc(1, "failed"), _doc(2, "failed", "k9"), _doc(3, "cancelled")])

    def concurrent_enqueue() -> None:
        adapter.before_bulk_write = None
        adapter.sync.insert_one(_doc(8, "pending", "k9"))

    adapter.before_bulk_write = concurrent_enqueue
    count, errors = await store.retry_many(RETRYABLE, 9_000, 30_000)
    assert count == 2
    assert [_status(adapter, n) for n in (1, 2, 3)] == ["pending", "failed", "pending"]
    assert [e["jobId"] for e in errors] == [oid(2)] and oid(8) in errors[0]["error"]
    assert len([c for c in adapter.calls if c[0] == "bulk_write"]) == 2


async def test_retry_many_without_keys_is_one_update() -> None:
    store, adapter = evaluator_store()
    adapter.sync.insert_many([_doc(1, "failed"), _doc(2, "cancelled"), _doc(3, "pending")])
    assert await store.retry_many(RETRYABLE, 9_000, 30_000) == (2, [])
    [(_, (requests,), _)] = [c for c in adapter.calls if c[0] == "bulk_write"]
    assert requests[0]._doc == management.retry_many_pipeline(9_000, 30_000)  # upstream's pipeline, sent as is

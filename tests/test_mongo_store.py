"""MongoStore's plumbing run against mongomock as a MongoDB query-language evaluator.

Not a stand-in for the contract suite (which needs a real replica set): these tests check
what the store does around its queries — the claim loop, the E11000 path of unique
enqueues, the retry pre-image, the batch fallback, error translation — with mongomock
evaluating the documents it sends.
"""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.errors import AutoReconnect, DuplicateKeyError, ExecutionTimeout
from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine.cursor import CursorAnchor
from monque_engine.errors import AggregationTimeoutError, ConnectionError
from monque_engine.job import JobSort, JobStatus
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import intake as mongo_intake


async def test_evaluator_store_insert_and_get_round_trip_schema() -> None:
    store, adapter = evaluator_store()
    job = await store.insert(new_job(oid(1), repeat="0 * * * *"))
    stored = adapter.sync.find_one({"_id": q.oid(oid(1))})
    # upstream job-intake.ts order: repeatInterval right after nextRunAt (issue 11 item 8)
    assert list(stored) == [
        "_id",
        "name",
        "data",
        "status",
        "nextRunAt",
        "repeatInterval",
        "failCount",
        "createdAt",
        "updatedAt",
    ]
    assert await store.get(oid(1)) == job
    assert await store.get("not-an-id") is None and await store.delete("zz") is False


async def test_evaluator_store_unique_insert_handles_concurrent_e11000_by_rereading() -> None:
    store, adapter = evaluator_store()
    winner = new_job(oid(1), unique_key="k")

    def concurrent_enqueue(args: Any, kwargs: Any) -> None:
        adapter.before_find_one_and_update = None
        adapter.sync.insert_one(mongo_intake.new_job_document(winner))  # the other process's upsert lands first
        raise DuplicateKeyError("E11000 duplicate key error collection: db.monque_jobs index: name_1_uniqueKey_1")

    adapter.before_find_one_and_update = concurrent_enqueue
    job = await store.insert(new_job(oid(2), unique_key="k"))
    assert job.id == oid(1)
    assert adapter.sync.count_documents({}) == 1


async def test_evaluator_store_claim_loops_until_first_miss_in_next_run_order() -> None:
    store, adapter = evaluator_store()
    for n, run_at in ((1, 300), (2, 100), (3, 200), (4, 99_999)):
        await store.insert(new_job(oid(n), run_at=run_at))
    claimed = await store.claim("email", "me", 1_000, 10, 30_000)
    assert [j.id for j in claimed] == [oid(2), oid(3), oid(1)]
    claims = [c for c in adapter.calls if c[0] == "find_one_and_update"]
    # Waves of 1, 2, 4 concurrent claims (issue 36 item 6): three hits, then the wave with
    # the first miss is the last.
    assert len(claims) == 7
    assert await store.claim("email", "me", 1_000, 10, 30_000) == []
    assert await store.claim("email", "me", 1_000, 0, 30_000) == []


async def test_evaluator_store_owned_transitions_and_management() -> None:
    store, _ = evaluator_store()
    await store.insert(new_job(oid(1)))
    [job] = await store.claim("email", "me", 2_000, 1, 30_000)
    assert await store.complete(job.id, "someone-else", 3_000, None) is None
    failed = await store.fail(job.id, "me", 3_000, 1, "boom", None)
    assert failed is not None and failed.status is JobStatus.FAILED
    assert await store.cancel(job.id, 3_500) is None
    result = await store.retry(job.id, 4_000)
    assert result is not None
    retried, previous = result
    assert previous is JobStatus.FAILED and retried == await store.get(job.id)
    assert await store.reschedule(job.id, 50_000, 4_100) == (await store.get(job.id))
    assert (await store.cancel(job.id, 4_200)).status is JobStatus.CANCELLED  # type: ignore[union-attr]
    assert await store.delete(job.id) is True


async def test_evaluator_store_reads_page_count_stats_names() -> None:
    store, _ = evaluator_store()
    for n in range(1, 6):
        await store.insert(new_job(oid(n), name="a" if n % 2 else "b", created=n * 10))
    page = await store.page(StoreListFilter(), JobSort("created_at", "desc"), "forward", None, 2, include_data=False)
    assert [j.id for j in page] == [oid(5), oid(4)] and all(j.data is None for j in page)
    nxt = await store.page(StoreListFilter(), JobSort("created_at", "desc"), "forward", CursorAnchor(oid(4), 40), 2)
    assert [j.id for j in nxt] == [oid(3), oid(2)] and nxt[0].data is not None
    assert await store.count(StoreListFilter(name="a")) == 3
    assert [j.id for j in await store.find(StoreSelector(name="b"), 10, 1)] == [oid(4)]
    stats = await store.stats(None)
    assert (stats.pending, stats.total, stats.avg_processing_duration_ms) == (5, 5, None)
    assert set(await store.stats_by_name()) == {"a", "b"}
    assert await store.names() == ["a", "b"]
    assert await store.next_due_ms(["a"]) == 1_000 and await store.next_due_ms([]) is None


async def test_evaluator_store_stats_timeout_becomes_aggregation_timeout_error() -> None:
    store, adapter = evaluator_store()

    async def slow(*args: Any, **kwargs: Any) -> Any:
        assert kwargs["maxTimeMS"] == 30_000
        raise ExecutionTimeout("operation exceeded time limit", code=50)

    adapter.aggregate = slow  # type: ignore[method-assign]
    with pytest.raises(AggregationTimeoutError) as info:
        await store.stats("email")
    assert isinstance(info.value.__cause__, ExecutionTimeout)


async def test_evaluator_store_driver_errors_become_connection_errors_with_cause_and_no_password() -> None:
    store, adapter = evaluator_store()

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise AutoReconnect("connection to mongodb://user:s3cret@evaluator:27017 closed")

    adapter.update_many = broken  # type: ignore[method-assign]
    with pytest.raises(ConnectionError) as info:
        await store.heartbeat("me", 1)
    assert isinstance(info.value.__cause__, AutoReconnect)
    assert "s3cret" not in str(info.value) and "evaluator" in str(info.value)


async def test_evaluator_store_insert_many_fallback_undoes_partial_batch() -> None:
    """Standalone fallback (no transactions): a failing batch leaves none of its jobs."""
    store, adapter = evaluator_store(transactions=False)
    await store.insert(new_job(oid(9)))
    batch = [new_job(oid(1)), new_job(oid(2), unique_key="k"), new_job(oid(9)), new_job(oid(3))]  # oid(9) collides
    with pytest.raises(ConnectionError):
        await store.insert_many(batch)
    assert sorted(str(d["_id"]) for d in adapter.sync.find()) == [oid(9)]
    jobs = await store.insert_many([new_job(oid(4)), new_job(oid(5), unique_key="k"), new_job(oid(6), unique_key="k")])
    assert [j.id for j in jobs] == [oid(4), oid(5), oid(5)]  # in-batch duplicate key returns the first


async def test_store_not_open_raises_connection_error() -> None:
    from monque_engine.store.mongo import MongoStore

    store = MongoStore.from_url("mongodb://u:pw@h/db")
    with pytest.raises(ConnectionError, match="not open"):
        await store.get(oid(1))


def test_new_job_document_has_upstream_field_order() -> None:
    """Issue 11 item 8: job-intake.ts builds {name, data, status, nextRunAt, repeatInterval,
    failCount, createdAt, updatedAt} and then uniqueKey; the server puts _id first. Byte
    identity is checked on the BSON encoding of the whole document."""
    import bson

    doc = mongo_intake.new_job_document(new_job(oid(1), repeat="0 * * * *", unique_key="k"))
    assert list(doc) == [
        "_id",
        "name",
        "data",
        "status",
        "nextRunAt",
        "repeatInterval",
        "failCount",
        "createdAt",
        "updatedAt",
        "uniqueKey",
    ]
    node = {
        "_id": doc["_id"],
        "name": "email",
        "data": doc["data"],
        "status": "pending",
        "nextRunAt": q.dt(1_000),
        "repeatInterval": "0 * * * *",
        "failCount": 0,
        "createdAt": q.dt(500),
        "updatedAt": q.dt(500),
        "uniqueKey": "k",
    }
    assert bson.encode(doc) == bson.encode(node)
    assert list(mongo_intake.new_job_document(new_job(oid(2)))) == [
        "_id",
        "name",
        "data",
        "status",
        "nextRunAt",
        "failCount",
        "createdAt",
        "updatedAt",
    ]


async def test_evaluator_store_stats_total_counts_unknown_statuses_and_rounds_average() -> None:
    """Issue 11 item 8: upstream's total is a $count of every document (a hand-written
    status included) and its average is Math.round'ed; mongomock evaluates the pipeline."""
    store, adapter = evaluator_store()
    for n, (created, updated) in enumerate(((0, 1_000), (0, 1_001), (0, 1_002), (0, 1_000)), start=1):
        doc = mongo_intake.new_job_document(new_job(oid(n), created=created))
        doc.update(status="completed", updatedAt=q.dt(updated))
        adapter.sync.insert_one(doc)
    odd = mongo_intake.new_job_document(new_job(oid(9)))
    odd["status"] = "paused"  # not a Monque status
    adapter.sync.insert_one(odd)
    stats = await store.stats(None)
    assert (stats.completed, stats.pending, stats.total) == (4, 0, 5)
    assert stats.avg_processing_duration_ms == 1_001.0  # 1000.75 rounded half up
    by_name = await store.stats_by_name()
    assert by_name["email"].total == 5
    adapter.sync.update_one({"_id": q.oid(oid(4))}, {"$set": {"updatedAt": q.dt(1_002)}})
    assert (await store.stats("email")).avg_processing_duration_ms == 1_001.0  # 1001.25 -> 1001
    adapter.sync.update_one({"_id": q.oid(oid(4))}, {"$set": {"updatedAt": q.dt(999)}})
    assert (await store.stats("email")).avg_processing_duration_ms == 1_001.0  # 1000.5 -> 1001 (half up)


async def test_evaluator_store_get_many_reads_by_id_in_one_find() -> None:
    """One ``find`` with ``$in`` over the valid ids (evaluated by mongomock, not a server)."""
    store, adapter = evaluator_store()
    for n in (1, 2, 3):
        await store.insert(new_job(oid(n)))
    adapter.sync.insert_one({"_id": q.oid(oid(4)), "name": 7})  # not a Monque job: skipped, as in listings
    found = await store.get_many([oid(3), oid(1), oid(4), oid(9), "not-an-id", oid(1)])
    assert sorted(found) == [oid(1), oid(3)]
    assert found[oid(3)] == await store.get(oid(3))
    assert await store.get_many(["zz"]) == {}

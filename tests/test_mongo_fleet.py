"""MongoDB side of fleet and queue control (issue 13), without a server.

These are fakes, said plainly: mongomock evaluates the query documents, pipelines and
updates (as in test_mongo_documents.py), and a small adapter gives the evaluator
collection the ``name`` / ``database[...]`` that MongoStore uses to reach its side
collections (``<jobs>_instances``, ``<jobs>_control``, ``<jobs>_counters``). Atomicity,
TTL expiry and real index use are a server's business; the index tests check that each
new read's leading keys are an index's prefix.
"""

from __future__ import annotations

from typing import Any

import mongomock
import pytest
from bson import ObjectId
from pymongo.errors import DuplicateKeyError
from test_mongo_evaluator import AsyncEvaluatorCollection, evaluator_collection, oid
from test_mongo_evaluator import evaluator_store as _plain_store

from monque_engine.job import InstanceRecord, JobStatus, OwnerJobStamp, OwnerRecords
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import fleet as mongo_fleet
from monque_engine.store.mongo import reads
from monque_engine.store.mongo.indexes import fleet_index_specs, index_specs

NOW = 10_000_000


class _SideAdapter(AsyncEvaluatorCollection):
    """The evaluator adapter plus what the fleet methods call on side collections."""

    async def replace_one(self, filter: Any, doc: Any, upsert: bool = False, **kw: Any) -> Any:
        self._record("replace_one", (filter, doc), {"upsert": upsert})
        return self.sync.replace_one(filter, doc, upsert=upsert)

    async def update_one(self, filter: Any, update: Any, upsert: bool = False, **kw: Any) -> Any:
        self._record("update_one", (filter, update), {"upsert": upsert})
        return self.sync.update_one(filter, update, upsert=upsert)

    async def bulk_write(self, requests: Any, ordered: bool = True, **kw: Any) -> Any:
        self._record("bulk_write", (requests,), {"ordered": ordered})
        for request in requests:
            self.sync.update_one(request._filter, request._doc, upsert=request._upsert)


class _Database:
    def __init__(self, db: Any) -> None:
        self._db = db
        self.sides: dict[str, _SideAdapter] = {}

    def __getitem__(self, name: str) -> _SideAdapter:
        if name not in self.sides:
            self.sides[name] = _SideAdapter(self._db[name])
        return self.sides[name]


def fleet_store() -> tuple[Any, Any, _Database]:
    client = mongomock.MongoClient(tz_aware=True)
    jobs = evaluator_collection()
    store, adapter = _plain_store(jobs)
    database = _Database(client.db)
    adapter.name = "monque_jobs"  # type: ignore[attr-defined]
    adapter.database = database  # type: ignore[attr-defined]
    return store, adapter, database


def _job(
    n: int,
    owner: str | None,
    *,
    status: str = "processing",
    beat: int | None = None,
    locked: int | None = None,
    interval: int | None = 1_000,
    name: str = "email",
    run_at: int = NOW,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "_id": ObjectId(oid(n)),
        "name": name,
        "data": {},
        "status": status,
        "nextRunAt": q.dt(run_at),
        "failCount": 0,
        "createdAt": q.dt(1),
        "updatedAt": q.dt(1),
    }
    if owner is not None:
        doc["claimedBy"] = owner
    if beat is not None:
        doc["lastHeartbeat"] = q.dt(beat)
    if locked is not None:
        doc["lockedAt"] = q.dt(locked)
    if interval is not None:
        doc["heartbeatInterval"] = interval
    return doc


def _ids(docs: Any) -> list[str]:
    return sorted(str(d["_id"]) for d in docs)


# -- query documents ------------------------------------------------------------------------------------
def test_unmoved_owner_filter_matches_only_the_jobs_whose_stamps_are_still_the_ones_read() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(1, "w", beat=NOW - 5_000, locked=NOW - 9_000),
            _job(2, "w", beat=NOW - 5_000, locked=NOW - 8_000),
            _job(3, "w", beat=None, locked=NOW - 7_000, interval=None),  # never beat: lockedAt only
            _job(4, "w", beat=NOW - 1, locked=NOW - 9_000),  # beat after the look
            _job(5, "other", beat=NOW - 5_000, locked=NOW - 9_000),  # another owner
            _job(6, "w", status="pending", beat=NOW - 5_000, locked=NOW - 9_000),  # not processing
        ]
    )
    seen = [
        OwnerJobStamp(oid(1), NOW - 5_000, NOW - 9_000, 1_000),
        OwnerJobStamp(oid(2), NOW - 5_000, NOW - 8_000, 1_000),
        OwnerJobStamp(oid(3), None, NOW - 7_000, None),
        OwnerJobStamp(oid(4), NOW - 5_000, NOW - 9_000, 1_000),
        OwnerJobStamp(oid(5), NOW - 5_000, NOW - 9_000, 1_000),
        OwnerJobStamp(oid(6), NOW - 5_000, NOW - 9_000, 1_000),
    ]
    query = mongo_fleet.unmoved_owner_filter("w", seen)
    assert _ids(c.find(query)) == [oid(1), oid(2), oid(3)]
    assert len(query["$or"]) == 3  # one branch per pair of stamps, not per job
    assert _ids(c.find(mongo_fleet.owner_jobs_filter("w"))) == [oid(1), oid(2), oid(3), oid(4)]


def test_owner_holdings_group_processing_jobs_by_claimed_by() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(1, "node-a", beat=NOW - 100),
            _job(2, "node-a", beat=None, locked=NOW - 50, interval=None),
            _job(3, "node-b", beat=NOW - 900, interval=5_000),
            _job(4, "node-b", status="completed", beat=NOW),
        ]
    )
    rows = {row["_id"]: row for row in c.aggregate(mongo_fleet.owner_holdings_pipeline())}
    assert rows["node-a"]["jobs"] == 2 and rows["node-a"]["lastHeartbeat"] == q.dt(NOW - 50)
    assert rows["node-b"]["jobs"] == 1 and rows["node-b"]["heartbeatInterval"] == 5_000


def test_pending_health_counts_due_later_oldest_and_processing() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(1, None, status="pending", run_at=NOW - 9_000),
            _job(2, None, status="pending", run_at=NOW),
            _job(3, None, status="pending", run_at=NOW + 1),
            _job(4, "w", beat=NOW),
            _job(5, None, status="failed", run_at=NOW - 99_000),
        ]
    )
    (row,) = list(c.aggregate(reads.pending_health_pipeline(NOW)))
    assert (row["_id"], row["due"], row["scheduled"], row["processing"]) == ("email", 2, 1, 1)
    assert row["oldestDue"] == q.dt(NOW - 9_000)


def test_counter_upserts_add_to_one_row_per_name_and_minute() -> None:
    c = mongomock.MongoClient(tz_aware=True).db.monque_jobs_counters
    for batch, (completed, failed) in (("b1", (3, 1)), ("b2", (2, 0))):
        c.update_one(*mongo_fleet.counter_upsert("email", 1000, completed, failed, batch), upsert=True)
    c.update_one(*mongo_fleet.counter_upsert("email", 999, 1, 0, "b1"), upsert=True)
    rows = list(c.find(mongo_fleet.counters_filter(1000, "email")))
    assert [(r["name"], r["minute"], r["completed"], r["failed"]) for r in rows] == [("email", 1000, 5, 1)]
    assert rows[0]["at"] == q.dt(1000 * 60_000)  # the TTL index's date
    # The same batch again: E11000 (the filter misses, the upsert collides on _id), not a second add.
    with pytest.raises(DuplicateKeyError):
        c.update_one(*mongo_fleet.counter_upsert("email", 1000, 3, 1, "b1"), upsert=True)
    assert c.find_one({"minute": 1000})["completed"] == 5


def test_bulk_on_a_listing_filter_selects_what_the_listing_lists() -> None:
    c = evaluator_collection()
    c.insert_many([_job(n, None, status="pending", run_at=NOW + n * 1_000) for n in range(1, 6)])
    listing = StoreListFilter(next_run_from_ms=NOW + 2_000, next_run_to_ms=NOW + 4_000)
    selector = StoreSelector(statuses=(JobStatus.PENDING,), listing=listing)
    assert _ids(c.find(q.selector_filter(selector))) == _ids(c.find(q.list_filter(listing))) == [oid(2), oid(3), oid(4)]
    assert q.selector_filter(StoreSelector(listing=listing)) == q.list_filter(listing)
    assert list(c.find(q.selector_filter(StoreSelector(statuses=(JobStatus.FAILED,), listing=listing)))) == []


# -- indexes ------------------------------------------------------------------------------------------------
def _prefixes(specs: list[Any]) -> list[list[str]]:
    return [[key for key, _ in keys] for keys, _ in specs]


def test_each_new_read_has_an_index() -> None:
    jobs = _prefixes(index_specs(False))
    assert ["claimedBy", "status"] in jobs  # owner_jobs_filter / unmoved_owner_filter
    assert any(keys[:1] == ["status"] for keys in jobs)  # owner holdings and pending health match on status
    side = fleet_index_specs()
    assert side["instances"] == [([("lastHeartbeat", 1)], {"expireAfterSeconds": 24 * 3600, "background": True})]
    assert ([("at", 1)], {"expireAfterSeconds": 48 * 3600, "background": True}) in side["counters"]
    assert [("name", 1), ("minute", 1)] in [keys for keys, _ in side["counters"]]  # counters_filter, COUNTERS_SORT
    assert side["control"] == [([("kind", 1)], {"background": True})]  # PAUSED_FILTER


# -- store plumbing ------------------------------------------------------------------------------------------
async def test_registry_round_trip_and_purge_on_the_side_collection() -> None:
    store, _, database = fleet_store()
    record = InstanceRecord("w1", "host", 42, "monque_engine 0.1.0", NOW - 60_000, 1_000, {"email": 5}, 2, 10, 1, NOW)
    await store.upsert_instance(record)
    await store.upsert_instance(record)  # replaced, not duplicated
    assert await store.list_instances() == [record]
    side = database["monque_jobs_instances"]
    assert side.calls[0][0] == "replace_one" and side.calls[0][2] == {"upsert": True}
    assert await store.purge_instances(NOW - 1) == 0
    assert await store.purge_instances(NOW + 1) == 1
    await store.upsert_instance(record)
    await store.remove_instance("w1")
    assert await store.list_instances() == []


async def test_owner_records_read_its_jobs_stamps_and_its_registry_record() -> None:
    store, adapter, _ = fleet_store()
    adapter.sync.insert_many(
        [_job(2, "w", beat=NOW - 5_000, locked=NOW - 9_000), _job(1, "w", beat=None, locked=NOW - 7_000, interval=None)]
    )
    adapter.sync.insert_one(_job(3, "other", beat=NOW))
    record = InstanceRecord("w", "h", 1, "v", 0, 1_000, {}, 1, 0, 0, NOW - 100)
    await store.upsert_instance(record)
    seen = await store.owner_records("w")
    assert seen == OwnerRecords(
        "w",
        record,
        (OwnerJobStamp(oid(1), None, NOW - 7_000, None), OwnerJobStamp(oid(2), NOW - 5_000, NOW - 9_000, 1_000)),
    )
    assert adapter.cursors[-1].max_time == q.LIST_MAX_TIME_MS
    assert await store.owner_records("nobody") == OwnerRecords("nobody", None, ())


async def test_release_unmoved_owner_looks_again_then_writes_with_the_per_job_compare_and_set() -> None:
    store, adapter, _ = fleet_store()
    adapter.sync.insert_many([_job(1, "w", beat=NOW - 5_000), _job(2, "w", beat=NOW - 6_000)])
    seen = await store.owner_records("w")
    assert await store.release_unmoved_owner("w", seen, NOW) == 2
    name, (filter, update), _ = adapter.calls[-1]
    assert name == "update_many" and filter == mongo_fleet.unmoved_owner_filter("w", seen.jobs)
    assert update == q.to_pending_update(NOW)
    assert {d["status"] for d in adapter.sync.find()} == {"pending"}


async def test_a_beat_after_the_look_keeps_the_owners_jobs() -> None:
    store, adapter, _ = fleet_store()
    adapter.sync.insert_many([_job(1, "w", beat=NOW - 5_000)])
    seen = await store.owner_records("w")
    adapter.sync.update_many({"claimedBy": "w"}, {"$set": {"lastHeartbeat": q.dt(NOW - 9_000)}})  # a beat
    assert await store.release_unmoved_owner("w", seen, NOW) is None
    assert not [call for call in adapter.calls if call[0] == "update_many"]
    assert adapter.sync.find_one()["status"] == "processing"


async def test_a_beat_between_the_second_look_and_the_write_keeps_each_job_it_reached() -> None:
    """No transaction joins the look and the write: the per-document compare-and-set does."""
    store, adapter, _ = fleet_store()
    adapter.sync.insert_many([_job(1, "w", beat=NOW - 5_000), _job(2, "w", beat=NOW - 5_000)])
    seen = await store.owner_records("w")
    write = adapter.update_many

    async def beat_then_write(filter: Any, update: Any, **kw: Any) -> Any:
        adapter.sync.update_many({"claimedBy": "w"}, {"$set": {"lastHeartbeat": q.dt(NOW)}})
        return await write(filter, update, **kw)

    adapter.update_many = beat_then_write  # type: ignore[method-assign]
    assert await store.release_unmoved_owner("w", seen, NOW) == 0
    assert {d["status"] for d in adapter.sync.find()} == {"processing"}


async def test_a_registry_record_that_beat_keeps_the_owner_alive() -> None:
    store, adapter, _ = fleet_store()
    adapter.sync.insert_many([_job(1, "w", beat=NOW - 5_000)])
    await store.upsert_instance(InstanceRecord("w", "h", 1, "v", 0, 1_000, {}, 1, 0, 0, NOW - 100))
    seen = await store.owner_records("w")
    await store.upsert_instance(InstanceRecord("w", "h", 1, "v", 0, 1_000, {}, 1, 0, 0, NOW - 50))
    assert await store.release_unmoved_owner("w", seen, NOW) is None
    assert adapter.sync.find_one()["status"] == "processing"
    adapter.sync.insert_one(_job(2, "w", beat=NOW - 10))  # a new claim of the same owner
    seen = await store.owner_records("w")
    adapter.sync.insert_one(_job(3, "w", beat=NOW - 5))
    assert await store.release_unmoved_owner("w", seen, NOW) is None


async def test_pause_resume_and_counters_on_the_side_collections() -> None:
    store, _, database = fleet_store()
    assert await store.set_paused("email", True, NOW) is True
    assert await store.set_paused("email", True, NOW + 5) is False
    assert await store.paused_names() == {"email": NOW}
    assert database["monque_jobs_control"].sync.find_one()["_id"] == "paused:email"
    name, (filter, update), options = database["monque_jobs_control"].calls[0]
    # An upsert keyed by _id; _id is not repeated in $setOnInsert (the server takes the filter's).
    assert (name, filter, options) == ("update_one", {"_id": "paused:email"}, {"upsert": True})
    assert set(update["$setOnInsert"]) == {"kind", "name", "since"}
    assert await store.set_paused("email", False, NOW) is True
    assert await store.paused_names() == {}
    await store.add_outcome_counts({("email", 100): (3, 1), ("sms", 101): (1, 0)})
    await store.add_outcome_counts({("email", 100): (1, 1)})
    assert await store.outcome_counts(100) == [("email", 100, 4, 2), ("sms", 101, 1, 0)]
    assert await store.outcome_counts(101, "sms") == [("sms", 101, 1, 0)]
    assert await store.purge_outcome_counts(101) == 1


async def test_error_attempt_counts_read_each_groups_first_minute_and_its_recent_minutes() -> None:
    """Issue 40: an error group's failed attempts are counted in the counters under a name no
    job can have; the errors view reads each shown group's first minute and its last hour."""
    from monque_engine.errorgroups import error_counter_name

    store, _, _ = fleet_store()
    counts = {
        (error_counter_name("a" * 16), 990): (0, 2),
        (error_counter_name("a" * 16), 1000): (0, 3),
        (error_counter_name("b" * 16), 1001): (0, 1),
        ("email", 980): (5, 1),
    }
    await store.add_outcome_counts(counts, batch="b1")
    first, rows = await store.error_attempt_counts(["a" * 16, "b" * 16, "c" * 16], 995)
    assert first == {"a" * 16: 990, "b" * 16: 1001}
    assert sorted(rows) == [("a" * 16, 1000, 3), ("b" * 16, 1001, 1)]
    assert await store.error_attempt_counts([], 0) == ({}, [])
    assert mongo_fleet.error_counters_filter(["x"], 5)["name"] == {"$in": ["x"]}  # the {name, minute} index

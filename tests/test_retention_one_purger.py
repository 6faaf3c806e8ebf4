"""Retention at fleet scale (issue 27 item 2): one purger at a time, bounded batches.

The scheduler side (``scheduler/retention.py``) runs against a store whose lease and
purge calls are recorded; the MongoDB side (the lease upsert on the control collection,
the batched delete) against mongomock, a query-language evaluator (FAKE: a real server
would be needed for the E11000 of two simultaneous upserts and for oplog/replica effects).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from bson import ObjectId
from test_mongo_fleet import fleet_store

from monque_engine.job import JobStatus
from monque_engine.options import JobRetention
from monque_engine.scheduler.retention import LEASE, Retention
from monque_engine.store.mongo import retention as mongo_retention

NOW = 1_800_000_000_000


class LeaseStore:
    """Just the store calls retention makes: one lease shared by every Retention, and a
    pile of expired jobs purged ``limit`` at a time. Records overlapping purges."""

    def __init__(self, expired: int) -> None:
        self.expired = expired
        self.holder: str | None = None
        self.expires = 0
        self.calls: list[tuple[str, Any]] = []
        self.purging = 0
        self.overlap = False

    async def acquire_lease(self, duty: str, holder: str, now_ms: int, ttl_ms: int) -> bool:
        assert duty == LEASE
        if self.holder not in (None, holder) and self.expires > now_ms:
            self.calls.append(("refused", holder))
            return False
        self.holder, self.expires = holder, now_ms + ttl_ms
        self.calls.append(("lease", holder))
        return True

    async def release_lease(self, duty: str, holder: str) -> None:
        if self.holder == holder:
            self.holder = None
        self.calls.append(("release", holder))

    async def purge_finished_batch(self, status: JobStatus, updated_before_ms: int, limit: int) -> int:
        self.purging += 1
        self.overlap |= self.purging > 1
        await asyncio.sleep(0)  # a real write suspends: let the other process run
        deleted = min(limit, self.expired)
        self.expired -= deleted
        self.calls.append(("purge", limit))
        self.purging -= 1
        return deleted


RETENTION = JobRetention(completed=60, interval=3600)


async def test_of_twenty_processes_only_the_lease_holder_purges() -> None:
    store = LeaseStore(expired=2500)
    fleet = [Retention(store, RETENTION, f"w{i}", batch_size=1000, pause=0) for i in range(20)]  # type: ignore[arg-type]
    removed = await asyncio.gather(*(r.round() for r in fleet))
    assert sorted(removed) == [0] * 19 + [2500]
    assert not store.overlap
    assert [c for c in store.calls if c[0] == "purge"] == [("purge", 1000)] * 3  # bounded writes
    assert sum(1 for c in store.calls if c[0] == "refused") == 19


async def test_the_holder_renews_between_batches_and_stops_when_it_lost_the_lease() -> None:
    store = LeaseStore(expired=5000)
    holder = Retention(store, RETENTION, "a", batch_size=1000, pause=0)  # type: ignore[arg-type]
    original = store.purge_finished_batch

    async def stolen_after_two(status: JobStatus, before: int, limit: int) -> int:
        deleted = await original(status, before, limit)
        if sum(1 for c in store.calls if c[0] == "purge") == 2:
            store.holder, store.expires = "b", 2**62  # a stall: the lease expired and b took it
        return deleted

    store.purge_finished_batch = stolen_after_two  # type: ignore[method-assign]
    assert await holder.round() == 2000
    kinds = [c[0] for c in store.calls]
    assert kinds == ["lease", "purge", "lease", "purge", "refused"]


async def test_stop_gives_the_lease_up_and_a_dead_holders_lease_expires() -> None:
    store = LeaseStore(expired=0)
    first = Retention(store, RETENTION, "a")  # type: ignore[arg-type]
    second = Retention(store, RETENTION, "b")  # type: ignore[arg-type]
    await first.round()
    assert await store.acquire_lease(LEASE, "b", 0, 1) is False
    await first.release()
    assert store.holder is None
    await second.round()
    assert store.holder == "b"
    assert first.lease_ttl_ms >= 2 * RETENTION.interval * 1000


# -- MongoDB -------------------------------------------------------------------------------------
async def test_mongo_lease_is_taken_renewed_refused_and_expires() -> None:
    store, _, database = fleet_store()
    assert await store.acquire_lease("retention", "a", NOW, 60_000) is True
    assert await store.acquire_lease("retention", "b", NOW + 1, 60_000) is False  # E11000 from the upsert
    assert await store.acquire_lease("retention", "a", NOW + 30_000, 60_000) is True  # renewed to NOW+90s
    assert await store.acquire_lease("retention", "b", NOW + 61_000, 60_000) is False
    assert await store.acquire_lease("retention", "b", NOW + 90_001, 60_000) is True  # expired: taken over
    await store.release_lease("retention", "a")  # not a's any more: a no-op
    doc = database["monque_jobs_control"].sync.find_one({"_id": "lease:retention"})
    assert doc["holder"] == "b" and doc["kind"] == "lease"
    await store.release_lease("retention", "b")
    assert database["monque_jobs_control"].sync.find_one({"_id": "lease:retention"}) is None
    assert await store.paused_names() == {}  # a lease is not a paused name


def _finished(n: int, status: str, updated_ms: int) -> dict[str, Any]:
    at = datetime.fromtimestamp(updated_ms / 1000, UTC)
    return {
        "_id": ObjectId(f"65f0{n:020x}"),
        "name": "email",
        "data": {},
        "status": status,
        "nextRunAt": at,
        "failCount": 0,
        "createdAt": at,
        "updatedAt": at,
    }


async def test_mongo_purge_batch_deletes_at_most_the_limit_oldest_first() -> None:
    store, adapter, _ = fleet_store()
    adapter.sync.insert_many([_finished(n, "completed", NOW - 10_000 + n) for n in range(25)])
    adapter.sync.insert_one(_finished(99, "completed", NOW + 1))  # not expired
    adapter.sync.insert_one(_finished(98, "failed", NOW - 10_000))  # another status
    assert await store.purge_finished_batch(JobStatus.COMPLETED, NOW, 10) == 10
    left = sorted(int(str(d["_id"])[4:], 16) for d in adapter.sync.find({"status": "completed"}))
    assert left == [*range(10, 25), 99]  # the oldest went first
    assert await store.purge_finished_batch(JobStatus.COMPLETED, NOW, 10) == 10
    assert await store.purge_finished_batch(JobStatus.COMPLETED, NOW, 10) == 5
    assert await store.purge_finished_batch(JobStatus.COMPLETED, NOW, 10) == 0
    _name, (delete_filter,), _ = next(c for c in adapter.calls if c[0] == "delete_many")
    # The delete repeats the purge filter: a job retried between find and delete stays.
    assert delete_filter["status"] == "completed" and "$lt" in delete_filter["updatedAt"]
    find = next(c for c in adapter.calls if c[0] == "find")
    assert find[2]["projection"] == {"_id": 1}
    assert mongo_retention.PURGE_SORT == [("updatedAt", 1)]

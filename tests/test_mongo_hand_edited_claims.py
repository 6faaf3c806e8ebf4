"""Stale recovery on MongoDB survives hand-edited processing jobs (issue 27 item 13). FAKES.

A ``mongosh`` edit can leave a processing job with a string ``lockedAt``, ``failCount`` or
``lastHeartbeat``. The recovery's ``updateMany`` computes each job's ``stale`` record with
``$subtract: [now, "$lockedAt"]`` and ``$add: ["$failCount", 1]``; on a string the server
fails the whole command (its expression evaluator: "can't $subtract string from Date",
code 16556; "only numeric or date types supported for $add", code 16554), so one such job
stopped recovery for every job, every round. A string ``lastHeartbeat`` is never ``$lt`` a
date (BSON compares across types by type order, and a date cutoff only matches dates), so
that job stayed processing forever.

Filters and the repair are evaluated by mongomock. mongomock cannot evaluate the recovery
pipeline (no ``$unset`` stage, no array-literal expressions), so ``ServerLikeCollection``
applies it as the server would: the matched documents in ``_id`` order, each back to
pending, and the command fails at the first document whose ``lockedAt`` / ``failCount``
the expressions cannot compute with. A server would be needed for the exact error text.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pymongo.errors import OperationFailure
from test_mongo_evaluator import AsyncEvaluatorCollection, evaluator_collection, evaluator_store, new_job, oid

from monque_engine.errors import ConnectionError
from monque_engine.job import JobStatus
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import liveness

LOCK_TIMEOUT = 30_000
T0 = 1_000_000


class ServerLikeCollection(AsyncEvaluatorCollection):
    """The evaluator adapter, with the stale-recovery pipeline applied as the server does."""

    def __init__(self, collection: Any) -> None:
        super().__init__(collection)
        self.fail_repairs = False

    async def update_many(self, filter: Any, update: Any, **kw: Any) -> Any:
        if not isinstance(update, list):
            return await super().update_many(filter, update, **kw)
        self._record("update_many", (filter, update), kw)
        modified = 0
        for doc in self.sync.find(filter).sort("_id", 1):
            locked, count = doc.get("lockedAt"), doc.get("failCount")
            if locked is not None and not hasattr(locked, "tzinfo"):
                raise OperationFailure(f"can't $subtract {type(locked).__name__} from Date", 16556)
            if count is not None and (isinstance(count, bool) or not isinstance(count, int | float)):
                raise OperationFailure("only numeric or date types supported for $add", 16554)
            self.sync.update_one({"_id": doc["_id"]}, q.to_pending_update(T0))
            modified += 1
        return _Result(modified)

    async def update_one(self, filter: Any, update: Any, **kw: Any) -> Any:
        if self.fail_repairs:
            self._record("update_one", (filter, update), kw)
            raise OperationFailure("not primary", 10107)
        return await super().update_one(filter, update, **kw)


class _Result:
    def __init__(self, modified: int) -> None:
        self.modified_count = modified


def _processing(n: int, **fields: Any) -> dict[str, Any]:
    doc = new_job(oid(n)).to_job().to_document()
    doc.update(status="processing", claimedBy="gone", lockedAt=q.dt(T0 - 10 * LOCK_TIMEOUT), failCount=0)
    doc["lastHeartbeat"] = q.dt(T0 - 10 * LOCK_TIMEOUT)
    doc.update(fields)
    return doc


def _store(*docs: dict[str, Any]) -> tuple[Any, ServerLikeCollection]:
    collection = evaluator_collection()
    collection.insert_many(list(docs))
    adapter = ServerLikeCollection(collection)
    store, _ = evaluator_store()
    store._collection = adapter  # type: ignore[assignment]
    return store, adapter


def _status(adapter: ServerLikeCollection, n: int) -> str:
    return str(adapter.sync.find_one({"_id": q.oid(oid(n))})["status"])


async def test_a_string_locked_at_or_fail_count_no_longer_stops_recovery_of_every_job() -> None:
    """Before: the updateMany failed every round, and the genuinely stale job 1 was never
    recovered. Now the two hand-edited jobs are repaired first and all three recovered."""
    store, adapter = _store(
        _processing(1),
        _processing(2, lockedAt="2024-05-01T10:00:00Z"),
        _processing(3, failCount="2"),
    )
    recovered = await store.recover_stale(T0 - LOCK_TIMEOUT, T0)
    assert recovered == 3
    assert [_status(adapter, n) for n in (1, 2, 3)] == ["pending"] * 3
    assert await store.recover_stale(T0 - LOCK_TIMEOUT, T0) == 0  # the next round is clean too


async def test_a_string_last_heartbeat_restarts_the_liveness_clock_instead_of_hiding_the_job() -> None:
    """Before: a string lastHeartbeat matched no cutoff, ever. Now it becomes a date (the
    repair's time): a job whose owner still heartbeats keeps running, one whose owner is
    gone is recovered a lock timeout later."""
    store, adapter = _store(_processing(4, lastHeartbeat="just now"))
    assert await store.recover_stale(T0 - LOCK_TIMEOUT, T0) == 0
    repaired = adapter.sync.find_one({"_id": q.oid(oid(4))})
    assert repaired["status"] == "processing" and repaired["lastHeartbeat"] == q.dt(T0)
    later = T0 + LOCK_TIMEOUT + 1
    assert await store.recover_stale(later - LOCK_TIMEOUT, later) == 1
    assert _status(adapter, 4) == "pending"


async def test_one_warning_per_document_not_per_round(caplog: pytest.LogCaptureFixture) -> None:
    """A repair that keeps failing (here: the primary stepped down for every repair write)
    is named once, not at every recovery round; the recovery itself still fails on that
    document, as before, and says so as an engine error."""
    store, adapter = _store(_processing(5, failCount="many"), _processing(6, lastHeartbeat=None))
    adapter.fail_repairs = True
    caplog.set_level(logging.WARNING, logger="monque_engine.mongo")
    for _ in range(3):
        with pytest.raises(ConnectionError):
            await store.recover_stale(T0 - LOCK_TIMEOUT, T0)
    warnings = [r.getMessage() for r in caplog.records if "could not be repaired" in r.getMessage()]
    assert len(warnings) == 2, warnings
    assert any(oid(5) in w and "failCount='many'" in w for w in warnings)
    assert any(oid(6) in w and "lastHeartbeat=None" in w for w in warnings)
    adapter.fail_repairs = False
    caplog.clear()
    for _ in range(2):
        await store.recover_stale(T0 - LOCK_TIMEOUT, T0)
    assert [r for r in caplog.records if "repaired to" in r.getMessage()] == []  # already named once
    doc = adapter.sync.find_one({"_id": q.oid(oid(5))})
    assert doc["status"] == "pending"


def test_the_repair_never_overwrites_a_concurrent_fix() -> None:
    """Each repair is guarded by the bad values as read: if the owner's heartbeat (or an
    operator) wrote a date in between, the repair matches nothing."""
    collection = evaluator_collection()
    collection.insert_one(_processing(7, lastHeartbeat="x", failCount="3"))
    [doc] = collection.find(liveness.malformed_claims_filter(), liveness.CLAIM_REPAIR_PROJECTION)
    repair = liveness.claim_repair(doc, T0)
    assert repair is not None
    guard, update, wrong = repair
    assert update == {"$set": {"lastHeartbeat": q.dt(T0), "failCount": 3}} and len(wrong) == 2
    collection.update_one({"_id": doc["_id"]}, {"$set": {"lastHeartbeat": q.dt(T0 + 5)}})
    assert collection.update_one(guard, update).modified_count == 0
    assert collection.find_one({"_id": doc["_id"]})["failCount"] == "3"


def test_well_formed_and_pending_jobs_are_not_touched() -> None:
    collection = evaluator_collection()
    collection.insert_many(
        [
            _processing(8),  # dates and a number: fine
            _processing(9, failCount=2.0),  # a double is a number
            {**_processing(10, lockedAt="x"), "status": JobStatus.PENDING.value},  # not processing
        ]
    )
    no_heartbeat = _processing(11)
    del no_heartbeat["lastHeartbeat"]  # Node's job before its first heartbeat: missing is fine
    collection.insert_one(no_heartbeat)
    assert list(collection.find(liveness.malformed_claims_filter())) == []


async def test_a_processing_job_with_no_instant_or_no_owner_is_recovered() -> None:
    """Issue 34: an import (or a ``mongosh`` edit) left a processing job with neither
    ``lockedAt`` nor ``lastHeartbeat``, or with no ``claimedBy``: no cutoff matched it and no
    owner could beat or complete it, so it stayed processing for good. A recent job of a
    live owner is left alone."""
    no_instant = _processing(12)
    del no_instant["lockedAt"], no_instant["lastHeartbeat"]
    recent = q.dt(T0 - 1)
    empty_owner = _processing(13, lockedAt=recent, lastHeartbeat=recent, claimedBy="")
    no_owner = _processing(14, lockedAt=recent, lastHeartbeat=recent)
    del no_owner["claimedBy"]
    alive = _processing(15, lockedAt=recent, lastHeartbeat=recent, claimedBy="alive")
    store, adapter = _store(_processing(11), no_instant, empty_owner, no_owner, alive)
    assert await store.recover_stale(T0 - LOCK_TIMEOUT, T0) == 4
    assert [_status(adapter, n) for n in (11, 12, 13, 14, 15)] == ["pending"] * 4 + ["processing"]
    assert await store.recover_stale(T0 - LOCK_TIMEOUT, T0) == 0


async def test_instances_never_list_an_owner_without_an_id() -> None:
    """``instances()`` listed an owner with the empty id '' (and one for a missing owner),
    which ``release-dead`` cannot name; stale recovery takes such jobs back instead."""
    recent = q.dt(T0 - 1)
    no_owner = _processing(17, lockedAt=recent, lastHeartbeat=recent)
    del no_owner["claimedBy"]
    store, _ = _store(
        _processing(16, lockedAt=recent, lastHeartbeat=recent, claimedBy="w1"),
        _processing(18, lockedAt=recent, lastHeartbeat=recent, claimedBy=""),
        no_owner,
    )
    holdings = await store.owner_holdings()
    assert [(holding.owner, holding.jobs) for holding in holdings] == [("w1", 1)]


async def test_a_claim_without_locked_at_is_never_an_owners_longest_running_job() -> None:
    """The owner's longest-running job was the ``$first`` after a sort on ``lockedAt``, where a
    missing or null ``lockedAt`` sorts first: a hand-edited claim without one was named the
    longest, with no start (review of the MongoDB store). The earliest real claim is."""
    recent = q.dt(T0 - 1)
    unstamped = _processing(21, lastHeartbeat=recent, claimedBy="w1")
    unstamped.pop("lockedAt", None)
    nulled = _processing(22, lockedAt=None, lastHeartbeat=recent, claimedBy="w1")
    store, _ = _store(
        unstamped,
        nulled,
        _processing(23, lockedAt=q.dt(T0 - 5_000), lastHeartbeat=recent, claimedBy="w1"),
        _processing(24, lockedAt=q.dt(T0 - 9_000), lastHeartbeat=recent, claimedBy="w1"),
        _processing(25, lastHeartbeat=recent, claimedBy="w2", lockedAt=None),
    )
    holdings = {holding.owner: holding for holding in await store.owner_holdings()}
    assert holdings["w1"].jobs == 4
    assert (holdings["w1"].longest_job_id, holdings["w1"].longest_since_ms) == (oid(24), T0 - 9_000)
    assert holdings["w2"].jobs == 1 and (holdings["w2"].longest_job_id, holdings["w2"].longest_since_ms) == (None, None)

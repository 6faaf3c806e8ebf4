"""The Fleet port on MongoDB: the instance registry, paused names, per-minute outcome
counters, and the owner records a dead owner's release compares.

They live in side collections named after the jobs collection (``documents.fleet_collections``),
never inside job documents, so Node Monque, which never reads them, is unaffected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pymongo
from bson import ObjectId
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError

from ...errorgroups import ERROR_COUNTER_PREFIX, error_counter_name
from ...errors import ConnectionError
from ...job import InstanceRecord, OwnerHolding, OwnerJobStamp, OwnerRecords
from ...timeutil import datetime_to_ms
from . import documents as q
from .documents import NO_OWNER, PROCESSING, Document, dt
from .plumbing import MongoPlumbing, _int_or_none, _ms_or_none


class PartialCounterWriteError(ConnectionError):
    """Some per-minute counter increments were applied, ``unapplied`` were not: the caller
    adds only those again (issue 27 item 14)."""

    def __init__(self, message: str, unapplied: dict[tuple[str, int], tuple[int, int]]) -> None:
        super().__init__(message)
        self.unapplied = unapplied


def instance_document(record: Any) -> Document:
    """A registry record (``InstanceRecord``), ``_id`` = the instance id."""
    return {
        "_id": record.id,
        "host": record.host,
        "pid": record.pid,
        "version": record.version,
        "startedAt": dt(record.started_at_ms),
        "heartbeatInterval": record.heartbeat_interval_ms,
        "workers": [{"name": name, "concurrency": size} for name, size in record.workers.items()],
        "running": record.running,
        "processed": record.processed,
        "failed": record.failed,
        "lastHeartbeat": dt(record.last_heartbeat_ms),
        **({"supervisor": record.supervisor} if record.supervisor else {}),
    }


def instance_purge_filter(heartbeat_before_ms: int) -> Document:
    return {"lastHeartbeat": {"$lt": dt(heartbeat_before_ms)}}


#: After every real claim: where a processing job without ``lockedAt`` sorts.
_LAST_CLAIM = datetime(9999, 12, 31, tzinfo=UTC)


def owner_holdings_pipeline() -> list[Document]:
    """Processing jobs by owner; the ``{status, nextRunAt}`` index serves the match. A job
    naming no owner is left out: ``release-dead`` could not name it, and stale recovery
    takes it back (``stale_filter``)."""
    return [
        {"$match": {"status": PROCESSING, "claimedBy": {"$nin": NO_OWNER["$in"]}}},
        # Earliest claim first, so each owner's ``$first`` is its longest-running job. A job
        # with no ``lockedAt`` (missing or null: hand-edited) sorts last, not first: sorted on
        # lockedAt itself it came first and was named the longest, with no start (review).
        # Processing jobs are few (the owners' concurrency), so the sort in memory is cheap.
        {"$set": {"_claimOrder": {"$ifNull": ["$lockedAt", _LAST_CLAIM]}}},
        {"$sort": {"_claimOrder": 1, "_id": 1}},
        {
            "$group": {
                "_id": "$claimedBy",
                "jobs": {"$sum": 1},
                "lastHeartbeat": {"$max": {"$ifNull": ["$lastHeartbeat", "$lockedAt"]}},
                "heartbeatInterval": {"$max": "$heartbeatInterval"},
                "longest": {"$first": "$_id"},
                "longestSince": {"$first": "$lockedAt"},
            }
        },
        {"$sort": {"_id": 1}},
    ]


def owner_jobs_filter(owner: str) -> Document:
    """The processing jobs ``owner`` holds; the ``{claimedBy, status}`` index serves it."""
    return {"claimedBy": owner, "status": PROCESSING}


#: What a beat or a claim rewrites on a job: all dead-owner release compares (ADR 0007).
OWNER_STAMPS_PROJECTION: Document = {"lastHeartbeat": 1, "lockedAt": 1, "heartbeatInterval": 1}


def _job_key(job_id: str) -> Any:
    return ObjectId(job_id) if ObjectId.is_valid(job_id) and len(job_id) == 24 else job_id


def _stamp(ms: int | None) -> datetime | None:
    return None if ms is None else dt(ms)


def unmoved_owner_filter(owner: str, jobs: Sequence[OwnerJobStamp]) -> Document:
    """The owner's processing jobs whose stamps are still exactly those in ``jobs``: a
    compare-and-set per document, so a beat that reaches a job before this write does keeps
    it. (``lastHeartbeat: None`` matches a missing field, as upstream leaves it before the
    first beat.) One ``$or`` branch per distinct pair of stamps: a beat gives all of an
    owner's jobs the same ``lastHeartbeat``, so there are few."""
    groups: dict[tuple[int | None, int | None], list[Any]] = {}
    for job in jobs:
        groups.setdefault((job.last_heartbeat_ms, job.locked_at_ms), []).append(_job_key(job.id))
    return {
        "claimedBy": owner,
        "status": PROCESSING,
        "$or": [
            {"_id": {"$in": ids}, "lastHeartbeat": _stamp(beat), "lockedAt": _stamp(locked)}
            for (beat, locked), ids in groups.items()
        ],
    }


def paused_document(name: str, now_ms: int) -> Document:
    return {"_id": f"paused:{name}", "kind": "paused", "name": name, "since": dt(now_ms)}


PAUSED_FILTER: Document = {"kind": "paused"}


#: Batch ids a counter row keeps, the latest: a batch sent again is left out while its id is
#: among them. About 60 flushes touch one minute's row with 20 processes beating every
#: 30 s; a failed batch is sent again by the next flush.
COUNTER_BATCHES_KEPT = 200
#: E11000: for a counter upsert, "this row already holds the batch" (see ``counter_upsert``).
DUPLICATE_KEY = 11000


def counter_upsert(name: str, minute: int, completed: int, failed: int, batch: str) -> tuple[Document, Document]:
    """One per-minute counter row, incremented once per ``batch`` (several processes add to
    one minute; a batch may be sent twice, issue 36 defect 8).

    The filter matches the row only while its ``batches`` lack this batch's id; the update
    adds the id. Sent again after it was applied, the filter misses, the upsert tries to
    insert a second document with the row's ``_id`` and the server answers E11000: not
    applied twice. The server does not retry that upsert itself, as it does for a filter of
    equalities only (https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#upsert-with-duplicate-values),
    so an E11000 can also be a race between two processes inserting the row: the caller
    sends an E11000'd row once more, when the row exists (``MongoFleet.add_outcome_counts``).
    """
    return (
        {"_id": {"name": name, "minute": minute}, "batches": {"$ne": batch}},
        {
            "$setOnInsert": {"name": name, "minute": minute, "at": dt(minute * 60_000)},
            "$inc": {"completed": completed, "failed": failed},
            "$push": {"batches": {"$each": [batch], "$slice": -COUNTER_BATCHES_KEPT}},
        },
    )


def counters_filter(since_minute: int, name: str | None) -> Document:
    query: Document = {"minute": {"$gte": since_minute}}
    if name is not None:
        query["name"] = name
    return query


COUNTERS_SORT = [("name", 1), ("minute", 1)]


def error_first_pipeline(names: Sequence[str]) -> list[Document]:
    """Each listed counter row name's first minute (``error_attempt_counts``)."""
    return [
        {"$match": {"name": {"$in": list(names)}}},
        {"$sort": {"name": 1, "minute": 1}},
        {"$group": {"_id": "$name", "first": {"$first": "$minute"}}},
    ]


def error_counters_filter(names: Sequence[str], since_minute: int) -> Document:
    """The listed counter row names' rows from ``since_minute`` on that counted a failure."""
    return {"name": {"$in": list(names)}, "minute": {"$gte": since_minute}, "failed": {"$gt": 0}}


def counters_purge_filter(before_minute: int) -> Document:
    """Counter rows older than ``before_minute``, by ``at`` (the TTL index's field, always
    ``minute`` as a date): the {name, minute} index does not lead with ``minute``."""
    return {"at": {"$lt": dt(before_minute * 60_000)}}


class MongoFleet(MongoPlumbing):
    """``JobStore``'s fleet and queue-control methods on MongoDB (composed into ``MongoStore``)."""

    async def upsert_instance(self, record: InstanceRecord) -> None:
        doc = instance_document(record)
        await self._side_call(
            "instances", "update the instance registry", lambda c: c.replace_one({"_id": record.id}, doc, upsert=True)
        )

    async def remove_instance(self, instance_id: str) -> None:
        await self._side_call("instances", "remove an instance record", lambda c: c.delete_one({"_id": instance_id}))

    async def list_instances(self) -> list[InstanceRecord]:
        docs = await self._side_call(
            "instances", "list instances", lambda c: c.find({}).sort([("_id", 1)]).to_list(None)
        )
        records = []
        for doc in docs:
            try:
                records.append(_instance_record(doc))
            except (KeyError, TypeError, ValueError):
                continue  # a hand-edited record: not ours to interpret
        return records

    async def purge_instances(self, heartbeat_before_ms: int) -> int:
        result = await self._side_call(
            "instances",
            "purge old instance records",
            lambda c: c.delete_many(instance_purge_filter(heartbeat_before_ms)),
        )
        return result.deleted_count

    async def owner_holdings(self) -> list[OwnerHolding]:
        rows = await self._aggregate(owner_holdings_pipeline())
        return [
            OwnerHolding(
                owner=str(row["_id"]) if row.get("_id") is not None else "",
                jobs=int(row["jobs"]),
                last_heartbeat_ms=_ms_or_none(row.get("lastHeartbeat")),
                heartbeat_interval_ms=_int_or_none(row.get("heartbeatInterval")),
                # An owner whose claims all lack lockedAt has no longest-running job to name.
                longest_job_id=None if row.get("longestSince") is None else str(row["longest"]),
                longest_since_ms=_ms_or_none(row.get("longestSince")),
            )
            for row in rows
        ]

    async def owner_records(self, owner: str) -> OwnerRecords:
        docs = await self._call(
            "read an owner's jobs",
            lambda c: (
                c.find(owner_jobs_filter(owner), OWNER_STAMPS_PROJECTION)
                .sort([("_id", 1)])
                .max_time_ms(q.LIST_MAX_TIME_MS)
                .to_list(None)
            ),
        )
        jobs = tuple(
            OwnerJobStamp(
                str(doc["_id"]),
                _ms_or_none(doc.get("lastHeartbeat")),
                _ms_or_none(doc.get("lockedAt")),
                _int_or_none(doc.get("heartbeatInterval")),
            )
            for doc in docs
        )
        found = await self._side_call("instances", "read an instance record", lambda c: c.find_one({"_id": owner}))
        record = None
        if found is not None:
            try:
                record = _instance_record(found)
            except (KeyError, TypeError, ValueError):
                record = None  # a hand-edited record: not ours to interpret (as list_instances)
        return OwnerRecords(owner, record, jobs)

    async def release_unmoved_owner(self, owner: str, expected: OwnerRecords, now_ms: int) -> int | None:
        # MongoDB cannot join the registry into one write: the owner is looked at first, then
        # each document is released only if its stamps are still the ones just looked at. A
        # live owner beats all its jobs in one updateMany, so a beat that lands between the
        # look and the write reaches each job before this write does, or after it: before, the
        # job's stamps no longer match and it stays; after, the owner had been silent for the
        # whole watch (twice its interval), which is what dead means (ADR 0007).
        current = await self.owner_records(owner)
        if current.moved_since(expected):
            return None
        if not current.jobs:
            return 0
        result = await self._call(
            "release a dead owner's jobs",
            lambda c: c.update_many(unmoved_owner_filter(owner, current.jobs), q.to_pending_update(now_ms)),
        )
        return result.modified_count

    async def set_paused(self, name: str, paused: bool, now_ms: int) -> bool:
        key = {"_id": paused_document(name, now_ms)["_id"]}
        if paused:
            fields = {k: v for k, v in paused_document(name, now_ms).items() if k != "_id"}  # _id: the filter's
            result = await self._side_call(
                "control", "pause a job name", lambda c: c.update_one(key, {"$setOnInsert": fields}, upsert=True)
            )
            return result.upserted_id is not None
        deleted = await self._side_call("control", "resume a job name", lambda c: c.delete_one(key))
        return deleted.deleted_count > 0

    async def paused_names(self) -> dict[str, int]:
        docs = await self._side_call("control", "read paused job names", lambda c: c.find(PAUSED_FILTER).to_list(None))
        paused = {}
        for doc in docs:
            since = doc.get("since")
            if isinstance(doc.get("name"), str):
                paused[doc["name"]] = datetime_to_ms(since) if isinstance(since, datetime) else 0
        return dict(sorted(paused.items()))

    async def add_outcome_counts(
        self, counts: dict[tuple[str, int], tuple[int, int]], batch: str | None = None
    ) -> None:
        """One unordered bulk upsert, each row at most once per ``batch`` (``counter_upsert``).

        Rows answered E11000 are sent once more: if the row now holds the batch, E11000
        again means applied; if two processes raced to insert the row, the second try
        updates it. Any other failure raises; a write error names the rows not applied
        (``PartialCounterWriteError.unapplied``); a network error names none, and the
        caller sends the whole batch again with its id, which the rows already applied
        leave out."""
        if not counts:
            return
        batch = batch if batch is not None else str(ObjectId())
        keys = list(counts)
        side = self._side("counters")
        rows = list(range(len(keys)))
        for _ in range(2):
            operations = [
                pymongo.UpdateOne(*counter_upsert(*keys[row], *counts[keys[row]], batch), upsert=True) for row in rows
            ]
            try:
                with self._errors.guard("add outcome counters"):
                    await side.bulk_write(operations, ordered=False)
                return
            except ConnectionError as error:
                cause = error.__cause__
                if not isinstance(cause, BulkWriteError):
                    raise  # whether anything was applied is unknown: all again, with this id
                errors = cause.details.get("writeErrors", [])
                if cause.details.get("writeConcernErrors") or not all("index" in e for e in errors):
                    raise
                duplicate = [rows[int(e["index"])] for e in errors if e.get("code") == DUPLICATE_KEY]
                failed = [rows[int(e["index"])] for e in errors if e.get("code") != DUPLICATE_KEY]
                if failed:
                    # Unordered: every other row was applied. Only these may be added again.
                    unapplied = sorted(failed + duplicate)
                    raise PartialCounterWriteError(
                        str(error), {keys[row]: counts[keys[row]] for row in unapplied}
                    ) from cause
                rows = duplicate
        # E11000 twice: each of these rows exists and already holds this batch.

    async def outcome_counts(self, since_minute: int, name: str | None = None) -> list[tuple[str, int, int, int]]:
        docs = await self._side_call(
            "counters",
            "read outcome counters",
            lambda c: c.find(counters_filter(since_minute, name), {"batches": 0}).sort(COUNTERS_SORT).to_list(None),
        )
        return [
            (d["name"], int(d["minute"]), int(d.get("completed", 0)), int(d.get("failed", 0)))
            for d in docs
            if isinstance(d.get("name"), str)
        ]

    async def error_attempt_counts(
        self, keys: Sequence[str], since_minute: int
    ) -> tuple[dict[str, int], list[tuple[str, int, int]]]:
        """Two reads on the {name, minute} index: each group's first counter row (a
        ``$group`` whose ``$min`` the sorted index serves) and its rows since ``since_minute``."""
        if not keys:
            return {}, []
        names = [error_counter_name(key) for key in keys]
        skip = len(ERROR_COUNTER_PREFIX)

        async def first_rows(c: AsyncCollection[Any]) -> list[dict[str, Any]]:
            cursor = await c.aggregate(error_first_pipeline(names))
            found: list[dict[str, Any]] = await cursor.to_list(None)
            return found

        first_docs = await self._side_call("counters", "read error groups' first failures", first_rows)
        docs = await self._side_call(
            "counters",
            "read error groups' failed attempts",
            lambda c: c.find(error_counters_filter(names, since_minute), {"batches": 0}).to_list(None),
        )
        first = {
            d["_id"][skip:]: int(d["first"])
            for d in first_docs
            if isinstance(d.get("_id"), str) and isinstance(d.get("first"), int)
        }
        rows = [
            (d["name"][skip:], int(d["minute"]), int(d.get("failed", 0)))
            for d in docs
            if isinstance(d.get("name"), str) and isinstance(d.get("minute"), int)
        ]
        return first, rows

    async def purge_outcome_counts(self, before_minute: int) -> int:
        result = await self._side_call(
            "counters", "purge old outcome counters", lambda c: c.delete_many(counters_purge_filter(before_minute))
        )
        return result.deleted_count


def _instance_record(doc: Mapping[str, Any]) -> InstanceRecord:
    return InstanceRecord(
        id=str(doc["_id"]),
        host=str(doc.get("host", "")),
        pid=int(doc.get("pid", 0)),
        version=str(doc.get("version", "")),
        started_at_ms=datetime_to_ms(doc["startedAt"]),
        heartbeat_interval_ms=int(doc["heartbeatInterval"]),
        workers={str(w["name"]): int(w["concurrency"]) for w in doc.get("workers", [])},
        running=int(doc.get("running", 0)),
        processed=int(doc.get("processed", 0)),
        failed=int(doc.get("failed", 0)),
        last_heartbeat_ms=datetime_to_ms(doc["lastHeartbeat"]),
        supervisor=doc["supervisor"] if isinstance(doc.get("supervisor"), str) and doc["supervisor"] else None,
    )

"""The MongoDB documents each store operation sends: filters, updates, pipelines, sorts.

Pure functions of their arguments, with no driver calls, so every query can be read and
tested on its own (the tests evaluate them with mongomock, a query-language evaluator)
and so the store module is only plumbing. Shapes follow upstream Monque's services
(``job-processor.ts`` acquireJob / completeJob / failJob, ``job-manager.ts``,
``cursor-listing.ts``, ``job-query.ts``) so Node and Python workers on one collection send
the same queries and use the same indexes.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from bson import ObjectId

from ...cursor import CursorAnchor
from ...job import CursorDirection, Job, JobSort, JobStatus, NewJob
from ...timeutil import ms_to_datetime
from ..base import StoreListFilter, StoreSelector

Document = dict[str, Any]

PENDING = JobStatus.PENDING.value
PROCESSING = JobStatus.PROCESSING.value
COMPLETED = JobStatus.COMPLETED.value
FAILED = JobStatus.FAILED.value
CANCELLED = JobStatus.CANCELLED.value

#: Fields a release removes. ``heartbeatInterval`` is kept: DESIGN §3 says it is written on
#: claim and kept afterwards (the SQLite store does the same), so both stores agree.
CLAIM_FIELDS = ("lockedAt", "claimedBy", "lastHeartbeat")
SORT_FIELDS = {"id": "_id", "created_at": "createdAt", "updated_at": "updatedAt", "next_run_at": "nextRunAt"}
#: Upstream's stats aggregation is bounded at 30 s (job-query.ts, maxTimeMS: 30000).
STATS_MAX_TIME_MS = 30_000
_HEX = re.compile(r"[0-9a-f]{1,24}")


def dt(ms: int) -> datetime:
    """Epoch ms -> aware UTC datetime (BSON date, ms precision: exact round trip)."""
    return ms_to_datetime(ms)


def oid(job_id: str) -> ObjectId:
    return ObjectId(job_id)


def _unset(*fields: str) -> Document:
    return {field: "" for field in fields}


# -- intake ---------------------------------------------------------------------------------
def new_job_document(job: NewJob) -> Document:
    """A new pending job exactly as Node Monque writes one (camelCase, dates, ObjectId)."""
    return job.to_job().to_document()


def unique_key_filter(name: str, unique_key: str) -> Document:
    """The dedup scope: same name and key among live (pending/processing) jobs — the same
    predicate as the partial unique index, so the upsert and the index agree."""
    return {"name": name, "uniqueKey": unique_key, "status": {"$in": [PENDING, PROCESSING]}}


def unique_insert_update(job: NewJob) -> Document:
    """``$setOnInsert`` the whole document: an existing live job is returned unchanged."""
    return {"$setOnInsert": new_job_document(job)}


# -- processing --------------------------------------------------------------------------------
def claim_filter(name: str, now_ms: int) -> Document:
    """Upstream acquireJob: earliest due pending job of ``name`` nobody claimed."""
    return {
        "name": name,
        "status": PENDING,
        "nextRunAt": {"$lte": dt(now_ms)},
        "$or": [{"claimedBy": None}, {"claimedBy": {"$exists": False}}],
    }


CLAIM_SORT: list[tuple[str, int]] = [("nextRunAt", 1)]


def claim_update(owner: str, now_ms: int, heartbeat_interval_ms: int) -> Document:
    now = dt(now_ms)
    return {
        "$set": {
            "status": PROCESSING,
            "claimedBy": owner,
            "lockedAt": now,
            "lastHeartbeat": now,
            "heartbeatInterval": heartbeat_interval_ms,
            "updatedAt": now,
        }
    }


def owned_filter(job_id: str, owner: str) -> Document:
    """Owned transitions apply only while the job is still processing by ``owner``."""
    return {"_id": oid(job_id), "status": PROCESSING, "claimedBy": owner}


def complete_update(now_ms: int, next_run_at_ms: int | None) -> Document:
    now = dt(now_ms)
    if next_run_at_ms is None:
        return {"$set": {"status": COMPLETED, "updatedAt": now}, "$unset": _unset(*CLAIM_FIELDS, "failReason")}
    return {
        "$set": {"status": PENDING, "nextRunAt": dt(next_run_at_ms), "failCount": 0, "updatedAt": now},
        "$unset": _unset(*CLAIM_FIELDS, "failReason"),
    }


def fail_update(now_ms: int, fail_count: int, reason: str, retry_at_ms: int | None) -> Document:
    now = dt(now_ms)
    if retry_at_ms is None:
        fields: Document = {"status": FAILED, "failCount": fail_count, "failReason": reason, "updatedAt": now}
    else:
        fields = {
            "status": PENDING,
            "failCount": fail_count,
            "failReason": reason,
            "nextRunAt": dt(retry_at_ms),
            "updatedAt": now,
        }
    return {"$set": fields, "$unset": _unset(*CLAIM_FIELDS)}


def release_filter(job_ids: list[str], owner: str) -> Document:
    return {"_id": {"$in": [oid(i) for i in job_ids]}, "status": PROCESSING, "claimedBy": owner}


def to_pending_update(now_ms: int) -> Document:
    """Release and stale recovery: back to pending, claim fields removed."""
    return {"$set": {"status": PENDING, "updatedAt": dt(now_ms)}, "$unset": _unset(*CLAIM_FIELDS)}


def heartbeat_filter(owner: str) -> Document:
    return {"claimedBy": owner, "status": PROCESSING}


def heartbeat_update(now_ms: int) -> Document:
    now = dt(now_ms)
    return {"$set": {"lastHeartbeat": now, "updatedAt": now}}


def stale_filter(locked_before_ms: int) -> Document:
    return {"status": PROCESSING, "lockedAt": {"$lt": dt(locked_before_ms)}}


def purge_filter(status: JobStatus, updated_before_ms: int) -> Document:
    """Retention (upstream cleanupJobs): served by the partial {status, updatedAt} index."""
    return {"status": status.value, "updatedAt": {"$lt": dt(updated_before_ms)}}


def live_claim_filter(owner: str, heartbeat_after_ms: int) -> Document:
    return {"claimedBy": owner, "status": PROCESSING, "lastHeartbeat": {"$gt": dt(heartbeat_after_ms)}}


def next_due_filter(names: list[str]) -> Document:
    return {"status": PENDING, "name": {"$in": names}}


# -- selectors and listing filters -------------------------------------------------------------------
def selector_filter(selector: StoreSelector) -> Document:
    """Upstream buildSelectorQuery: name, status (one or many), createdAt < / >; ours: updatedAt <."""
    query: Document = {}
    if selector.name is not None:
        query["name"] = selector.name
    if selector.statuses is not None:
        query["status"] = {"$in": [s.value for s in selector.statuses]}
    created: Document = {}
    if selector.created_before_ms is not None:
        created["$lt"] = dt(selector.created_before_ms)
    if selector.created_after_ms is not None:
        created["$gt"] = dt(selector.created_after_ms)
    if created:
        query["createdAt"] = created
    if selector.updated_before_ms is not None:
        query["updatedAt"] = {"$lt": dt(selector.updated_before_ms)}
    return query


def _search_clause(search: str) -> Document:
    """Id prefix (as an ObjectId range, so it uses the _id index), id suffix (ours: consoles show
    the last 8 hex digits), or unique-key substring."""
    clauses: list[Document] = [{"uniqueKey": {"$regex": re.escape(search)}}]
    prefix = search.lower()
    if _HEX.fullmatch(prefix):
        low = ObjectId(prefix.ljust(24, "0"))
        high = ObjectId(prefix.ljust(24, "f"))
        clauses.insert(0, {"_id": {"$gte": low, "$lte": high}})
        clauses.insert(1, {"$expr": {"$regexMatch": {"input": {"$toString": "$_id"}, "regex": f"{prefix}$"}}})
    return {"$or": clauses}


def list_filter(filter: StoreListFilter) -> Document:
    """Cursor-listing filter (upstream cursor-listing.ts): inclusive date bounds."""
    query: Document = {}
    if filter.name is not None:
        query["name"] = filter.name
    if filter.statuses is not None:
        query["status"] = {"$in": [s.value for s in filter.statuses]}
    bounds = (
        ("createdAt", filter.created_from_ms, filter.created_to_ms),
        ("updatedAt", filter.updated_from_ms, filter.updated_to_ms),
        ("nextRunAt", filter.next_run_from_ms, filter.next_run_to_ms),
    )
    for field, low, high in bounds:
        rng: Document = {}
        if low is not None:
            rng["$gte"] = dt(low)
        if high is not None:
            rng["$lte"] = dt(high)
        if rng:
            query[field] = rng
    if filter.recurring is not None:
        query["repeatInterval"] = {"$exists": True, "$ne": None} if filter.recurring else {"$in": [None]}
    if filter.search:
        query.setdefault("$and", []).append(_search_clause(filter.search))
    return query


def page_query(
    filter: StoreListFilter, sort: JobSort, direction: CursorDirection, anchor: CursorAnchor | None
) -> tuple[Document, list[tuple[str, int]]]:
    """Keyset page: the filter plus "strictly past the anchor", and the traversal sort.

    Backward pages traverse in the opposite order (the caller reverses them), exactly as
    upstream's cursor listing: ``$or: [{f: {$gt: v}}, {f: v, _id: {$gt: id}}]``.
    """
    query = list_filter(filter)
    ascending = (sort.direction == "asc") == (direction == "forward")
    order = 1 if ascending else -1
    op = "$gt" if ascending else "$lt"
    field = SORT_FIELDS[sort.by]
    if anchor is not None:
        if sort.by == "id":
            keyset: Document = {"_id": {op: oid(anchor.job_id)}}
        else:
            assert anchor.value_ms is not None
            value = dt(anchor.value_ms)
            keyset = {"$or": [{field: {op: value}}, {field: value, "_id": {op: oid(anchor.job_id)}}]}
        query.setdefault("$and", []).append(keyset)
    sort_spec = [("_id", order)] if sort.by == "id" else [(field, order), ("_id", order)]
    return query, sort_spec


FIND_SORT: list[tuple[str, int]] = [("nextRunAt", 1), ("_id", 1)]
NO_DATA_PROJECTION: Document = {"data": 0}


# -- statistics --------------------------------------------------------------------------------------
_DURATION = {"$cond": [{"$eq": ["$status", COMPLETED]}, {"$subtract": ["$updatedAt", "$createdAt"]}, 0]}


def stats_pipeline(name: str | None) -> list[Document]:
    """One aggregation: count per status and the summed completed duration (updatedAt −
    createdAt, so it includes queue wait, as upstream's avgProcessingDurationMs)."""
    match: Document = {} if name is None else {"name": name}
    return [
        {"$match": match},
        {"$group": {"_id": "$status", "count": {"$sum": 1}, "durationMs": {"$sum": _DURATION}}},
    ]


def stats_by_name_pipeline() -> list[Document]:
    return [
        {"$group": {
            "_id": {"name": "$name", "status": "$status"},
            "count": {"$sum": 1},
            "durationMs": {"$sum": _DURATION},
        }},
    ]


# -- management --------------------------------------------------------------------------------------
def guarded_filter(job_id: str, statuses: tuple[str, ...]) -> Document:
    if len(statuses) == 1:
        return {"_id": oid(job_id), "status": statuses[0]}
    return {"_id": oid(job_id), "status": {"$in": list(statuses)}}


def cancel_update(now_ms: int) -> Document:
    return {"$set": {"status": CANCELLED, "updatedAt": dt(now_ms)}}


RETRYABLE = (FAILED, CANCELLED)


def retry_update(now_ms: int) -> Document:
    """Manual retry: pending now, failCount 0, failReason and claim fields removed."""
    now = dt(now_ms)
    return {
        "$set": {"status": PENDING, "failCount": 0, "nextRunAt": now, "updatedAt": now},
        "$unset": _unset("failReason", *CLAIM_FIELDS),
    }


def retried_job(before: Job, now_ms: int) -> Job:
    """The job as ``retry_update`` leaves it, computed from the pre-image the atomic
    findOneAndUpdate returned (we need the previous status, and one round trip suffices)."""
    return before.replace(
        status=JobStatus.PENDING, fail_count=0, next_run_at_ms=now_ms, updated_at_ms=now_ms,
        fail_reason=None, locked_at_ms=None, claimed_by=None, last_heartbeat_ms=None,
    )


def reschedule_update(run_at_ms: int, now_ms: int) -> Document:
    return {"$set": {"nextRunAt": dt(run_at_ms), "updatedAt": dt(now_ms)}}


def retry_many_pipeline(now_ms: int, spread_ms: int) -> list[Document]:
    """Bulk retry as one pipeline update: ``nextRunAt = now + floor($rand × spread)`` per
    document, so a mass retry spreads over now … now+spread instead of stampeding."""
    now = dt(now_ms)
    spread = max(1, int(spread_ms))
    return [
        {"$set": {
            "status": PENDING,
            "failCount": 0,
            "nextRunAt": {"$add": [now, {"$floor": {"$multiply": [{"$rand": {}}, spread]}}]},
            "updatedAt": now,
        }},
        {"$unset": ["failReason", *CLAIM_FIELDS]},
    ]

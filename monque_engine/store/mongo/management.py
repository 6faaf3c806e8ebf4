"""The Management port on MongoDB: cancel, retry, reschedule and delete, one job at a time
(a ``findOneAndUpdate`` whose filter carries the status guard) or by selector (one
``updateMany`` / ``deleteMany`` under the long deadline; bulk retry in ``retry.py``), and
the counts a confirmation shows before a bulk action.
"""

from __future__ import annotations

from typing import Any

import pymongo
from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from ...errors import ConnectionError, UniqueKeyConflictError
from ...job import Job, JobStatus
from ...timeutil import now_ms as clock_ms
from .. import guards
from ..base import StoreSelector
from . import documents as q
from .documents import CANCELLED, CLAIM_FIELDS, ERROR_FIELDS, PENDING, Document, _unset, dt, oid
from .plumbing import LONG_OPERATION_TIMEOUT_S, LONG_TIMEOUT_HINT, UNIQUE_INSERT_ATTEMPTS, MongoPlumbing, _valid
from .retry import bulk_retry


def guarded_filter(job_id: str, statuses: tuple[str, ...]) -> Document:
    if len(statuses) == 1:
        return {"_id": oid(job_id), "status": statuses[0]}
    return {"_id": oid(job_id), "status": {"$in": list(statuses)}}


def cancel_update(now_ms: int) -> Document:
    return {"$set": {"status": CANCELLED, "updatedAt": dt(now_ms)}}


#: The statuses each guarded action may touch, as its filter holds them: the one definition
#: in ``store/guards.py`` (the scheduler and the SQLite statements read it too).
CANCEL_GUARD = guards.values(guards.CANCEL)
RETRYABLE = guards.values(guards.RETRY)
RESCHEDULE_GUARD = guards.values(guards.RESCHEDULE)


def retry_update(now_ms: int) -> Document:
    """Manual retry: pending now, failCount 0, failReason and claim fields removed."""
    now = dt(now_ms)
    return {
        "$set": {"status": PENDING, "failCount": 0, "nextRunAt": now, "updatedAt": now},
        "$unset": _unset("failReason", *CLAIM_FIELDS, *ERROR_FIELDS),
    }


def retried_job(before: Job, now_ms: int) -> Job:
    """The job as ``retry_update`` leaves it, computed from the pre-image the atomic
    findOneAndUpdate returned (we need the previous status, and one round trip suffices)."""
    return before.replace(
        status=JobStatus.PENDING,
        fail_count=0,
        next_run_at_ms=now_ms,
        updated_at_ms=now_ms,
        fail_reason=None,
        locked_at_ms=None,
        claimed_by=None,
        last_heartbeat_ms=None,
        error_type=None,
        error_group=None,
    )


def reschedule_update(run_at_ms: int, now_ms: int) -> Document:
    return {"$set": {"nextRunAt": dt(run_at_ms), "updatedAt": dt(now_ms)}}


def retry_many_pipeline(now_ms: int, spread_ms: int) -> list[Document]:
    """Bulk retry as one pipeline update: ``nextRunAt = now + $rand × spread`` per document,
    so a mass retry spreads over now … now+spread instead of stampeding.

    The stagger term is upstream's (job-manager.ts retryJobs) without a ``$floor``: the
    server turns date + double into a whole-millisecond date itself, so both sides send
    the same pipeline. ``heartbeatInterval`` is kept, where upstream unsets it (DESIGN §3:
    written on claim, kept afterwards; docs/stores.md lists this difference).
    """
    now = dt(now_ms)
    spread = max(1, int(spread_ms))
    return [
        {
            "$set": {
                "status": PENDING,
                "failCount": 0,
                "nextRunAt": {"$add": [now, {"$multiply": [{"$rand": {}}, spread]}]},
                "updatedAt": now,
            }
        },
        {"$unset": ["failReason", *CLAIM_FIELDS, *ERROR_FIELDS]},
    ]


class MongoManagement(MongoPlumbing):
    """``JobStore``'s management methods on MongoDB (composed into ``MongoStore``)."""

    async def _guarded(self, action: str, job_id: str, statuses: tuple[str, ...], update: dict[str, Any]) -> Job | None:
        if not _valid(job_id):
            return None
        doc = await self._call(
            action,
            lambda c: c.find_one_and_update(
                guarded_filter(job_id, statuses), update, return_document=ReturnDocument.AFTER
            ),
        )
        return self._job(doc)

    async def cancel(self, job_id: str, now_ms: int) -> Job | None:
        return await self._guarded("cancel a job", job_id, CANCEL_GUARD, cancel_update(now_ms))

    async def retry(self, job_id: str, now_ms: int) -> tuple[Job, JobStatus] | None:
        """Guarded retry; E11000 from the partial unique index means another live job holds
        the key: raise UniqueKeyConflictError naming it. If that holder finished between the
        write and our look-up, the write is tried again."""
        if not _valid(job_id):
            return None
        await self._require_unique_index()
        collection = self._coll()
        with self._errors.guard("retry a job"):
            for _ in range(UNIQUE_INSERT_ATTEMPTS):
                try:
                    before = await collection.find_one_and_update(
                        guarded_filter(job_id, RETRYABLE),
                        retry_update(now_ms),
                        return_document=ReturnDocument.BEFORE,
                    )
                except DuplicateKeyError as error:
                    conflict = await self._retry_conflict(collection, job_id)
                    if conflict is not None:
                        raise conflict from error
                    continue
                if before is None:
                    return None
                job = Job.from_document(before)
                return retried_job(job, now_ms), job.status
        raise ConnectionError(f"Could not retry job {job_id} on {self.display_url}: its unique key kept clashing")

    @staticmethod
    async def _retry_conflict(collection: AsyncCollection[Any], job_id: str) -> UniqueKeyConflictError | None:
        doc = await collection.find_one({"_id": ObjectId(job_id)}, projection={"name": 1, "uniqueKey": 1})
        if doc is None or not isinstance(doc.get("uniqueKey"), str):
            return None
        holder = await collection.find_one(q.unique_key_filter(doc["name"], doc["uniqueKey"]), projection={"_id": 1})
        if holder is None:
            return None
        return UniqueKeyConflictError(job_id, doc["name"], doc["uniqueKey"], str(holder["_id"]))

    async def reschedule(self, job_id: str, run_at_ms: int, now_ms: int) -> Job | None:
        return await self._guarded("reschedule a job", job_id, RESCHEDULE_GUARD, reschedule_update(run_at_ms, now_ms))

    async def delete(self, job_id: str) -> bool:
        if not _valid(job_id):
            return False
        result = await self._call("delete a job", lambda c: c.delete_one({"_id": ObjectId(job_id)}))
        return result.deleted_count > 0

    async def count_selected(self, selector: StoreSelector) -> int:
        query = await self._selector_query(selector)
        return await self._call(
            "count selected jobs",
            lambda c: c.count_documents(query, maxTimeMS=q.LIST_MAX_TIME_MS),
            q.LIST_TIMEOUT_HINT,
        )

    async def count_selected_as_of(self, selector: StoreSelector) -> tuple[int, int]:
        """The count and this process's clock just before it (ms): on MongoDB the bound is a
        time, ``updatedAt`` before it (``documents.selector_filter``), because writers, Node
        Monque's among them, stamp ``updatedAt`` with their own clocks and the schema has no
        commit-order field. What that promises is in docs/engine.md (Management)."""
        position = clock_ms()
        if selector.as_of is not None:
            position = selector.as_of
        return await self.count_selected(selector), position

    async def cancel_many(self, selector: StoreSelector, now_ms: int) -> int:
        query = await self._selector_query(selector)
        result = await self._long_call("cancel jobs", lambda c: c.update_many(query, cancel_update(now_ms)))
        return result.modified_count

    async def retry_many(
        self, selector: StoreSelector, now_ms: int, spread_ms: int
    ) -> tuple[int, list[dict[str, str]]]:
        """Every selected job retried but those whose unique key another live job holds,
        each of those listed as ``{"jobId", "error"}`` (see ``bulk_retry``)."""
        await self._require_unique_index()
        query = await self._selector_query(selector)
        collection = self._coll()
        with self._errors.guard("retry jobs", LONG_TIMEOUT_HINT), pymongo.timeout(LONG_OPERATION_TIMEOUT_S):
            result = await bulk_retry(collection, query, retry_many_pipeline(now_ms, spread_ms))
        if result is None:
            raise ConnectionError(f"Could not retry jobs on {self.display_url}: unique keys kept clashing; try again")
        return result

    async def delete_many(self, selector: StoreSelector) -> int:
        query = await self._selector_query(selector)
        result = await self._long_call("delete jobs", lambda c: c.delete_many(query))
        return result.deleted_count

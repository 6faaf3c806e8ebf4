"""The Retention port on MongoDB: deleting finished jobs past their age, and the lease
that lets one process at a time do it.

Upstream's cleanup is one ``deleteMany`` (``purge_finished``); ``purge_finished_batch``
deletes a bounded batch per write, oldest first, each a small oplog burst. The lease is a
document in the control side collection, taken by an upsert that collides (E11000) while
another holder's lease runs.
"""

from __future__ import annotations

from typing import Any

from pymongo.errors import DuplicateKeyError

from ...job import JobStatus
from .documents import Document, dt
from .plumbing import MongoPlumbing


def purge_filter(status: JobStatus, updated_before_ms: int) -> Document:
    """Retention (upstream cleanupJobs): served by the partial {status, updatedAt} index."""
    return {"status": status.value, "updatedAt": {"$lt": dt(updated_before_ms)}}


#: Oldest first: an interrupted purge has removed the longest-expired jobs.
PURGE_SORT: list[tuple[str, int]] = [("updatedAt", 1)]


def purge_batch_filter(query: Document, ids: list[Any]) -> Document:
    """The ids a purge batch found, still matching the purge filter when deleted."""
    return {**query, "_id": {"$in": ids}}


def lease_key(duty: str) -> str:
    return f"lease:{duty}"


def lease_filter(duty: str, holder: str, now_ms: int) -> Document:
    """The lease document when ``holder`` may take it: ours already, or expired. Expiry is
    judged by the caller's clock against the holder's (both NTP-synchronised hosts: skew is
    seconds, the lease lasts two retention intervals)."""
    return {"_id": lease_key(duty), "$or": [{"holder": holder}, {"expiresAt": {"$lt": dt(now_ms)}}]}


def lease_update(duty: str, holder: str, now_ms: int, ttl_ms: int) -> Document:
    return {
        "$set": {
            "kind": "lease",
            "duty": duty,
            "holder": holder,
            "renewedAt": dt(now_ms),
            "expiresAt": dt(now_ms + ttl_ms),
        }
    }


def lease_release_filter(duty: str, holder: str) -> Document:
    return {"_id": lease_key(duty), "holder": holder}


class MongoRetention(MongoPlumbing):
    """``JobStore``'s retention methods on MongoDB (composed into ``MongoStore``)."""

    async def purge_finished(self, status: JobStatus, updated_before_ms: int) -> int:
        result = await self._long_call(
            "delete expired jobs", lambda c: c.delete_many(purge_filter(status, updated_before_ms))
        )
        return result.deleted_count

    async def purge_finished_batch(self, status: JobStatus, updated_before_ms: int, limit: int) -> int:
        """At most ``limit`` expired jobs in one write: their ids from the partial
        ``{status, updatedAt}`` index, then ``deleteMany`` of those ids *and* the same
        filter, so a job retried between the two is left alone. Each write is small, so it
        needs no long deadline and makes one small oplog burst (issue 27)."""
        query = purge_filter(status, updated_before_ms)
        docs = await self._call(
            "find expired jobs",
            lambda c: c.find(query, {"_id": 1}).sort(PURGE_SORT).limit(limit).to_list(None),
        )
        if not docs:
            return 0
        ids = [doc["_id"] for doc in docs]
        result = await self._call("delete expired jobs", lambda c: c.delete_many(purge_batch_filter(query, ids)))
        return int(result.deleted_count)

    async def acquire_lease(self, duty: str, holder: str, now_ms: int, ttl_ms: int) -> bool:
        """One upsert on the control collection: it matches when the lease is ours or has
        expired, and inserts it when there is none; when another holder's lease runs, the
        upsert's insert collides on ``_id`` (E11000), which means "not yours"."""
        key, update = lease_filter(duty, holder, now_ms), lease_update(duty, holder, now_ms, ttl_ms)
        control = self._side("control")
        with self._errors.guard(f"take the {duty} lease"):
            try:
                await control.update_one(key, update, upsert=True)
            except DuplicateKeyError:
                return False
        return True

    async def release_lease(self, duty: str, holder: str) -> None:
        await self._side_call(
            "control", f"release the {duty} lease", lambda c: c.delete_one(lease_release_filter(duty, holder))
        )

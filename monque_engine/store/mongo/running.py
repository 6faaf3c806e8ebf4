"""Writes about a running job on MongoDB (issue 37 parts 2 and 3, ADR 0019): an operator's
stop request, the owner ending a stopped run ``cancelled``, and the handler's progress.

``stopRequestedAt`` and ``progress`` are fields of ours, which Node workers carry along
unread. A stop request is guarded by the claim the operator saw (``status``, ``claimedBy``
and ``lockedAt``), so it never reaches a later run, and stamped no earlier than that claim
(``max(now, lockedAt)``), which is how readers tell it belongs to the running attempt. The
owner hears of it through its change stream (an update that sets ``stopRequestedAt`` passes
the worker's narrowed pipeline, ``changes.worker_pipeline``) or, with streams off, through
``stop_requests`` on its heartbeat.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ReturnDocument

from ...attempts import Attempt
from ...job import Job
from ...run_progress import Progress
from ...timeutil import datetime_to_ms
from .claims import owned_filter, push_attempt
from .documents import CANCELLED, CLAIM_FIELDS, PROCESSING, STOP_REQUEST_FIELD, Document, _unset, dt, oid
from .plumbing import MongoPlumbing, _valid


def stop_filter(job_id: str, owner: str, locked_at_ms: int) -> Document:
    """The attempt the operator saw: still processing, by the same owner, from the same claim."""
    return {"_id": oid(job_id), "status": PROCESSING, "claimedBy": owner, "lockedAt": dt(locked_at_ms)}


def stop_update(locked_at_ms: int, now_ms: int) -> Document:
    return {"$set": {STOP_REQUEST_FIELD: dt(max(now_ms, locked_at_ms)), "updatedAt": dt(now_ms)}}


def cancelled_update(now_ms: int, attempt: Attempt) -> Document:
    """The owner ends a stopped run: cancelled, the claim released, the attempt recorded."""
    return {
        "$set": {"status": CANCELLED, "updatedAt": dt(now_ms)},
        "$unset": _unset(*CLAIM_FIELDS),
        "$push": push_attempt(attempt),
    }


def progress_update(now_ms: int, progress: Progress) -> Document:
    return {"$set": {"progress": progress.as_mapping(dt), "updatedAt": dt(now_ms)}}


def _ms(value: Any) -> int | None:
    return datetime_to_ms(value) if isinstance(value, datetime) else None


class MongoRunning(MongoPlumbing):
    """``JobStore``'s running-job methods on MongoDB (composed into ``MongoStore``)."""

    async def request_stop(self, job_id: str, owner: str, locked_at_ms: int, now_ms: int) -> Job | None:
        if not _valid(job_id):
            return None
        doc = await self._call(
            "request a running job's stop",
            lambda c: c.find_one_and_update(
                stop_filter(job_id, owner, locked_at_ms),
                stop_update(locked_at_ms, now_ms),
                return_document=ReturnDocument.AFTER,
            ),
        )
        return self._job(doc)

    async def stop_requests(self, owner: str, job_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        ids = [oid(i) for i in job_ids if _valid(i)]
        if not ids:
            return {}
        query: Document = {
            "_id": {"$in": ids},
            "status": PROCESSING,
            "claimedBy": owner,
            STOP_REQUEST_FIELD: {"$exists": True},
        }
        projection = {"lockedAt": 1, STOP_REQUEST_FIELD: 1}
        docs = await self._call("look for stop requests", lambda c: c.find(query, projection).to_list(None))
        found: dict[str, tuple[int, int]] = {}
        for doc in docs:
            locked, stop = _ms(doc.get("lockedAt")), _ms(doc.get(STOP_REQUEST_FIELD))
            if locked is not None and stop is not None:
                found[str(doc["_id"])] = (locked, stop)
        return found

    async def cancel_owned(self, job_id: str, owner: str, now_ms: int, attempt: Attempt) -> Job | None:
        if not _valid(job_id):
            return None
        doc = await self._call(
            "cancel a stopped job",
            lambda c: c.find_one_and_update(
                owned_filter(job_id, owner), cancelled_update(now_ms, attempt), return_document=ReturnDocument.AFTER
            ),
        )
        return self._job(doc)

    async def report_progress(self, job_id: str, owner: str, now_ms: int, progress: Progress) -> bool:
        if not _valid(job_id):
            return False
        result = await self._call(
            "report a job's progress",
            lambda c: c.update_one(owned_filter(job_id, owner), progress_update(now_ms, progress)),
        )
        return bool(result.modified_count > 0)

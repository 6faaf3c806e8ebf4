"""The Claims port on MongoDB: claiming due jobs and the writes an owner makes under its
claim (complete, fail, record an attempt, release), and when the next job is due.

Each claim is upstream's ``findOneAndUpdate`` on the earliest due pending job (several at
once, in waves: ``MongoClaims.claim``); every owned
write carries the guard (still processing, still this owner's) in its filter, so a job
another worker recovered or released is never overwritten.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pymongo import ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from ...attempts import MAX_ATTEMPTS, Attempt
from ...errors import ConnectionError, InvalidJobDocumentError
from ...job import Job
from ...timeutil import datetime_to_ms
from . import documents as q
from .documents import CLAIM_FIELDS, COMPLETED, ERROR_FIELDS, FAILED, PENDING, PROCESSING, Document, _unset, dt, oid
from .plumbing import MongoPlumbing, _valid, log


def claim_filter(name: str, now_ms: int) -> Document:
    """Upstream claimNext (job-lifecycle.ts): the earliest due pending job of ``name``.

    No condition on ``claimedBy``: upstream dropped its ``$or`` on a null owner, since
    ``status: pending`` alone says the job is free. A pending document that still names
    an owner (written by hand or by an older release) is claimed like any other.
    """
    return {"name": name, "status": PENDING, "nextRunAt": {"$lte": dt(now_ms)}}


CLAIM_SORT: list[tuple[str, int]] = [("nextRunAt", 1)]
#: The largest wave of concurrent claims (``MongoClaims.claim``): a worker with 100 free
#: slots holds at most this many of the pool's connections (100 by default) for claims.
CLAIM_WAVE_MAX = 16


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


def owned_filter_by_oid(job_id: Any, owner: str) -> Document:
    return {"_id": job_id, "status": PROCESSING, "claimedBy": owner}


def unreadable_update(now_ms: int, reason: str) -> Document:
    """A claimed document we cannot read: failed, with why, so no worker claims it again."""
    return {"$set": {"status": FAILED, "failReason": reason, "updatedAt": dt(now_ms)}, "$unset": _unset(*CLAIM_FIELDS)}


def push_attempt(attempt: Attempt) -> Document:
    """``$push`` of one history record, keeping the newest ``MAX_ATTEMPTS`` (``$slice``)."""
    return {"attempts": {"$each": [attempt.to_document()], "$slice": -MAX_ATTEMPTS}}


def complete_update(
    now_ms: int, next_run_at_ms: int | None, attempt: Attempt | None = None, result: Any = None
) -> Document:
    """Upstream's completeJob, plus (ours) the attempt record, the error fields removed and
    the handler's ``result`` (ADR 0020: a schedule's run returning None removes the last
    run's). Node Monque leaves ``attempts``, ``errorType``, ``errorGroup`` and ``result`` alone."""
    now = dt(now_ms)
    if next_run_at_ms is None:
        update: Document = {
            "$set": {"status": COMPLETED, "updatedAt": now},
            "$unset": _unset(*CLAIM_FIELDS, "failReason", *ERROR_FIELDS),
        }
    else:
        update = {
            "$set": {"status": PENDING, "nextRunAt": dt(next_run_at_ms), "failCount": 0, "updatedAt": now},
            "$unset": _unset(*CLAIM_FIELDS, "failReason", *ERROR_FIELDS),
        }
    if result is not None:
        update["$set"]["result"] = result
    elif next_run_at_ms is not None:
        update["$unset"]["result"] = ""
    if attempt is not None:
        update["$push"] = push_attempt(attempt)
    return update


def fail_update(
    now_ms: int,
    fail_count: int,
    reason: str,
    retry_at_ms: int | None,
    attempt: Attempt | None = None,
    error_group: str | None = None,
) -> Document:
    """Upstream's failJob (failReason exactly as upstream), plus (ours) the attempt record
    and the error type and group the errors view groups by."""
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
    unset = _unset(*CLAIM_FIELDS)
    for field, value in (("errorType", attempt.error_type if attempt else None), ("errorGroup", error_group)):
        if value is not None:
            fields[field] = value
        else:
            unset[field] = ""
    update: Document = {"$set": fields, "$unset": unset}
    if attempt is not None:
        update["$push"] = push_attempt(attempt)
    return update


def record_attempt_update(attempt: Attempt) -> Document:
    """A shutdown gave up on an owned job: only the history changes (it stays processing)."""
    return {"$push": push_attempt(attempt)}


def over_limit_update(now_ms: int) -> Document:
    """A sync handler ran past its time limit and goes on (ADR 0019): ``overLimitAt``, a field
    Node workers do not know and leave alone, says so; the job stays processing and owned."""
    return {"$set": {"overLimitAt": dt(now_ms), "updatedAt": dt(now_ms)}}


def release_filter(job_ids: list[str], owner: str) -> Document:
    return {"_id": {"$in": [oid(i) for i in job_ids]}, "status": PROCESSING, "claimedBy": owner}


def next_due_filter(names: list[str]) -> Document:
    """Pending jobs of these names with a *date* nextRunAt: BSON sorts strings and numbers
    before dates, so a value a JavaScript caller wrote as a string must not come first.
    ``$type`` gives index bounds on the {status, nextRunAt} index."""
    return {"status": PENDING, "name": {"$in": names}, "nextRunAt": {"$type": "date"}}


class MongoClaims(MongoPlumbing):
    """``JobStore``'s claim and owned-write methods on MongoDB (composed into ``MongoStore``)."""

    async def claim(self, name: str, owner: str, now_ms: int, limit: int, heartbeat_interval_ms: int) -> list[Job]:
        """Upstream claimNext, once per free slot, in waves of 1, 2, 4 … concurrent claims
        (at most ``CLAIM_WAVE_MAX``) until a claim misses (nothing more is due) or ``limit``
        is reached.

        Each claim is still upstream's one atomic ``findOneAndUpdate`` with every guard of
        its filter; only their round trips overlap (issue 36 item 6: a worker with N free
        slots waited N sequential ``w:majority`` round trips, about log2(N) + 1 now). A miss
        costs an index probe and no write; a wave wastes at most its own size in probes.
        One round trip for N claims is not possible safely: a multi-document update takes
        neither a sort (before MongoDB 8.0) nor returns what it claimed.

        Each claim is its own atomic write, so each is handled on its own: when one fails,
        the others already committed as ours are returned to run (dropping them would orphan
        them, and our heartbeats would keep them looking alive) and no further wave starts.
        The error is logged; it is raised only when nothing was claimed.
        """
        collection = self._coll()
        query = claim_filter(name, now_ms)
        update = claim_update(owner, now_ms, heartbeat_interval_ms)
        jobs: list[Job] = []
        failure: BaseException | None = None
        wave = 1
        while len(jobs) < limit and failure is None:
            results = await asyncio.gather(
                *(
                    collection.find_one_and_update(query, update, sort=CLAIM_SORT, return_document=ReturnDocument.AFTER)
                    for _ in range(min(wave, limit - len(jobs)))
                ),
                return_exceptions=True,
            )
            missed = False
            for result in results:
                if isinstance(result, Exception):
                    failure = failure or result
                elif isinstance(result, BaseException):
                    raise result  # cancelled: as a sequential claim would be
                elif result is None:
                    missed = True
                else:
                    job = await self._claimed(collection, result, owner, now_ms)
                    if job is not None:
                        jobs.append(job)
            if missed:
                break
            wave = min(wave * 2, CLAIM_WAVE_MAX)
        if failure is not None:
            # Claims committed as ours whatever failed in another (a network error, or a
            # reply that could not be decoded): run them rather than orphan them.
            error = (
                self._errors.translate("claim jobs", failure)
                if isinstance(failure, PyMongoError)
                else ConnectionError(
                    f"MongoDB could not claim jobs on {self.display_url}: {type(failure).__name__}: "
                    f"{self._mask(str(failure))}"
                )
            )
            if not jobs:
                raise error from failure
            log.warning(
                "claimed %d job(s) of %r, then a claim failed; running those, the rest wait for the next poll: %s",
                len(jobs),
                name,
                error,
            )
        return jobs

    async def _claimed(
        self, collection: AsyncCollection[Any], doc: Mapping[str, Any], owner: str, now_ms: int
    ) -> Job | None:
        """The claimed document as a job. One we cannot read is ours now: left processing,
        our heartbeats would keep it alive forever, and released it would be claimed again
        at once. So it is marked failed (owned write), with the reason, for an operator."""
        try:
            return Job.from_document(doc)
        except InvalidJobDocumentError as error:
            self._warn_unreadable(error)
            try:
                await collection.update_one(
                    owned_filter_by_oid(doc["_id"], owner), unreadable_update(now_ms, str(error))
                )
            except PyMongoError as failure:
                log.warning("could not mark unreadable job %s failed: %s", error.job_id, self._mask(str(failure)))
            return None

    async def _owned(self, action: str, job_id: str, owner: str, update: dict[str, Any]) -> Job | None:
        if not _valid(job_id):
            return None
        doc = await self._call(
            action,
            lambda c: c.find_one_and_update(owned_filter(job_id, owner), update, return_document=ReturnDocument.AFTER),
        )
        return self._job(doc)

    async def complete(
        self,
        job_id: str,
        owner: str,
        now_ms: int,
        next_run_at_ms: int | None,
        attempt: Attempt | None = None,
        *,
        result: Any = None,
    ) -> Job | None:
        update = complete_update(now_ms, next_run_at_ms, attempt, result)
        return await self._owned("complete a job", job_id, owner, update)

    async def fail(
        self,
        job_id: str,
        owner: str,
        now_ms: int,
        fail_count: int,
        reason: str,
        retry_at_ms: int | None,
        attempt: Attempt | None = None,
        error_group: str | None = None,
    ) -> Job | None:
        update = fail_update(now_ms, fail_count, reason, retry_at_ms, attempt, error_group)
        return await self._owned("fail a job", job_id, owner, update)

    async def record_attempt(self, job_id: str, owner: str, attempt: Attempt) -> bool:
        if not _valid(job_id):
            return False
        result = await self._call(
            "record an attempt", lambda c: c.update_one(owned_filter(job_id, owner), record_attempt_update(attempt))
        )
        return result.modified_count > 0

    async def mark_over_limit(self, job_id: str, owner: str, now_ms: int) -> bool:
        if not _valid(job_id):
            return False
        result = await self._call(
            "mark a job over its time limit",
            lambda c: c.update_one(owned_filter(job_id, owner), over_limit_update(now_ms)),
        )
        return result.modified_count > 0

    async def release(self, job_ids: Sequence[str], owner: str, now_ms: int) -> int:
        ids = [i for i in job_ids if _valid(i)]
        if not ids:
            return 0
        result = await self._call(
            "release claimed jobs", lambda c: c.update_many(release_filter(ids, owner), q.to_pending_update(now_ms))
        )
        return result.modified_count

    async def next_due_ms(self, names: Sequence[str]) -> int | None:
        if not names:
            return None
        doc = await self._call(
            "find the next due job",
            lambda c: c.find_one(next_due_filter(list(names)), projection={"nextRunAt": 1}, sort=[("nextRunAt", 1)]),
        )
        due = None if doc is None else doc.get("nextRunAt")
        return datetime_to_ms(due) if isinstance(due, datetime) else None

"""The Liveness port on MongoDB: heartbeats, stale recovery, and the check that no live
instance already works under an owner's name.

A job is stale when its ``lastHeartbeat`` (``lockedAt`` where it has none) is older than
the lock timeout (ADR 0004); recovery is one pipeline update that puts it back to pending
and appends an ``outcome: "stale"`` attempt record built from the document's own fields.
Hand-edited claim fields that would make that update fail are repaired first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ...attempts import MAX_ATTEMPTS
from ...errors import ConnectionError
from . import documents as q
from .documents import CLAIM_FIELDS, NO_OWNER, PENDING, PROCESSING, Document, dt, oid
from .plumbing import MongoPlumbing, _valid


def stale_recovery_pipeline(now_ms: int) -> list[Document]:
    """Stale recovery as one pipeline update (so each document's record is built from its
    own ``lockedAt``, ``claimedBy`` and ``failCount``): back to pending, claim fields
    removed, and an ``outcome: "stale"`` record appended unless the last record already is
    this attempt's (a shutdown record: same ``startedAt`` and instance). A history that is
    not an array (written by hand) starts over rather than failing the whole update.
    """
    now = dt(now_ms)
    history = {"$cond": [{"$isArray": "$attempts"}, "$attempts", []]}
    last = {"$arrayElemAt": [history, -1]}
    already = {
        "$let": {
            "vars": {"last": last},
            "in": {
                "$and": [
                    {"$eq": ["$$last.startedAt", "$lockedAt"]},
                    {"$eq": ["$$last.instanceId", "$claimedBy"]},
                ]
            },
        }
    }
    record = {
        "attempt": {"$add": [{"$ifNull": ["$failCount", 0]}, 1]},
        "outcome": "stale",
        "instanceId": "$claimedBy",
        "startedAt": "$lockedAt",
        "endedAt": now,
        "durationMs": {"$subtract": [now, "$lockedAt"]},
    }
    appended = {"$slice": [{"$concatArrays": [history, [record]]}, -MAX_ATTEMPTS]}
    return [
        {
            "$set": {
                "attempts": {"$cond": [{"$and": [{"$gt": [{"$size": history}, 0]}, already]}, history, appended]},
                "status": PENDING,
                "updatedAt": now,
            }
        },
        {"$unset": list(CLAIM_FIELDS)},
    ]


def heartbeat_filter(owner: str, job_ids: list[str] | None = None) -> Document:
    """The owner's processing jobs; only those of ``job_ids`` (the ones it runs) when given."""
    if job_ids is None:
        return {"claimedBy": owner, "status": PROCESSING}
    return {"_id": {"$in": [oid(i) for i in job_ids]}, "claimedBy": owner, "status": PROCESSING}


def heartbeat_update(now_ms: int) -> Document:
    now = dt(now_ms)
    return {"$set": {"lastHeartbeat": now, "updatedAt": now}}


def stale_filter(stale_before_ms: int) -> Document:
    """Processing jobs whose liveness instant is before the cutoff: ``lastHeartbeat`` where
    the job has one, ``lockedAt`` where it has none (ADR 0004).

    Node workers refresh the same ``lastHeartbeat`` field, so a Node job that runs longer
    than our ``lock_timeout`` is left alone as long as its worker heartbeats. Both branches
    lead with ``status`` and range over one field of the ``{status, lockedAt,
    lastHeartbeat}`` index; ``lastHeartbeat: null`` matches a missing field, as the
    ``$or`` needs. (Upstream judges ``lockedAt`` alone.)

    Also stale, whatever the cutoff: a processing job with neither instant, and one with no
    owner (``NO_OWNER``). No worker can beat or complete such a job, and it used to stay
    processing for good (issue 34: an import, or a hand edit). ``_repair_claims`` has by
    then turned a present but non-date instant into a date, so only missing ones are left.
    """
    cutoff = dt(stale_before_ms)
    return {
        "status": PROCESSING,
        "$or": [
            {"lastHeartbeat": {"$lt": cutoff}},
            {"lastHeartbeat": None, "lockedAt": {"$lt": cutoff}},
            {"lastHeartbeat": None, "lockedAt": None},
            {"claimedBy": NO_OWNER},
        ],
    }


#: The claim fields stale recovery computes with, and the BSON type each must have.
CLAIM_STAMP_TYPES = {"lockedAt": "date", "lastHeartbeat": "date", "failCount": "number"}
#: What ``claim_repair`` reads of a job ``malformed_claims_filter`` found.
CLAIM_REPAIR_PROJECTION: Document = {"status": 1, **dict.fromkeys(CLAIM_STAMP_TYPES, 1)}


def malformed_claims_filter() -> Document:
    """Processing jobs with a claim field of a type stale recovery cannot use: a hand
    edit (``mongosh``) wrote a string ``lockedAt`` or ``failCount``, which made the
    recovery's ``updateMany`` fail on ``$subtract`` / ``$add`` every round for every job,
    or a string ``lastHeartbeat``, which no date cutoff ever matches, so the job stayed
    processing forever (issue 27 item 13). A missing field is fine (a pending job's, or
    Node's job without a heartbeat); present with another type (null included) is not.
    Leads with ``status``: it reads the processing jobs only (the {status, …} indexes)."""
    return {
        "status": PROCESSING,
        "$or": [{field: {"$exists": True, "$not": {"$type": kind}}} for field, kind in CLAIM_STAMP_TYPES.items()],
    }


def claim_repair(doc: Document, now_ms: int) -> tuple[Document, Document, list[str]] | None:
    """(filter, update, what was wrong) that repair one document ``malformed_claims_filter``
    found, or None if it is not malformed after all. A stamp becomes ``now`` (the liveness
    clock restarts, so a job whose owner still heartbeats keeps running, and one whose owner
    is gone is recovered one lock timeout later); a fail count becomes its digits' value, or
    0. The filter carries each bad value as seen, so a concurrent fix is never overwritten."""
    guard: Document = {"_id": doc["_id"], "status": PROCESSING}
    fixed: Document = {}
    wrong: list[str] = []
    for field, kind in CLAIM_STAMP_TYPES.items():
        if field not in doc:
            continue
        value = doc[field]
        if kind == "date" and isinstance(value, datetime):
            continue
        if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
            continue
        guard[field] = value
        fixed[field] = dt(now_ms) if kind == "date" else _count(value)
        wrong.append(f"{field}={value!r}")
    if not fixed:
        return None
    return guard, {"$set": fixed}, wrong


def _count(value: Any) -> int:
    try:
        return min(max(0, int(str(value).strip())), 2**31 - 1)
    except ValueError:
        return 0


def live_claim_filter(owner: str, heartbeat_after_ms: int) -> Document:
    """Upstream assertNoActiveInstanceCollision: a heartbeat at or after the threshold
    (``$gte``, as job-lifecycle.ts) counts as alive."""
    return {"claimedBy": owner, "status": PROCESSING, "lastHeartbeat": {"$gte": dt(heartbeat_after_ms)}}


class MongoLiveness(MongoPlumbing):
    """``JobStore``'s heartbeat and stale-recovery methods on MongoDB (composed into ``MongoStore``)."""

    async def heartbeat(self, owner: str, now_ms: int, job_ids: Sequence[str] | None = None) -> int:
        ids = None if job_ids is None else [i for i in job_ids if _valid(i)]
        if ids is not None and not ids:
            return 0
        result = await self._call(
            "record a heartbeat", lambda c: c.update_many(heartbeat_filter(owner, ids), heartbeat_update(now_ms))
        )
        return result.modified_count

    async def recover_stale(self, stale_before_ms: int, now_ms: int) -> int:
        """Upstream's stale recovery, after repairing the claim fields of hand-edited
        processing jobs (``_repair_claims``), so one such job can no longer make the
        ``updateMany`` fail for every job, every round, or stay processing forever."""
        await self._repair_claims(now_ms)
        result = await self._call(
            "recover stale jobs",
            lambda c: c.update_many(stale_filter(stale_before_ms), stale_recovery_pipeline(now_ms)),
        )
        return result.modified_count

    async def _repair_claims(self, now_ms: int) -> None:
        """Processing jobs whose ``lockedAt``, ``lastHeartbeat`` or ``failCount`` has a
        type the recovery cannot compute with (``malformed_claims_filter``) are
        repaired one by one (``claim_repair``), each with one warning (a repaired
        job is not found again, and a job whose repair keeps failing is named only once).
        Costs one read of the processing jobs per round (at most workers × concurrency)."""
        docs = await self._call(
            "look for hand-edited processing jobs",
            lambda c: (
                c.find(malformed_claims_filter(), CLAIM_REPAIR_PROJECTION).max_time_ms(q.LIST_MAX_TIME_MS).to_list(None)
            ),
        )
        for doc in docs:
            repair = claim_repair(doc, now_ms)
            if repair is None:
                continue
            guard, update, wrong = repair
            job_id = str(doc["_id"])
            try:
                with self._errors.guard("repair a hand-edited processing job"):
                    await self._coll().update_one(guard, update)
            except ConnectionError as error:
                self._warn_once(
                    f"repair:{job_id}",
                    "processing job %s has %s, which stale recovery cannot use, and could not be repaired: %s",
                    job_id,
                    ", ".join(wrong),
                    error,
                )
                continue
            self._warn_once(
                f"repair:{job_id}",
                "processing job %s had %s (a hand edit?), which stale recovery cannot use: repaired to %s in %s",
                job_id,
                ", ".join(wrong),
                ", ".join(f"{k}={v.isoformat() if isinstance(v, datetime) else v}" for k, v in update["$set"].items()),
                self.display_url,
            )

    async def has_live_claim(self, owner: str, heartbeat_after_ms: int) -> bool:
        doc = await self._call(
            "check for a live instance",
            lambda c: c.find_one(live_claim_filter(owner, heartbeat_after_ms), projection={"_id": 1}),
        )
        return doc is not None

"""An operator's request to stop running jobs (issue 37 part 2, ADR 0019).

Upstream's cancel is for pending jobs only. A running job is stopped by asking its owner:
the request is stored on the job (``stopRequestedAt``), guarded by the claim the operator saw
(owner and ``lockedAt``), and the owner, hearing of it through its change feed or heartbeat,
cancels the handler and ends the job ``cancelled`` (``run_control.py``). So this module only
decides whether a request can be heard and writes it:

- an owner missing from the instance registry (a Node worker, or a Python one older than
  the registry) would never hear it: refused, ``StopRefusedError(reason="unknown_owner")``;
- a registered owner that stopped beating is dead: refused with ``"dead_owner"``; its jobs
  are returned by the dead-owner release (``release_dead_owner_jobs``) instead;
- an attempt that ended before the write (completed, failed, recovered, or running again as
  a later attempt) is refused with ``"not_running"``, and nothing is changed.

Liveness here is the registry's own judgement (a record older than twice its heartbeat
interval is dead), which is what the Workers view shows; the dead-owner release then makes
its careful watch (ADR 0007) before writing anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..errors import StopRefusedError
from ..job import Job, JobStatus
from ..store import ports
from ..store.values import StoreSelector
from ..timeutil import now_ms

if TYPE_CHECKING:
    from ..fleet_records import InstanceRecord

#: The most running jobs one bulk stop reaches (a fleet runs far fewer at once).
MAX_BULK_STOP = 10_000

Registry = Callable[[], Awaitable[list["InstanceRecord"]]]  # a string: InstanceRecord loads on first use


def _gone(job_id: str, current: Job | None, locked_at_ms: int | None) -> StopRefusedError:
    if current is None:
        return StopRefusedError(
            f"Cannot stop job {job_id}: it was deleted; nothing was changed", job_id, "deleted", "not_running", None
        )
    status = current.status.value
    if current.status is JobStatus.PROCESSING:
        why = "it is running again as a later attempt (the one you saw ended)"
    else:
        why = f"it is no longer running (now '{status}')"
    return StopRefusedError(
        f"Cannot stop job {job_id}: {why}; nothing was changed", job_id, status, "not_running", current.claimed_by
    )


class Stops:
    def __init__(
        self, store: ports.Management, reads: ports.Reads, registry: Registry, default_interval_ms: int
    ) -> None:
        self._store = store
        self._reads = reads
        self._registry = registry
        self._default_interval_ms = default_interval_ms

    async def _owners(self) -> dict[str, bool]:
        """Registered instance id → alive, by the registry's own judgement."""
        now = now_ms()
        standing: dict[str, bool] = {}
        for record in await self._registry():
            interval = record.heartbeat_interval_ms or self._default_interval_ms
            standing[record.id] = now - record.last_heartbeat_ms <= 2 * interval
        return standing

    @staticmethod
    def _unreachable(job: Job, owner: str, owners: dict[str, bool]) -> StopRefusedError | None:
        alive = owners.get(owner)
        if alive is None:
            return StopRefusedError(
                f"Cannot stop job {job.id}: its owner {owner!r} is not in the instance registry (a Node worker, "
                "or a Python worker older than the registry), so it would never hear the request; stop that "
                "worker, or wait for the job to end",
                job.id,
                job.status.value,
                "unknown_owner",
                owner,
            )
        if not alive:
            return StopRefusedError(
                f"Cannot stop job {job.id}: its owner {owner!r} stopped beating (dead), so nothing runs it to "
                f"stop; release the dead owner's jobs instead (monque-tui release-dead-owner {owner}, or "
                "release_dead_owner_jobs)",
                job.id,
                job.status.value,
                "dead_owner",
                owner,
            )
        return None

    async def stop(self, current: Job, claimed_at_ms: int | None) -> Job:
        """Request the stop of ``current``'s running attempt (the one claimed at ``claimed_at_ms``
        when given: the one the operator saw); the job with its request, still processing."""
        locked = current.locked_at_ms if claimed_at_ms is None else claimed_at_ms
        owner = current.claimed_by
        if (
            current.status is not JobStatus.PROCESSING
            or owner is None
            or locked is None
            or current.locked_at_ms != locked
        ):
            raise _gone(current.id, current, locked)
        refused = self._unreachable(current, owner, await self._owners())
        if refused is not None:
            raise refused
        job = await self._store.request_stop(current.id, owner, locked, now_ms())
        if job is None:
            raise _gone(current.id, await self._reads.get(current.id), locked)
        return job

    async def stop_many(self, selector: StoreSelector) -> tuple[int, list[dict[str, str]]]:
        """Request the stop of every running job ``selector`` (guarded to processing) matches;
        how many requests were written, and why the others were not."""
        jobs = await self._reads.find(selector, MAX_BULK_STOP, 0)
        owners = await self._owners()
        count = 0
        errors: list[dict[str, str]] = []
        for job in jobs:
            owner, locked = job.claimed_by, job.locked_at_ms
            if job.status is not JobStatus.PROCESSING or owner is None or locked is None:
                continue
            refused = self._unreachable(job, owner, owners)
            if refused is not None:
                errors.append({"jobId": job.id, "error": str(refused), "reason": refused.reason})
                continue
            if await self._store.request_stop(job.id, owner, locked, now_ms()) is not None:
                count += 1
        return count, errors

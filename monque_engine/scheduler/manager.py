"""Single and bulk management: cancel, retry, reschedule, delete, with upstream's guards.

The guards are defined once (``store/guards.py``) and applied in the store's statements
(atomic); this layer decides which guard applies,
turns a missed guard into the right answer (the job, None, or JobStateError) and emits an
event only for a transition that was actually written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal, TypeVar

from ..errors import InvalidJobQueryError, JobStateError
from ..events import CountEventName
from ..job import BulkCount, BulkOperationResult, Job, JobListFilter, JobSelector, JobStatus
from ..progress import CountProgress
from ..store import guards, ports
from ..store.values import StepCount, StoreSelector
from ..timeutil import now_ms
from ..validation import normalize_job_id
from .context import SchedulerContext
from .intake import run_at_ms
from .query import check_step, count_progress
from .selectors import _ms, to_store_filter, to_store_selector
from .stops import Registry, Stops

if TYPE_CHECKING:
    from ..fleet_records import InstanceRecord

BulkAction = Literal["cancel", "retry", "delete", "stop"]
#: What a bulk call accepts: upstream's selector, or any listing filter (issue 13).
BulkTarget = JobSelector | JobListFilter | None

RETRY_SPREAD_MS = 30_000
RETRYABLE = guards.RETRY
#: The statuses each guarded action accepts: defined once in ``store/guards.py``, which the
#: stores' statements read too (delete has no guard).
_GUARDS = guards.GUARDS
#: Writes a single-job action makes while the job's status keeps passing its guard by the read.
GUARD_ATTEMPTS = 3
T = TypeVar("T")


class JobManager:
    def __init__(
        self, ctx: SchedulerContext, store: ports.Management, reads: ports.Reads, registry: Registry | None = None
    ) -> None:
        self._ctx = ctx
        self._store = store
        #: The current job, to say why a guard refused, and a selection's count in steps.
        self._reads = reads
        #: Running jobs' stop requests (issue 37); the registry says whose owner can hear one.
        self._stops = Stops(store, reads, registry or _no_registry, int(ctx.options.heartbeat_interval * 1000))

    async def cancel_job(self, job_id: str, running: bool = False, claimed_at_ms: int | None = None) -> Job | None:
        from ..event_payloads import JobEvent

        key = normalize_job_id(job_id)
        if key is None:
            return None
        if running and claimed_at_ms is not None:
            # The caller saw a running attempt: stop that one, or say it ended.
            seen = await self._reads.get(key)
            if seen is None:
                return None
            return await self._stops.stop(seen, claimed_at_ms)
        job, current = await self._guarded(key, lambda: self._store.cancel(key, now_ms()), _GUARDS["cancel"])
        if job is not None:
            self._ctx.events.emit("job:cancelled", JobEvent(job))
            return job
        if current is None:
            return None
        if current.status is JobStatus.CANCELLED:
            return current
        if running:  # running, or it ended before the stop: say which (nothing is changed)
            return await self._stops.stop(current, None)
        raise self._refused("cancel", current)

    async def stop_jobs(
        self, selector: BulkTarget, updated_before: datetime | None = None, as_of: BulkCount | None = None
    ) -> BulkOperationResult:
        """Request the stop of every running job matching ``selector`` (the same selector and
        guards as every bulk action; ``Stops.stop_many``)."""
        chosen = self.selector_for("stop", selector, updated_before, as_of)
        if chosen is None:
            return BulkOperationResult(0, [])
        count, errors = await self._stops.stop_many(chosen)
        return BulkOperationResult(count, errors)

    async def retry_job(self, job_id: str) -> Job | None:
        from ..event_payloads import JobRetriedEvent

        key = normalize_job_id(job_id)
        if key is None:
            return None
        result, current = await self._guarded(key, lambda: self._store.retry(key, now_ms()), _GUARDS["retry"])
        if result is not None:
            job, previous = result
            self._ctx.wake_at(job.name, job.next_run_at_ms)
            self._ctx.events.emit("job:retried", JobRetriedEvent(job, previous.value))
            return job
        if current is None:
            return None
        raise self._refused("retry", current)

    async def reschedule_job(self, job_id: str, run_at: datetime | timedelta) -> Job | None:
        if run_at is None:  # an empty form field: enqueue's "now" would move the job without a word
            raise InvalidJobQueryError(
                "reschedule needs run_at: a timezone-aware datetime or a timedelta from now "
                "(timedelta(0) makes the job due now)"
            )
        key = normalize_job_id(job_id)
        if key is None:
            return None
        now = now_ms()
        when = run_at_ms(run_at, now)
        job, current = await self._guarded(
            key, lambda: self._store.reschedule(key, when, now_ms()), _GUARDS["reschedule"]
        )
        if job is not None:
            self._ctx.wake_at(job.name, job.next_run_at_ms)
            return job
        if current is None:
            return None
        raise self._refused("reschedule", current)

    async def _guarded(
        self, key: str, write: Callable[[], Awaitable[T | None]], allowed: tuple[JobStatus, ...]
    ) -> tuple[T | None, Job | None]:
        """Run a single-job guarded write; on a miss, the job as it is now (None: gone).

        The write's guard and the read after a miss are two statements: a job that was
        processing when the cancel ran can be pending again (a retried failure) by the read.
        Refusing then named a status the guard allows ("Cannot cancel job in status
        'pending'"), so a miss whose job now passes the guard is tried again.
        """
        current: Job | None = None
        for _ in range(GUARD_ATTEMPTS):
            result = await write()
            if result is not None:
                return result, None
            current = await self._reads.get(key)
            if current is None or current.status not in allowed:
                return None, current
        return None, current

    @staticmethod
    def _refused(action: str, current: Job) -> JobStateError:
        status = current.status.value
        if current.status in _GUARDS[action]:  # it kept changing under GUARD_ATTEMPTS writes
            return JobStateError(
                f"Cannot {action} job: its status kept changing (now '{status}'); try again", current.id, status, action
            )
        return JobStateError(f"Cannot {action} job in status '{status}'", current.id, status, action)

    async def delete_job(self, job_id: str) -> bool:
        from ..event_payloads import JobDeletedEvent

        key = normalize_job_id(job_id)
        if key is None:
            return False
        deleted = await self._store.delete(key)
        if deleted:
            self._ctx.events.emit("job:deleted", JobDeletedEvent(key))
        return deleted

    def selector_for(
        self,
        action: BulkAction,
        target: BulkTarget,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> StoreSelector | None:
        """The store selector a bulk ``action`` runs with, its guard applied; None when the
        guard leaves nothing to do (e.g. cancelling a selection of failed jobs).

        ``target`` is upstream's ``JobSelector`` or any ``JobListFilter`` (everything a
        listing can filter by: name, statuses, created / updated / next-run ranges, search,
        recurring; text search added to the listing is honoured here too, since the store
        reuses the listing's own WHERE / filter document). ``updated_before`` bounds the
        selection to jobs whose stored ``updatedAt`` is before that instant (a filter on the
        field, as its writers stamped it). ``as_of`` bounds it by commit order instead: only
        jobs the count that returned it saw, unchanged since (never more than that count).
        """
        position = _as_of(as_of, self._store.position_scope)
        guard = _GUARDS.get(action)  # delete: none
        bound = _ms(updated_before, "updated_before")
        if isinstance(target, JobListFilter):
            listing = to_store_filter(target)
            requested = listing.statuses
            listing = listing._replace(statuses=None)
        elif target is None or isinstance(target, JobSelector):
            selector = to_store_selector(target)
            requested = selector.statuses
            listing = None
            if selector.updated_before_ms is not None:
                bound = selector.updated_before_ms if bound is None else min(bound, selector.updated_before_ms)
        else:
            raise InvalidJobQueryError(
                f"Pass a JobSelector or a JobListFilter to a bulk {action}, not {type(target).__name__}"
            )
        if guard is None:
            statuses = requested
        else:
            statuses = guard if requested is None else tuple(s for s in requested if s in guard)
            if not statuses:
                return None
        if listing is not None:
            return StoreSelector(statuses=statuses, updated_before_ms=bound, listing=listing, as_of=position)
        assert not isinstance(target, JobListFilter)
        return to_store_selector(target, statuses)._replace(updated_before_ms=bound, as_of=position)

    async def count_bulk(
        self,
        action: BulkAction,
        target: BulkTarget,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkCount:
        selector = self.selector_for(action, target, updated_before, as_of)
        if selector is None:
            # Nothing can match; the position is still taken, so the count works as ``as_of``.
            selector = StoreSelector(statuses=())
        count, position = await self._store.count_selected_as_of(selector)
        # A recount under an earlier count's bound keeps that bound: acting on the new
        # position would reach jobs changed in between, which this count left out.
        return BulkCount(count, position if as_of is None else as_of.as_of, self._store.position_scope)

    def count_bulk_in_steps(
        self,
        action: BulkAction,
        target: BulkTarget,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
        step: int | None = None,
    ) -> AsyncIterator[CountProgress]:
        """``count_bulk`` read in steps (ADR 0008); the last progress carries the BulkCount."""
        selector = self.selector_for(action, target, updated_before, as_of)
        if selector is None:
            selector = StoreSelector(statuses=())  # nothing can match; the position is still taken
        steps = self._reads.count_in_steps(selector, check_step(step))

        def position(found: StepCount) -> BulkCount:
            # A recount under an earlier count's bound keeps that bound (as count_bulk).
            if as_of is not None:
                return BulkCount(found.matched, as_of.as_of, self._store.position_scope)
            assert found.position is not None, "a store's count of a selector carries its position"
            return BulkCount(found.matched, found.position, self._store.position_scope)

        return count_progress(steps, position)

    async def cancel_jobs(
        self, selector: BulkTarget, updated_before: datetime | None = None, as_of: BulkCount | None = None
    ) -> BulkOperationResult:
        chosen = self.selector_for("cancel", selector, updated_before, as_of)
        if chosen is None:
            return BulkOperationResult(0, [])
        count = await self._store.cancel_many(chosen, now_ms())
        return self._bulk("jobs:cancelled", count)

    async def retry_jobs(
        self, selector: BulkTarget, updated_before: datetime | None = None, as_of: BulkCount | None = None
    ) -> BulkOperationResult:
        chosen = self.selector_for("retry", selector, updated_before, as_of)
        if chosen is None:
            return BulkOperationResult(0, [])
        count, errors = await self._store.retry_many(chosen, now_ms(), RETRY_SPREAD_MS)
        if count > 0:
            self._ctx.poll_soon()  # retried jobs are due over the next 30 s: arm this process's timers
        return self._bulk("jobs:retried", count, errors)

    async def delete_jobs(
        self, selector: BulkTarget, updated_before: datetime | None = None, as_of: BulkCount | None = None
    ) -> BulkOperationResult:
        chosen = self.selector_for("delete", selector, updated_before, as_of)
        assert chosen is not None  # delete has no guard
        count = await self._store.delete_many(chosen)
        return self._bulk("jobs:deleted", count)

    def _bulk(
        self, event: CountEventName, count: int, errors: list[dict[str, str]] | None = None
    ) -> BulkOperationResult:
        from ..event_payloads import CountEvent

        if count > 0:
            self._ctx.events.emit(event, CountEvent(count))
        return BulkOperationResult(count, errors or [])


async def _no_registry() -> list[InstanceRecord]:
    return []


def _as_of(as_of: object, scope: str) -> int | None:
    """The store position a ``BulkCount`` carries; anything else is refused (a bare int or a
    datetime would look like a bound and be none), and so is a count of another store
    (``BulkCount.scope``): its position would bound nothing here."""
    if as_of is None:
        return None
    if not isinstance(as_of, BulkCount):
        raise InvalidJobQueryError(
            f"as_of must be the BulkCount that count_bulk returned, got {type(as_of).__name__}; "
            "count first (count = await monque.count_bulk(...)), then pass as_of=count"
        )
    if as_of.scope and as_of.scope != scope:
        raise InvalidJobQueryError(
            "as_of was counted on another store (or on a file since recreated at this path): its position "
            "bounds nothing here; count on this store (count_bulk), then pass that count as as_of"
        )
    return as_of.as_of

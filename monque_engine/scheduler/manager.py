"""Single and bulk management: cancel, retry, reschedule, delete, with upstream's guards.

Guards live in the store's statements (atomic); this layer decides which guard applies,
turns a missed guard into the right answer (the job, None, or JobStateError) and emits an
event only for a transition that was actually written.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..errors import JobStateError
from ..events import CountEvent, JobDeletedEvent, JobEvent, JobRetriedEvent
from ..job import BulkOperationResult, Job, JobSelector, JobStatus
from ..timeutil import now_ms
from ..validation import normalize_job_id
from .context import SchedulerContext
from .intake import run_at_ms
from .selectors import parse_statuses, to_store_selector

RETRY_SPREAD_MS = 30_000
RETRYABLE = (JobStatus.FAILED, JobStatus.CANCELLED)


class JobManager:
    def __init__(self, ctx: SchedulerContext) -> None:
        self._ctx = ctx

    async def cancel_job(self, job_id: str) -> Job | None:
        key = normalize_job_id(job_id)
        if key is None:
            return None
        job = await self._ctx.store.cancel(key, now_ms())
        if job is not None:
            self._ctx.events.emit("job:cancelled", JobEvent(job))
            return job
        current = await self._ctx.store.get(key)
        if current is None:
            return None
        if current.status is JobStatus.CANCELLED:
            return current
        raise JobStateError(f"Cannot cancel job in status '{current.status.value}'", key, current.status.value, "cancel")

    async def retry_job(self, job_id: str) -> Job | None:
        key = normalize_job_id(job_id)
        if key is None:
            return None
        result = await self._ctx.store.retry(key, now_ms())
        if result is not None:
            job, previous = result
            self._ctx.wake_at(job.name, job.next_run_at_ms)
            self._ctx.events.emit("job:retried", JobRetriedEvent(job, previous.value))
            return job
        current = await self._ctx.store.get(key)
        if current is None:
            return None
        raise JobStateError(f"Cannot retry job in status '{current.status.value}'", key, current.status.value, "retry")

    async def reschedule_job(self, job_id: str, run_at: datetime | timedelta) -> Job | None:
        key = normalize_job_id(job_id)
        if key is None:
            return None
        now = now_ms()
        when = run_at_ms(run_at, now)
        job = await self._ctx.store.reschedule(key, when, now)
        if job is not None:
            self._ctx.wake_at(job.name, job.next_run_at_ms)
            return job
        current = await self._ctx.store.get(key)
        if current is None:
            return None
        raise JobStateError(
            f"Cannot reschedule job in status '{current.status.value}'", key, current.status.value, "reschedule"
        )

    async def delete_job(self, job_id: str) -> bool:
        key = normalize_job_id(job_id)
        if key is None:
            return False
        deleted = await self._ctx.store.delete(key)
        if deleted:
            self._ctx.events.emit("job:deleted", JobDeletedEvent(key))
        return deleted

    async def cancel_jobs(self, selector: JobSelector | None) -> BulkOperationResult:
        requested = parse_statuses(selector.status) if selector else None
        if requested is not None and JobStatus.PENDING not in requested:
            return BulkOperationResult(0, [])
        count = await self._ctx.store.cancel_many(to_store_selector(selector, (JobStatus.PENDING,)), now_ms())
        return self._bulk("jobs:cancelled", count)

    async def retry_jobs(self, selector: JobSelector | None) -> BulkOperationResult:
        requested = parse_statuses(selector.status) if selector else None
        allowed = RETRYABLE if requested is None else tuple(s for s in requested if s in RETRYABLE)
        if not allowed:
            return BulkOperationResult(0, [])
        count, errors = await self._ctx.store.retry_many(to_store_selector(selector, allowed), now_ms(), RETRY_SPREAD_MS)
        if count > 0:
            self._ctx.poll_soon()  # retried jobs are due over the next 30 s: arm this process's timers
        return self._bulk("jobs:retried", count, errors)

    async def delete_jobs(self, selector: JobSelector | None) -> BulkOperationResult:
        count = await self._ctx.store.delete_many(to_store_selector(selector))
        return self._bulk("jobs:deleted", count)

    def _bulk(self, event: str, count: int, errors: list[dict[str, str]] | None = None) -> BulkOperationResult:
        if count > 0:
            self._ctx.events.emit(event, CountEvent(count))
        return BulkOperationResult(count, errors or [])

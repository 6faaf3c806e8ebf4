"""Test mode's inline runs (``monque_engine.testing``): claim a job and run its handler here
and now, through the processor's own run path, so what is recorded is what a worker records.

A job is claimed the way a worker claims it (the earliest due pending job of its name, so
another due job of that name may run first: it would under a worker too), run, and its
outcome written by the processor. A failure with retries left is made due at once and run
again, until the job completes, fails for good, or is a schedule's run that succeeded.
"""

from __future__ import annotations

import asyncio

from ..errors import JobNotFoundError
from ..job import Job, JobStatus
from ..store import ports
from ..timeutil import now_ms
from .context import SchedulerContext
from .processor import JobProcessor

#: Inline runs one call may make before giving up (a safety bound: each run of a failing
#: job uses one retry, so only a store that keeps handing out other due jobs gets here).
MAX_INLINE_RUNS = 10_000


class EagerRunner:
    def __init__(
        self,
        ctx: SchedulerContext,
        processor: JobProcessor,
        claims: ports.Claims,
        reads: ports.Reads,
        management: ports.Management,
    ) -> None:
        self._ctx, self._processor = ctx, processor
        self._claims, self._reads, self._management = claims, reads, management
        #: Jobs an inline claim took, until their run ends: between the claim's commit and
        #: its run's task there is no task to wait for (``_read``).
        self._claimed: dict[str, asyncio.Event] = {}
        #: Inline claims under way, each settled once what it took is in ``_claimed``: a
        #: read may see a job the claim committed before the claim's caller has it back.
        self._claiming: set[asyncio.Future[None]] = set()

    async def after_enqueue(self, job: Job) -> Job:
        """An enqueued job, run now if it is due and its name has a handler here; else as it is."""
        if job.status is not JobStatus.PENDING or job.repeat_interval is not None:
            return job
        if job.name not in self._processor.workers or job.next_run_at_ms > now_ms():
            return job
        return await self.run(job.id, job.name)

    async def run(self, job_id: str, name: str) -> Job:
        """Run the pending job ``job_id`` now (its due time brought forward), retries included,
        and return it as stored afterwards."""
        runs = 0
        current = await self._read(job_id)
        while current is not None and current.status is JobStatus.PENDING and runs < MAX_INLINE_RUNS:
            if runs and current.repeat_interval is not None and current.fail_count == 0:
                break  # a schedule's run succeeded: its next run is for later
            now = now_ms()
            if current.next_run_at_ms > now:
                await self._management.reschedule(job_id, now, now)  # the retry's backoff, or a later run_at
            heartbeat_ms = int(self._ctx.options.heartbeat_interval * 1000)
            claiming = asyncio.get_running_loop().create_future()
            self._claiming.add(claiming)
            try:
                claimed = await self._claims.claim(name, self._ctx.instance_id, now_ms(), 1, heartbeat_ms)
                ended = {job.id: self._claimed.setdefault(job.id, asyncio.Event()) for job in claimed}
            finally:
                self._claiming.discard(claiming)
                claiming.set_result(None)
            if not claimed:
                break  # paused, or taken by a worker of another process
            try:
                for job in claimed:
                    runs += 1
                    await self._processor.run_claimed(job)
            finally:
                for claimed_id, event in ended.items():
                    event.set()
                    self._claimed.pop(claimed_id, None)
            current = await self._read(job_id)
        return current if current is not None else await self._gone(job_id)

    async def _read(self, job_id: str) -> Job | None:
        """The job as stored, once no inline run of this instance holds it: an enqueue made
        beside this one (``asyncio.gather``) may have claimed it first; that run is awaited."""
        settled_since_read = False
        while True:
            job = await self._reads.get(job_id)
            if job is None or job.status is not JobStatus.PROCESSING or job.claimed_by != self._ctx.instance_id:
                return job
            running = self._processor.running_task(job)
            if running is not None:
                await asyncio.wait((running,))
                continue
            # Claimed by another call's inline claim, whose run has no task yet: this read came
            # back first (an enqueue then returned its job "processing"; a flaky test). Wait
            # for that run, or, while claims are under way, for them to say what they took.
            claim = self._claimed.get(job_id)
            if claim is not None:
                await claim.wait()
            elif self._claiming:
                await asyncio.wait(set(self._claiming))
            elif not settled_since_read:
                # Nothing here runs it now, but the read may predate a whole run that ended
                # while it came back: read once more before taking "processing" as the answer.
                settled_since_read = True
            else:
                return job

    async def _gone(self, job_id: str) -> Job:
        raise JobNotFoundError(job_id, f"Job {job_id} was deleted while test mode ran it")

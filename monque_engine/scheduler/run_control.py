"""What reaches a running job from outside its handler (issue 37 parts 2 and 3, ADR 0019):
an operator's stop request, and the handler's own progress reports going out.

**Stop.** The request is stored on the job (``stopRequestedAt``, guarded by the claim the
operator saw). The owner hears of it through its change feed (``ChangeEvent.stop_requested``)
or, when the feed is down, on its heartbeat (``look``). Either way it reads the request back
(``Claims.stop_requests``) and applies it only to the attempt it belongs to: the job still
runs here under the claim the request names (same ``lockedAt``), never a later run. Then an
async handler's task is cancelled; a sync handler (a thread, which cannot be cancelled) sees
``job.should_stop()`` turn true and the job stays owned until it returns. However the run
ends, the processor records the attempt ``cancelled`` and the job ends ``cancelled``.

**Progress.** ``job.report_progress`` hands reports here through the ``RUNNING_JOB`` context
(no per-job set-up: a job that never reports costs nothing). At most one write per job per
``PROGRESS_INTERVAL_S``; reports in between keep the latest, written when the interval is up.
Writes are best effort: a failed one is logged, never raised into the handler.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..job import Job
from ..run_progress import PROGRESS_INTERVAL_S, Progress
from ..store import ports
from ..timeouts import RunLimit
from ..timeutil import now_ms

log = logging.getLogger("monque_engine.processor")


@dataclass(eq=False, slots=True)
class _Throttle:
    last: float  # monotonic time of the last write
    pending: Progress | None = None
    timer: asyncio.TimerHandle | None = None


class RunControl:
    """Stop requests in, progress reports out, for the jobs one processor runs."""

    def __init__(
        self,
        store: ports.Claims,
        owner: str,
        find: Callable[[str], tuple[Job, bool, asyncio.Task[None] | None] | None],
        finishing: set[str],
    ) -> None:
        self._store = store
        self._owner = owner
        #: A running job by id: (its Job, whether its handler is async, its task), or None.
        self._find = find
        self._finishing = finishing
        #: Jobs whose task this module cancelled for a stop request (the processor tells that
        #: cancellation from a shutdown's by it).
        self.cancelled: set[str] = set()
        #: Progress throttles of jobs that reported: empty for a drain of jobs that never do.
        self.throttles: dict[str, _Throttle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- stop requests ----------------------------------------------------------------------------
    def heard(self, job_id: str) -> None:
        """The feed carried a stop request for ``job_id``: read it back if the job runs here."""
        if self._find(job_id) is None or job_id in self._finishing:
            return
        self._spawn(self.look([job_id]))

    async def look(self, job_ids: list[str]) -> None:
        """Read the stop requests of these running jobs and apply those for their current run."""
        if not job_ids:
            return
        try:
            found = await self._store.stop_requests(self._owner, job_ids)
        except Exception as error:  # noqa: BLE001 - the heartbeat looks again
            log.warning("could not read stop requests: %s", error)
            return
        for job_id, (locked_at, stop_at) in found.items():
            self._apply(job_id, locked_at, stop_at)

    def _apply(self, job_id: str, locked_at: int, stop_at: int) -> None:
        running = self._find(job_id)
        if running is None or job_id in self._finishing:
            return  # it ended meanwhile: the request changes nothing
        job, is_async, task = running
        if job.locked_at_ms != locked_at or stop_at < locked_at:
            return  # the request was for an earlier run of this job
        limit = job._limit
        if limit is None:
            limit = job._limit = RunLimit(None, time.monotonic(), now_ms())
        if limit.stop_requested:
            return
        limit.stop_requested = True
        job.stop_requested_at_ms = stop_at
        if is_async and task is not None and not task.done():
            log.info("job %s (%s): stop requested; cancelling its handler", job.id, job.name)
            self.cancelled.add(job_id)
            task.cancel("stop requested")
        else:
            log.info(
                "job %s (%s): stop requested; its sync handler runs in a thread, which cannot be cancelled: "
                "job.should_stop() now says so, and the job ends cancelled when the handler returns",
                job.id,
                job.name,
            )

    # -- progress ---------------------------------------------------------------------------------
    def take(self, job: Job, report: Progress) -> Awaitable[None] | None:
        """A report from the handler (on the loop): the write to await, or None when throttled."""
        job.progress = report
        throttle = self.throttles.get(job.id)
        now = time.monotonic()
        if throttle is None:
            self.throttles[job.id] = _Throttle(now)
            return self._write(job, report)
        throttle.pending = report
        if throttle.timer is None:
            wait = max(0.0, throttle.last + PROGRESS_INTERVAL_S - now)
            loop = asyncio.get_running_loop()
            throttle.timer = loop.call_later(wait, self._flush, job, throttle)
        return None

    def take_threadsafe(self, job: Job, report: Progress, loop: asyncio.AbstractEventLoop) -> None:
        def take() -> None:
            write = self.take(job, report)
            if write is not None:
                self._spawn(write)

        loop.call_soon_threadsafe(take)

    def _flush(self, job: Job, throttle: _Throttle) -> None:
        throttle.timer = None
        report, throttle.pending = throttle.pending, None
        if report is None or self.throttles.get(job.id) is not throttle:
            return
        throttle.last = time.monotonic()
        self._spawn(self._write(job, report))

    async def _write(self, job: Job, report: Progress) -> None:
        try:
            await self._store.report_progress(job.id, self._owner, report.at_ms, report)
        except Exception as error:  # noqa: BLE001 - display only: the run goes on
            log.debug("could not store the progress of job %s: %s", job.id, error)

    def ended(self, job_id: str) -> None:
        """The run of ``job_id`` ended: drop its throttle (a report still waiting is moot)."""
        throttle = self.throttles.pop(job_id, None)
        if throttle is not None and throttle.timer is not None:
            throttle.timer.cancel()

    def _spawn(self, work: Awaitable[None]) -> None:
        async def run() -> None:
            await work

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

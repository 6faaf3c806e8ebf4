"""The processor pool: claims due jobs into free slots and runs their handlers.

Each registered name has one *filler* task. It sleeps until something suggests there is
work (a change-feed wake-up, a timer for a future job, the poll, a finished job while the
last claim came back full) and then claims as many jobs as there are free slots in one
store call. Claiming in batches is what lets one process drain tens of thousands of jobs a
second; claiming only into free slots is what keeps the concurrency limits exact.

Owned transitions follow upstream: complete and fail apply only while the job is still
``processing`` and claimed by this instance, and events fire only for what was written.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal, NamedTuple

from .. import attempts
from ..backoff import backoff_delay_ms
from ..errorgroups import error_counter_name, error_group_key
from ..errors import (
    InvalidCronError,
    InvalidResultError,
    NonRetryableError,
    StoreLostError,
    StoreUnavailableError,
    WorkerRegistrationError,
)
from ..exception_text import ExceptionText, describe_exception, exception_name
from ..job import Job, JobStatus, WorkerSummary
from ..options import MAX_COUNT, MAX_SECONDS, MonqueOptions
from ..results import stored_result
from ..run_progress import RUNNING_JOB, Progress
from ..store import ports
from ..timeouts import MAX_TIMEOUT_SECONDS, TIMED_OUT, RunLimit, limit_text, timeout_ms, timeout_problem
from ..timeutil import now_ms
from ..validation import validate_job_name
from .context import SchedulerContext
from .run_control import RunControl
from .threads import DaemonThreads


@functools.cache
def _payloads() -> ModuleType:
    """The events' payloads, imported on the first job run (issue 40: no launch creates them);
    cached, as a job's completion is the hot path (an ``import`` there costs ~0.6 µs a job)."""
    from .. import event_payloads

    return event_payloads


log = logging.getLogger("monque_engine.processor")


class _CompletionAbandoned(Exception):
    """A completion the store did not take for ``lock_timeout``: left to stale recovery."""


CLAIM_DEFER = 0.002
#: A completion the store could not take (locked past ``busy_timeout``, a full disk, a
#: MongoDB failover) is written again after this pause, doubling up to the maximum.
COMPLETION_RETRY_FIRST_S = 0.05
COMPLETION_RETRY_MAX_S = 2.0
#: A handler returns None, or a JSON value kept on the job as its ``result`` (results.py).
Handler = Callable[[Job], Awaitable[Any] | Any]

#: RUNNING_JOB (run_progress.py): the processor and job id whose handler runs in this
#: context. ``stop()`` / ``close()`` read it to tell a call from one of this instance's own
#: handlers, which must not wait for its own handler to return; ``job.report_progress``
#: finds its processor through it.


def outside_handlers() -> contextvars.Context:
    """A copy of the current context in which no handler runs (for tasks the engine starts
    on behalf of a call made from a handler: they must not pass for that handler)."""
    context = contextvars.copy_context()
    context.run(RUNNING_JOB.set, None)
    return context


@dataclass(eq=False, slots=True)
class Slots:
    """Slot accounting of one job name, shared by a registration and its replacement."""

    active: dict[str, Job] = field(default_factory=dict)
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    reserved: int = 0  # slots promised to a claim in flight
    #: Jobs in ``active`` whose handler has returned and whose outcome write is in flight.
    #: Their slots may be refilled already: the limit is on handlers running at once.
    finishing: int = 0


class RetryPolicy(NamedTuple):
    """How failures of one registration's executions are retried (upstream's RetryOptions).

    Taken from ``register(..., max_retries=, base_retry_interval=, max_backoff_delay=)``,
    each falling back to the instance option. An execution keeps the policy of the
    registration that ran it, even when the name is re-registered while it runs.
    """

    max_retries: int
    base_ms: float
    max_ms: float

    @classmethod
    def resolve(
        cls,
        options: MonqueOptions,
        name: str,
        max_retries: int | None,
        base_retry_interval: float | None,
        max_backoff_delay: float | None,
    ) -> RetryPolicy:
        if max_retries is None:
            max_retries = options.max_retries
        elif not isinstance(max_retries, int) or isinstance(max_retries, bool) or not 0 <= max_retries <= MAX_COUNT:
            raise WorkerRegistrationError(
                f"max_retries for {name!r} must be an integer from 0 to {MAX_COUNT}, got {max_retries!r}", name
            )
        seconds = {"base_retry_interval": base_retry_interval, "max_backoff_delay": max_backoff_delay}
        for option, value in seconds.items():
            if value is None:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 0 <= value <= MAX_SECONDS
            ):
                raise WorkerRegistrationError(
                    f"{option} for {name!r} must be zero or more seconds (finite, at most {MAX_SECONDS:.0e}), "
                    f"got {value!r}",
                    name,
                )
        base = options.base_retry_interval if base_retry_interval is None else base_retry_interval
        cap = options.max_backoff_delay if max_backoff_delay is None else max_backoff_delay
        return cls(max_retries, base * 1000, cap * 1000)


@dataclass(eq=False, slots=True)
class Worker:
    name: str
    handler: Handler
    concurrency: int
    is_async: bool
    policy: RetryPolicy
    #: The time limit of this name's runs in ms (registration's, else the instance default),
    #: None for none; a job's own ``timeout_ms`` wins over it (ADR 0019).
    timeout_ms: int | None = None
    slots: Slots = field(default_factory=Slots)
    work_hint: bool = True  # there may be due jobs for this name
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    filler: asyncio.Task[None] | None = None  # this registration's claim loop
    deferred: asyncio.TimerHandle | None = None  # a pending "claim what is free now" nudge
    force: bool = False  # the nudge fired: claim even below the batch threshold
    rearm: bool = False  # a due-time timer fired: after the claim, arm one for the next future job


def _schedule_error(repeat_interval: str) -> InvalidCronError | None:
    from ..cron import next_run_ms  # here, as below: a program that runs no schedule never imports cron

    try:
        next_run_ms(repeat_interval, now_ms())
    except InvalidCronError as error:
        return error
    return None


def _next_run_ms(repeat_interval: str, after_ms: int) -> int:
    """``cron.next_run_ms``, imported on the first recurring job run: the cron module (and its
    tables) is no part of a console's launch or of a worker that runs no schedule (issue 40)."""
    from ..cron import next_run_ms

    return next_run_ms(repeat_interval, after_ms)


_GENERATOR_RESULT = (
    "the handler returned a generator instead of running (its __call__ contains yield); "
    "use an async def or a plain def without yield"
)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:  # no loop runs in this thread
        return False


def _cancelled_from_outside() -> bool:
    """Whether the running task was cancelled (by stop(), or by the program around it), as
    opposed to a handler raising a CancelledError that nobody requested for this task."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _not_ours(job: Job, outcome: str) -> None:
    """An outcome write found the job no longer processing under this instance: say so (the
    job may have run twice, which otherwise nobody would learn from this side)."""
    log.warning(
        "job %s (%s) %s here, but this instance no longer holds it (recovered as stale after late "
        "heartbeats, released, or deleted meanwhile); its outcome was not written",
        job.id,
        job.name,
        outcome,
    )


def _retrieve(task: asyncio.Task[None]) -> None:
    """Mark a task's exception as seen (asyncio would log it again as "never retrieved")."""
    if not task.cancelled():
        task.exception()


def _escaped_reason(described: ExceptionText) -> str:
    """failReason for an exception that is not an ``Exception``: its type leads, since
    ``str(SystemExit(3))`` is just ``3`` and ``str(KeyboardInterrupt())`` is empty."""
    name, text = described.name, described.message
    return f"Handler raised {name}" if text == name else f"Handler raised {name}: {text}"


def _next_generation(running: Job, claimed: Job) -> bool:
    """Whether a claim of a job this process is running took a *later* run of it.

    An outcome write always leaves a trace on the row: a failure raises failCount, a
    recurring completion moves nextRunAt (strictly later), an operator's retry resets
    failCount and moves nextRunAt. Stale recovery alone changes neither.
    """
    return claimed.fail_count != running.fail_count or claimed.next_run_at_ms != running.next_run_at_ms


class JobProcessor:
    def __init__(self, ctx: SchedulerContext, store: ports.Claims) -> None:
        self._ctx = ctx
        self._store = store
        self.workers: dict[str, Worker] = {}
        self.running = False
        self._total_active = 0
        self._total_finishing = 0
        self._total_reserved = 0
        #: Under instance_concurrency: names that had work and room of their own but found the
        #: cap full, in the order they found it; they get the next freed slots (_free_slots).
        self._starved: dict[str, None] = {}
        #: The instance options' retry policy (a registration may override it).
        self._policy = RetryPolicy.resolve(ctx.options, "", None, None, None)
        self._heartbeat_ms = int(ctx.options.heartbeat_interval * 1000)
        job_timeout = ctx.options.job_timeout
        self._default_timeout_ms = None if job_timeout is None else timeout_ms(job_timeout)
        #: Sync handlers run here: daemon threads, so one that never returns cannot keep the
        #: program from exiting after stop() gave up on it (threads.py).
        self._threads = DaemonThreads()
        #: Names of jobs whose handler ran longer than a heartbeat interval since the last
        #: heartbeat tick: the lifecycle names them when it finds the loop was blocked.
        self.long_ran: set[str] = set()
        self._long_run = ctx.options.heartbeat_interval
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._timer_due: dict[str, int] = {}
        self._fillers: set[asyncio.Task[None]] = set()  # current and replaced ones still finishing
        #: Called (on the loop) when a name is registered while running: the change feed,
        #: narrowed to the registered names, reopens to include it (``Lifecycle``).
        self.on_new_name: Callable[[str], None] | None = None
        #: Jobs whose handler has returned and whose outcome write is in flight. Shutdown
        #: must not cancel these: the write is already on its way to the store.
        self.finishing: set[str] = set()
        #: Per finishing job, the worker whose slot it holds; and the jobs whose completion
        #: waits for the store, their slots counted taken again (``_hold_slot``).
        self._finishing_in: dict[str, Worker] = {}
        self._held: set[str] = set()
        #: Claims of a job whose previous run's task has not ended yet (see _fill_loop).
        self._deferred_launches: dict[str, tuple[Worker, Job]] = {}
        self._releases: set[asyncio.Task[None]] = set()
        #: Names paused in the store (refreshed by the fleet service every poll interval):
        #: their fillers claim nothing. A set lookup per claim round, nothing per job.
        self.paused: frozenset[str] = frozenset()
        #: Outcomes written by this instance (the registry's processed / failed counts) and
        #: per-minute tallies ``{(name, minute): [completed, failed]}`` flushed on the heartbeat.
        self.processed = 0
        self.failed = 0
        self._tally: dict[tuple[str, int], list[int]] = {}
        #: The running loop, kept from start(): ``asyncio.get_running_loop()`` is a system
        #: call (getpid) on Python 3.11, and the hot path needed it once per job.
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Stop requests in, progress reports out (issue 37; run_control.py).
        self.control = RunControl(store, ctx.instance_id, self._running, self.finishing)

    # -- registration ---------------------------------------------------------------------------
    def register(
        self,
        name: str,
        handler: Handler,
        concurrency: int | None = None,
        replace: bool = False,
        *,
        max_retries: int | None = None,
        base_retry_interval: float | None = None,
        max_backoff_delay: float | None = None,
        timeout: float | None = None,
    ) -> None:
        """Add (or with ``replace``, swap) the handler of ``name``; safe from any thread.

        From another thread (a sync handler runs in one) while the processor runs, the
        change is made on the event loop and this call waits for it: starting the name's
        claim loop needs the loop, and used to fail half way ("no running event loop"),
        leaving the name registered with no claim loop, so its jobs never ran again here.
        """
        retry = (max_retries, base_retry_interval, max_backoff_delay)
        if timeout is not None:
            problem = timeout_problem(timeout)
            if problem is not None:
                raise WorkerRegistrationError(f"timeout for {name!r} {problem}", name)
        limit = timeout_ms(timeout) if timeout is not None else self._default_timeout_ms
        loop = self._loop
        if self.running and loop is not None and not _on_loop(loop):
            done: concurrent.futures.Future[None] = concurrent.futures.Future()

            def apply() -> None:
                try:
                    self._register(name, handler, concurrency, replace, retry, limit)
                except BaseException as error:  # noqa: BLE001 - raised in the calling thread
                    done.set_exception(error)
                else:
                    done.set_result(None)

            loop.call_soon_threadsafe(apply)
            done.result()
            return
        self._register(name, handler, concurrency, replace, retry, limit)

    def _register(
        self,
        name: str,
        handler: Handler,
        concurrency: int | None,
        replace: bool,
        retry: tuple[int | None, float | None, float | None] = (None, None, None),
        limit_ms: int | None = None,
    ) -> None:
        validate_job_name(name)
        if not callable(handler):
            raise WorkerRegistrationError(f"Handler for {name!r} must be callable", name)
        if inspect.isgeneratorfunction(handler) or inspect.isasyncgenfunction(handler):
            # Calling one only builds a generator: the body would never run, yet every job
            # would be marked completed.
            raise WorkerRegistrationError(
                f"Handler for {name!r} is a generator function (it contains yield), so calling it would not "
                "run its body; use an async def or a plain def without yield",
                name,
            )
        size = self._ctx.options.worker_concurrency if concurrency is None else concurrency
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_COUNT:
            # 0 is accepted, as upstream: a registered worker that claims nothing.
            raise WorkerRegistrationError(f"Concurrency for {name!r} must be an integer from 0 to {MAX_COUNT}", name)
        policy = RetryPolicy.resolve(self._ctx.options, name, *retry) if retry != (None, None, None) else self._policy
        existing = self.workers.get(name)
        if existing is not None and not replace:
            raise WorkerRegistrationError(
                # Upstream's words first (code matching on them keeps working), then the fix.
                f'Worker already registered for job name "{name}"; pass replace=True to replace it',
                name,
            )
        worker = Worker(name, handler, size, inspect.iscoroutinefunction(handler), policy, limit_ms)
        if existing is not None:
            # Running jobs and claims in flight stay accounted for. The old filler is not
            # cancelled (a claim it awaits is already committed): it launches what it gets
            # on the current registration, then sees it was replaced and exits.
            worker.slots = existing.slots
            existing.wake.set()
        self.workers[name] = worker
        if self.running:
            self._start_filler(worker)
            if existing is None and self.on_new_name is not None:
                self.on_new_name(name)

    def summaries(self) -> dict[str, WorkerSummary]:
        return {
            name: WorkerSummary(w.concurrency, len(w.slots.active) - w.slots.finishing)
            for name, w in self.workers.items()
        }

    def heartbeat_ids(self) -> list[str]:
        """Ids of the jobs whose handlers run here (or whose outcome is being written)."""
        return [job_id for worker in self.workers.values() for job_id in worker.slots.active]

    @property
    def active_jobs(self) -> list[Job]:
        return [job for worker in self.workers.values() for job in worker.slots.active.values()]

    # -- fleet: paused names and outcome tallies ------------------------------------------------
    def set_paused(self, names: frozenset[str]) -> None:
        """Follow the store's paused set; a resumed name is woken to claim at once."""
        resumed = self.paused - names
        self.paused = names
        if [name for name in names if self._starved.pop(name, False) is None]:
            self.wake()  # the room kept for a name now paused goes to the others
        for name in resumed:
            self.wake(name)

    def _count(self, name: str, now: int, failed: bool) -> None:
        self.processed += 1
        key = (name, now // 60_000)
        entry = self._tally.get(key)
        if entry is None:
            entry = self._tally[key] = [0, 0]
        if failed:
            self.failed += 1
            entry[1] += 1
        else:
            entry[0] += 1

    def _count_group(self, group: str, now: int) -> None:
        """One failed attempt of error group ``group``, in the same tally as the names' (its
        row named ``errorgroups.error_counter_name``): the errors view's first seen and
        sparkline read these, which no retry or delete of the jobs takes back (issue 40)."""
        key = (error_counter_name(group), now // 60_000)
        entry = self._tally.get(key)
        if entry is None:
            entry = self._tally[key] = [0, 0]
        entry[1] += 1

    def take_tally(self) -> dict[tuple[str, int], tuple[int, int]]:
        tally, self._tally = self._tally, {}
        return {key: (done, failed) for key, (done, failed) in tally.items()}

    # -- start / wake / stop ----------------------------------------------------------------------
    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.running = True
        for worker in self.workers.values():
            worker.work_hint = True
            self._start_filler(worker)

    def _start_filler(self, worker: Worker) -> None:
        task = asyncio.get_running_loop().create_task(self._fill_loop(worker), name=f"monque-fill:{worker.name}")
        worker.filler = task
        self._fillers.add(task)
        task.add_done_callback(self._fillers.discard)
        worker.wake.set()

    def wake(self, name: str | None = None) -> None:
        """Something says there may be due work (for one name, or for all)."""
        targets = self.workers.values() if name is None else [w for w in (self.workers.get(name),) if w]
        for worker in targets:
            worker.work_hint = True
            worker.wake.set()

    def wake_at(self, name: str, due_ms: int, rearm: bool = False) -> None:
        """Arm a timer so a job due later is claimed on time, keeping the earliest per name.

        ``rearm``: ``due_ms`` is the name's *earliest* pending job as read from the store
        (the poll), so jobs due later may sit behind it unseen; once the claims have drained
        what is due, the filler looks up the next due time (``_rearm``) and arms its timer,
        instead of leaving those jobs to the next safety poll.
        """
        worker = self.workers.get(name)
        if worker is None or not self.running:
            return
        now = now_ms()
        if due_ms <= now:
            # Due already: the claim that follows reads now_ms() again, which can only be
            # later, so it sees the job. Anything later, even by 1 ms, needs a timer: a claim
            # made now would find nothing and nobody would look again until the safety poll.
            if rearm:
                worker.rearm = True
            self.wake(name)
            return
        delay = (due_ms - now) / 1000
        current = self._timer_due.get(name)
        if current is not None and current <= due_ms:
            return
        if name in self._timers:
            self._timers[name].cancel()
        loop = asyncio.get_running_loop()
        self._timer_due[name] = due_ms
        self._timers[name] = loop.call_later(delay + 0.002, self._timer_fired, name)

    def _timer_fired(self, name: str) -> None:
        self._timers.pop(name, None)
        due = self._timer_due.pop(name, None)
        if due is not None and due > now_ms():
            # The loop's monotonic clock and the wall clock disagree (or the wall clock was
            # set back): not due yet by the clock claims compare with, so wait the rest.
            # ``rearm``: should it be due by wake_at's own reading, the look-up still follows.
            self.wake_at(name, due, rearm=True)
            return
        worker = self.workers.get(name)
        if worker is not None:
            # wake_at keeps only the earliest due time per name, so later ones it was told
            # about were dropped; the claim this wakes takes what is due now, and then the
            # filler looks up the next due time (see _rearm) instead of leaving those jobs
            # to the safety poll.
            worker.rearm = True
        self.wake(name)

    def _unstarve(self, worker: Worker) -> bool:
        """This name stops waiting for the cap (it claims now, or is paused); whether it was."""
        return self._starved.pop(worker.name, False) is None

    def stop_claiming(self) -> None:
        self.running = False
        self._starved.clear()
        for worker in self.workers.values():
            if worker.deferred is not None:
                worker.deferred.cancel()
                worker.deferred = None
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        self._timer_due.clear()
        for worker in self.workers.values():
            worker.wake.set()

    async def join_fillers(self, timeout: float, grace: float) -> bool:
        """Wait up to ``timeout`` for the claim loops to end; False when one had to be cancelled.

        A filler only lingers while a claim is in flight (a locked file, a half-open
        connection). Past the deadline it is cancelled: whatever that claim takes, if it
        still commits, stays processing under this instance and stale recovery returns it.
        """
        fillers = list(self._fillers)  # replaced fillers may still be finishing a claim
        if not fillers:
            return True
        _, pending = await asyncio.wait(fillers, timeout=max(0.0, timeout))
        if not pending:
            return True
        for task in pending:
            task.cancel()
        await asyncio.wait(pending, timeout=grace)
        return False

    def running_tasks(self) -> list[asyncio.Task[None]]:
        return [task for worker in self.workers.values() for task in worker.slots.tasks.values()]

    def sync_running_jobs(self) -> set[str]:
        """Ids of the running jobs whose handlers are sync (``def``): a thread, which no
        cancellation stops (``Monque._stop`` gives them the grace instead)."""
        return {job_id for worker in self.workers.values() if not worker.is_async for job_id in worker.slots.tasks}

    def running_jobs(self) -> dict[str, asyncio.Task[None]]:
        """Job id → the task running it, across every worker."""
        return {job_id: task for worker in self.workers.values() for job_id, task in worker.slots.tasks.items()}

    def calling_job(self) -> str | None:
        """The id of this processor's job whose handler (or a task or thread it started) is
        the caller, while that run lasts; None for any other caller."""
        current = RUNNING_JOB.get()
        if current is None or current[0] is not self:
            return None
        job_id = current[1]
        return job_id if any(job_id in worker.slots.tasks for worker in self.workers.values()) else None

    # -- stop requests and progress (issue 37, run_control.py) ---------------------------------------
    def _running(self, job_id: str) -> tuple[Job, bool, asyncio.Task[None] | None] | None:
        for worker in self.workers.values():
            job = worker.slots.active.get(job_id)
            if job is not None:
                return job, worker.is_async, worker.slots.tasks.get(job_id)
        return None

    def stop_heard(self, job_id: str) -> None:
        """The change feed carried a stop request for ``job_id`` (``ChangeEvent.stop_requested``)."""
        self.control.heard(job_id)

    async def look_for_stops(self) -> None:
        """Read the stop requests of every job running here (the heartbeat, while the feed is down)."""
        await self.control.look(self.heartbeat_ids())

    def take_progress(self, job: Job, report: Progress) -> Awaitable[None] | None:
        return self.control.take(job, report)

    def take_progress_threadsafe(self, job: Job, report: Progress) -> None:
        loop = self._loop
        if loop is not None:
            self.control.take_threadsafe(job, report, loop)

    async def _cancel_stopped(self, job: Job) -> None:
        """An operator's stop ended this run: the attempt ``cancelled``, the job ``cancelled``."""
        from ..event_payloads import JobErrorEvent, JobEvent

        ctx = self._ctx
        now = now_ms()
        record = attempts.plain_attempt(attempts.CANCELLED, job.fail_count, ctx.instance_id, job.locked_at_ms, now)
        try:
            updated = await self._store.cancel_owned(job.id, ctx.instance_id, now, record)
        except Exception as error:  # noqa: BLE001 - as a failed outcome write: stale recovery returns it
            ctx.events.emit("job:error", JobErrorEvent(error, job))
            return
        if updated is None:
            _not_ours(job, "was stopped")
            return
        ctx.events.emit("job:cancelled", JobEvent(updated))

    # -- claiming ---------------------------------------------------------------------------------
    def _free_slots(self, worker: Worker) -> int:
        slots = worker.slots
        free = worker.concurrency - (len(slots.active) - slots.finishing) - slots.reserved
        cap = self._ctx.options.instance_concurrency
        if cap is not None:
            room = cap - (self._total_active - self._total_finishing) - self._total_reserved
            starved = self._starved
            if starved:
                # Names the cap kept from running anything go first, in the order they
                # started waiting: this one may use only the room left after those ahead of
                # it (all of them, if it is not waiting itself), so a busy name cannot take
                # back every slot it frees while another starves.
                ahead = 0
                for name in starved:
                    if name == worker.name:
                        break
                    ahead += 1
                room -= ahead
            if (
                room <= 0
                and free > 0
                and worker.work_hint
                and len(slots.active) == slots.finishing
                and worker.name not in starved
            ):
                # Nothing of this name runs, its own limit has room, and the cap alone stops it.
                starved[worker.name] = None
            free = min(free, room)
        return free

    def _claim_threshold(self, worker: Worker) -> int:
        # While busy, a wide worker waits (at most CLAIM_DEFER seconds) for a quarter of its
        # slots to free up, so it claims in batches instead of one statement per finished job.
        if worker.force or not worker.slots.active:
            return 1
        return max(1, worker.concurrency // 4)

    def _defer_claim(self, worker: Worker) -> None:
        if worker.deferred is None:
            worker.deferred = asyncio.get_running_loop().call_later(CLAIM_DEFER, self._deferred_claim, worker)

    def _deferred_claim(self, worker: Worker) -> None:
        worker.deferred = None
        worker.force = True
        worker.wake.set()

    async def _fill_loop(self, worker: Worker) -> None:
        from ..event_payloads import JobErrorEvent

        ctx = self._ctx
        while self.running and self.workers.get(worker.name) is worker:
            await worker.wake.wait()
            worker.wake.clear()
            while self.running and worker.work_hint and self.workers.get(worker.name) is worker:
                if worker.name in self.paused:
                    if self._unstarve(worker):
                        self._slot_freed(worker)  # its turn goes to the others
                    break  # paused in the store; set_paused wakes this filler on resume
                slots = self._free_slots(worker)
                if slots < self._claim_threshold(worker):
                    if slots > 0:
                        self._defer_claim(worker)
                    break
                worker.force = False
                was_starved = self._unstarve(worker)
                worker.slots.reserved += slots
                self._total_reserved += slots
                # Cleared before the claim, not after: a wake-up that arrives while the claim
                # is in flight sets it again and must not be overwritten by a short result.
                worker.work_hint = False
                try:
                    jobs = await self._store.claim(worker.name, ctx.instance_id, now_ms(), slots, self._heartbeat_ms)
                except Exception as error:  # noqa: BLE001 - the filler must outlive a failed claim
                    ctx.events.emit("job:error", JobErrorEvent(error))
                    if was_starved:
                        self._slot_freed(worker)  # the names that gave way to this claim may go
                    # Try again after poll_interval, not at the (much longer) safety poll.
                    asyncio.get_running_loop().call_later(ctx.options.poll_interval, self.wake, worker.name)
                    break
                finally:
                    worker.slots.reserved -= slots
                    self._total_reserved -= slots
                if not self.running:
                    await self._release(jobs)
                    return
                if was_starved and len(jobs) < slots:
                    # The room kept for this name is not all used: the names that gave way wait
                    # for a wake-up, so give them one.
                    self._slot_freed(worker)
                current = self.workers.get(worker.name, worker)  # a replacement's handler runs them
                for job in jobs:
                    running = current.slots.active.get(job.id)
                    if running is not None:
                        if job.id in self.finishing and _next_generation(running, job):
                            # The running copy's outcome (a retry due at once, a recurring
                            # run due already) was written and this claim took the next run
                            # before the copy's task ended: start it once that task ends.
                            self._defer_launch(current, job)
                        # Otherwise stale recovery handed back a job whose handler still runs
                        # here: the running copy settles the fresh claim; never run two
                        # copies of one job in one process.
                        continue
                    self._launch(current, job)
                if len(jobs) == slots:
                    worker.work_hint = True  # a full batch: there may be more
                elif worker.rearm:
                    worker.rearm = False
                    await self._rearm(worker)

    async def next_due_ms(self, name: str) -> int | None:
        """The earliest nextRunAt among ``name``'s pending jobs (the poll round arms its timer
        from it): a Claims read, asked through the processor, which holds that port."""
        return await self._store.next_due_ms([name])

    async def _rearm(self, worker: Worker) -> None:
        """Arm the timer for the earliest pending job of this name (read after the claim
        committed, so what was due has been taken and the answer is the next future job)."""
        from ..event_payloads import JobErrorEvent

        try:
            due = await self._store.next_due_ms([worker.name])
        except Exception as error:  # noqa: BLE001 - looked up again below
            self._ctx.events.emit("job:error", JobErrorEvent(error))
            # Without this read no timer is armed, and the jobs due later waited for the
            # safety poll (30 s): look again after poll_interval, as a failed claim does.
            asyncio.get_running_loop().call_later(self._ctx.options.poll_interval, self._look_again, worker.name)
            return
        if due is None or not self.running:
            return
        # ``rearm``: the earliest pending job, so later ones sit behind it unarmed. wake_at
        # reads the clock again: due by then (a busy CPU between the readings), it claims at
        # once, and without ``rearm`` nothing looked up the next due time. No timer was armed
        # for the jobs after it, and the worker idled until a feed wake-up armed one for the
        # producer's newest job, 19 s ahead in the purge benchmark (issue 34, part 5).
        self.wake_at(worker.name, due, rearm=True)

    def _look_again(self, name: str) -> None:
        """A due-time look-up failed: claim what is due now, then look up the next due time."""
        worker = self.workers.get(name)
        if worker is None or not self.running:
            return
        worker.rearm = True
        self.wake(name)

    async def _release(self, jobs: list[Job]) -> None:
        """A claim that landed after stop began goes back to pending untouched."""
        from ..event_payloads import JobErrorEvent

        if not jobs:
            return
        try:
            await self._store.release([job.id for job in jobs], self._ctx.instance_id, now_ms())
        except Exception as error:  # noqa: BLE001
            self._ctx.events.emit("job:error", JobErrorEvent(error))

    # -- running ----------------------------------------------------------------------------------
    def _launch(self, worker: Worker, job: Job) -> None:
        slots = worker.slots
        slots.active[job.id] = job
        self._total_active += 1
        loop = self._loop or asyncio.get_running_loop()
        slots.tasks[job.id] = loop.create_task(self._execute(worker, job))

    async def _execute(self, worker: Worker, job: Job) -> None:
        ctx = self._ctx
        returned = False
        started = 0.0
        RUNNING_JOB.set((self, job.id))  # this task's own context (see RUNNING_JOB)
        try:
            if job.repeat_interval is not None:
                schedule_error = _schedule_error(job.repeat_interval)
                if schedule_error is not None:
                    # A schedule no parser here can read (stored by another producer, or by an
                    # older version) would fail after every run and be retried for ever: fail
                    # it once, before the handler runs, with the parser's reason.
                    self.finishing.add(job.id)
                    await self._fail(job, schedule_error, terminal=True)
                    return
            if ctx.events.has_listeners("job:start"):
                ctx.events.emit("job:start", job)
            started = time.perf_counter()
            try:
                # The registration current when the run starts: a replacement registered
                # after the claim (by a handler that ran just before, say) handles it.
                current = self.workers.get(worker.name, worker)
                limit = job.timeout_ms or current.timeout_ms  # the job's own first (ADR 0019)
                if limit is not None:
                    value = await self._run_limited(current, job, limit)
                elif current.is_async:
                    value = await current.handler(job)
                else:
                    value = await self._threads.run(current.handler, job)
                    if value is not None:
                        if inspect.isawaitable(value):
                            value = await value
                        elif inspect.isgenerator(value) or inspect.isasyncgen(value):
                            raise TypeError(_GENERATOR_RESULT)
            except asyncio.CancelledError as error:
                control = self.control
                if control.cancelled and job.id in control.cancelled:
                    control.cancelled.discard(job.id)
                    task = asyncio.current_task()
                    if task is not None and task.uncancel() == 0:  # only the stop cancelled it
                        returned = self._handler_returned(worker, job)
                        await self._cancel_stopped(job)
                        return
                if _cancelled_from_outside():
                    # Shutdown gave up on this job: it stays processing for stale recovery, and
                    # its history says why this attempt ended (stale recovery will not repeat it).
                    await self._record_shutdown(job)
                    raise
                # Nobody cancelled this run: the handler let a CancelledError of its own out
                # (it awaited something another task cancelled). Re-raising would leave the
                # job processing, re-run after every lock timeout and never failed.
                returned = self._handler_returned(worker, job)
                await self._fail(job, error, escaped=True, policy=current.policy)
            except Exception as error:  # noqa: BLE001 - a handler failing is the normal fail path
                returned = self._handler_returned(worker, job)
                if job._limit is not None and job._limit.stop_requested:
                    await self._cancel_stopped(job)  # whatever it raised on its way out
                    return
                # NonRetryableError: the handler says retrying cannot help (upstream's). By the
                # type itself: isinstance() reads ``__class__``, which a hostile exception's
                # __getattribute__ can make raise (exception_text.py has the other shapes).
                terminal = issubclass(type(error), NonRetryableError)
                run_limit = job._limit
                outcome = TIMED_OUT if run_limit is not None and run_limit.error is error else None
                await self._fail(job, error, terminal=terminal, policy=current.policy, outcome=outcome)
            except BaseException as error:
                # KeyboardInterrupt, SystemExit, GeneratorExit or another BaseException out of
                # the handler: the job fails like any other (so a handler that always exits
                # ends failed after max_retries instead of taking down every worker that
                # claims it). On the loop's thread KeyboardInterrupt and SystemExit then go
                # on, as anywhere in asyncio: the program stops. From a sync handler's thread
                # they only end that call, as threading treats them (ADR 0010).
                returned = self._handler_returned(worker, job)
                await self._fail(job, error, escaped=True, policy=current.policy)
                if current.is_async and issubclass(type(error), KeyboardInterrupt | SystemExit):
                    log.error(
                        "handler for job %s (%s) raised %s; the job is recorded as failed and the "
                        "exception goes on to stop the program",
                        job.id,
                        job.name,
                        exception_name(error),
                    )
                    task = asyncio.current_task()
                    if task is not None:  # it reaches the program through the loop: no second report
                        task.add_done_callback(_retrieve)
                    raise
            else:
                returned = self._handler_returned(worker, job)
                if job._limit is not None and job._limit.stop_requested:
                    # A sync handler that returned after should_stop() said so (or an async
                    # one that swallowed its cancellation): the run was stopped.
                    await self._cancel_stopped(job)
                    return
                await self._complete(job, (time.perf_counter() - started) * 1000, current.policy, value)
        finally:
            if self.control.throttles:
                self.control.ended(job.id)
            if started and time.perf_counter() - started > self._long_run:
                self.long_ran.add(job.name)  # a suspect if the loop turns out to have been blocked
            self.finishing.discard(job.id)
            self._finishing_in.pop(job.id, None)
            worker.slots.active.pop(job.id, None)
            worker.slots.tasks.pop(job.id, None)
            self._total_active -= 1
            if returned and job.id not in self._held:  # (a held slot was counted taken again: _hold_slot)
                worker.slots.finishing -= 1
                self._total_finishing -= 1
            self._held.discard(job.id)
            if self._deferred_launches:
                self._launch_deferred(job.id)
            if not returned or not worker.slots.active:
                # (A handler that returned freed its slot then: _handler_returned.)
                self._slot_freed(self.workers.get(worker.name, worker))

    async def run_claimed(self, job: Job) -> None:
        """Run one job this instance just claimed, here and now, as a slot would, and return
        once its outcome is written (test mode's inline runs: eager.py)."""
        worker = self.workers[job.name]
        self._launch(worker, job)
        task = worker.slots.tasks.get(job.id)
        if task is not None:
            await task

    def running_task(self, job: Job) -> asyncio.Task[None] | None:
        """The task running ``job`` in this instance, if one is."""
        worker = self.workers.get(job.name)
        return None if worker is None else worker.slots.tasks.get(job.id)

    def _handler_returned(self, worker: Worker, job: Job) -> bool:
        """The handler is done; its outcome write is about to go out. Its slot may be refilled
        now: the claim that refills it can share that write's transaction (SQLite store)."""
        self.finishing.add(job.id)
        self._finishing_in[job.id] = worker
        worker.slots.finishing += 1
        self._total_finishing += 1
        if self.running:
            self._slot_freed(self.workers.get(worker.name, worker))
        return True

    def _defer_launch(self, worker: Worker, job: Job) -> None:
        worker.slots.reserved += 1  # the claim holds a slot until it can start
        self._total_reserved += 1
        self._deferred_launches[job.id] = (worker, job)

    def _launch_deferred(self, job_id: str) -> None:
        deferred = self._deferred_launches.pop(job_id, None)
        if deferred is None:
            return
        worker, job = deferred
        worker.slots.reserved -= 1
        self._total_reserved -= 1
        if self.running:
            self._launch(self.workers.get(worker.name, worker), job)
        else:  # shutdown began: the claim goes back to pending, like any claim landing now
            task = asyncio.get_running_loop().create_task(self._release([job]))
            self._releases.add(task)
            task.add_done_callback(self._releases.discard)

    def _slot_freed(self, worker: Worker) -> None:
        if self._ctx.options.instance_concurrency is not None:
            # Under an instance cap, a freed slot goes first to the names the cap kept
            # waiting, in registration order starting after this one, and to this name last:
            # a busy name must not take back every slot it frees while another starves.
            # (Fillers claim in the order they are woken.)
            workers = list(self.workers.values())
            start = workers.index(worker) + 1 if worker in workers else 0
            for other in workers[start:] + workers[:start]:
                if other is not worker and other.work_hint:
                    other.wake.set()
        if worker.work_hint:
            worker.wake.set()

    async def _complete(
        self, job: Job, duration_ms: float, policy: RetryPolicy | None = None, value: Any = None
    ) -> None:
        """Write a successful run; ``value`` is what the handler returned, kept as the job's
        ``result`` unless None (no result: the store's batched path, no extra argument)."""
        ctx = self._ctx
        if value is not None:
            try:
                value = stored_result(value)[1]
            except InvalidResultError as error:  # recorded as the run's failure, never retried
                await self._fail(job, error, terminal=True)
                return
        try:
            now = now_ms()
            # After the slot just run, however the wall clock moved: set back during the run
            # (NTP, a VM resumed), ``now`` may be before that slot, whose run would repeat.
            next_run = _next_run_ms(job.repeat_interval, max(now, job.next_run_at_ms)) if job.repeat_interval else None
            record = (
                None
                if self._store.records_success_from_row
                else attempts.plain_attempt("completed", job.fail_count, ctx.instance_id, job.locked_at_ms, now)
            )
            updated = await self._write_completion(job, now, next_run, record, value)
        except InvalidCronError as error:  # no next run can be computed: retrying cannot help
            await self._fail(job, error, terminal=True)
            return
        except (StoreLostError, _CompletionAbandoned):
            return  # nothing can be written (the file is gone; or said, and left to stale recovery)
        except Exception as error:  # noqa: BLE001 - upstream: a failed completion takes the fail path
            await self._fail(job, error, policy=policy)
            return
        if updated is None:
            _not_ours(job, "completed")  # nothing written, no event (upstream)
            return
        self._count(updated.name, now, False)
        if updated.status is JobStatus.PENDING:
            self.wake_at(updated.name, updated.next_run_at_ms)
        if ctx.events.has_listeners("job:complete"):
            ctx.events.emit("job:complete", _payloads().JobCompleteEvent(updated, duration_ms))

    async def _write_completion(
        self, job: Job, now: int, next_run: int | None, record: attempts.Attempt | None, value: Any
    ) -> Job | None:
        """The store's ``complete``, written again while the store cannot take it *now*.

        Upstream sends a completion that throws down the fail path. When the store was only
        unavailable (``StoreUnavailableError``: SQLite locked past ``busy_timeout``, a full
        disk, a MongoDB election), that recorded a run that succeeded as a failure: the job
        ran again, or ended failed for good on its last attempt, with the store's error as
        its reason (a resource-exhaustion probe). The outcome is known, so it is kept and
        written again, every 0.05 s doubling to 2 s (ADR 0026):

        - the job keeps its slot meanwhile (it is taken off ``finishing``), so a store that
          takes nothing does not let claims pile up behind it;
        - its claim keeps beating (it is still active), and the write names the claim, so a
          job stale recovery handed to another worker is not completed by this one;
        - after ``lock_timeout`` the write is given up (``_CompletionAbandoned``): the job
          leaves the heartbeat and stale recovery returns it, as upstream's at-least-once
          delivery would;
        - any other exception from the store takes the fail path, as upstream (a refusal is
          not fixed by writing again).
        """
        ctx = self._ctx
        delay = COMPLETION_RETRY_FIRST_S
        give_up_at: float | None = None
        while True:
            try:
                # SQLite answers a one-off completion with a future its batch settles (base.py).
                if value is None:
                    updated = await self._store.complete(job.id, ctx.instance_id, now, next_run, record)
                else:
                    updated = await self._store.complete(job.id, ctx.instance_id, now, next_run, record, result=value)
                if give_up_at is not None:
                    log.info("job %s (%s): its completion is written", job.id, job.name)
                return updated
            except StoreUnavailableError as error:
                reason = " ".join(str(error).split())[:300]
                if give_up_at is None:
                    give_up_at = time.monotonic() + ctx.options.lock_timeout
                    self._hold_slot(job.id)
                    log.warning(
                        "job %s (%s) succeeded, but the store cannot take its completion now (%s); writing "
                        "it again for up to %g s",
                        job.id,
                        job.name,
                        reason,
                        ctx.options.lock_timeout,
                    )
                    ctx.events.emit("job:error", _payloads().JobErrorEvent(error, job))
                elif time.monotonic() >= give_up_at:
                    log.warning(
                        "job %s (%s): its completion could not be written for %g s (%s); it stays processing "
                        "and stale recovery returns it",
                        job.id,
                        job.name,
                        ctx.options.lock_timeout,
                        reason,
                    )
                    raise _CompletionAbandoned from error
            await asyncio.sleep(delay)
            delay = min(delay * 2, COMPLETION_RETRY_MAX_S)

    def _hold_slot(self, job_id: str) -> None:
        """Count a finishing job's slot as taken again while its completion waits for the store."""
        worker = self._finishing_in.get(job_id)
        if worker is not None and job_id not in self._held:
            self._held.add(job_id)
            worker.slots.finishing -= 1
            self._total_finishing -= 1

    async def _fail(
        self,
        job: Job,
        error: BaseException,
        terminal: bool = False,
        escaped: bool = False,
        policy: RetryPolicy | None = None,
        outcome: str | None = None,
    ) -> None:
        """Write a failed run: retried after a backoff or failed for good, with its attempt
        record and error group; then ``job:fail``.

        Recording a failure must not be able to fail, or the job stays ``processing``, is
        re-run after every lock timeout past ``max_retries``, and nobody hears of it. The
        exception is described by ``describe_exception``, which cannot raise whatever the
        exception does. Should the write still raise (the store refused the record), that
        is a ``job:error`` and the failure is written again in a plain form: the type, a
        fixed message saying so, no traceback. Only if that write fails too (the store
        cannot be written at all) is the job left to stale recovery.
        """
        from ..event_payloads import JobErrorEvent, JobFailEvent

        ctx = self._ctx
        policy = policy or self._policy
        fail_count = job.fail_count + 1
        now = now_ms()
        retry_at = None
        if not terminal and fail_count < policy.max_retries:
            retry_at = now + backoff_delay_ms(fail_count, policy.base_ms, policy.max_ms)
        described = describe_exception(error)
        reason = _escaped_reason(described) if escaped else described.message
        record = attempts.failure_attempt(
            job.fail_count, ctx.instance_id, job.locked_at_ms, now, described, retry_at is not None, reason, outcome
        )
        group = error_group_key(job.name, described.type, reason)
        try:
            updated = await self._store.fail(job.id, ctx.instance_id, now, fail_count, reason, retry_at, record, group)
        except Exception as store_error:  # noqa: BLE001
            # Written again before anyone hears of it: a listener must not be able to stop that.
            written = await self._fail_plainly(job, described, store_error, now, fail_count, retry_at, outcome)
            ctx.events.emit("job:error", JobErrorEvent(store_error, job))
            if written is False:
                return
            updated = written
        if updated is None:
            _not_ours(job, "failed")
            return
        self._count(updated.name, now, True)
        if updated.error_group is not None:
            self._count_group(updated.error_group, now)
        will_retry = updated.status is JobStatus.PENDING
        if will_retry:
            self.wake_at(updated.name, updated.next_run_at_ms)
        ctx.events.emit("job:fail", JobFailEvent(updated, error, will_retry))

    async def _fail_plainly(
        self,
        job: Job,
        described: ExceptionText,
        store_error: Exception,
        now: int,
        fail_count: int,
        retry_at: int | None,
        outcome: str | None = None,
    ) -> Job | Literal[False] | None:
        """The last resort of ``_fail``: the same outcome with nothing of the exception's
        own text in it. False when this write fails too (logged here; the first failure is
        the ``job:error``)."""
        ctx = self._ctx
        reason = f"{described.type} (the failure could not be stored in full: {exception_name(store_error)})"
        record = attempts.Attempt(
            fail_count,
            outcome or ("retrying" if retry_at is not None else "failed"),
            ctx.instance_id,
            job.locked_at_ms,
            now,
            error_type=described.type,
            error_message=reason,
        )
        group = error_group_key(job.name, described.type, reason)
        try:
            return await self._store.fail(job.id, ctx.instance_id, now, fail_count, reason, retry_at, record, group)
        except Exception as again:  # noqa: BLE001 - the store cannot be written: stale recovery returns the job
            log.warning(
                "job %s (%s) failed, and the failure could not be written (%s); the job stays processing "
                "until stale recovery returns it",
                job.id,
                job.name,
                exception_name(again),
            )
            return False

    # -- time limits (issue 37, ADR 0019) --------------------------------------------------------
    async def _run_limited(self, worker: Worker, job: Job, limit_ms: int) -> Any:
        """Run ``job``'s handler under its time limit; raise the run's ``TimeoutError``
        (kept on ``job._limit.error``, so the caller records the outcome ``timed_out``) when
        the handler ran past it.

        Only jobs with a limit come here: a run without one pays nothing for the feature
        (no timeout scope, no extra await; ``_execute`` tests one attribute).

        An async handler is cancelled at the deadline. A sync one runs in a thread, which
        cannot be stopped: past the deadline the job stays owned by this instance (in its
        slot, so heartbeats go on and no retry is scheduled, so no other worker claims it
        and no second run overlaps), ``overLimitAt`` is stamped on it for the console, and
        when the thread returns, whatever it returned or raised, the attempt is timed out.
        ``job.deadline`` / ``job.should_stop()`` let sync code stop itself in time.
        """
        if type(limit_ms) is not int or not 0 < limit_ms <= MAX_TIMEOUT_SECONDS * 1000:
            # A hand-edited row's value (the claim reads it unchecked): the registration's applies.
            fallback = worker.timeout_ms
            if fallback is None:
                return await self._run_unlimited(worker, job)
            limit_ms = fallback
        run_limit = job._limit = RunLimit(limit_ms, time.monotonic(), now_ms())
        seconds = limit_ms / 1000
        if worker.is_async:
            scope = asyncio.timeout(seconds)
            try:
                async with scope:
                    value = await worker.handler(job)
            except Exception as error:
                if scope.expired():  # cancelled at the deadline (TimeoutError), or it raised on the way out
                    raise run_limit.timed_out(limit_text(limit_ms)) from error
                raise
            return value
        future = self._threads.run(worker.handler, job)
        try:
            done, _ = await asyncio.wait((future,), timeout=seconds)
        except asyncio.CancelledError:
            future.cancel()  # as awaiting it would: stop waiting (the thread goes on)
            raise
        if done:
            result = future.result()
            if run_limit.passed():  # it returned once past its deadline (``should_stop()`` said so)
                raise run_limit.timed_out(limit_text(limit_ms), returned=True)
            if result is not None:
                return await self._sync_result(result, run_limit, limit_ms)
            return None
        await self._over_limit(job, limit_ms)
        try:
            result = await future  # the thread cannot be stopped: the job stays owned until it returns
        except Exception as error:
            raise run_limit.timed_out(limit_text(limit_ms), returned=True) from error
        if inspect.iscoroutine(result):
            result.close()  # too late to run it
        raise run_limit.timed_out(limit_text(limit_ms), returned=True)

    async def _run_unlimited(self, worker: Worker, job: Job) -> Any:
        if worker.is_async:
            return await worker.handler(job)
        result = await self._threads.run(worker.handler, job)
        if result is not None:
            if inspect.isawaitable(result):
                return await result
            if inspect.isgenerator(result) or inspect.isasyncgen(result):
                raise TypeError(_GENERATOR_RESULT)
        return result

    async def _sync_result(self, result: object, run_limit: RunLimit, limit_ms: int) -> Any:
        """What a sync handler returned in time: an awaitable runs in the time left (and its
        value is the result); any other value is the result itself."""
        if inspect.isawaitable(result):
            scope = asyncio.timeout(max(0.0, run_limit.monotonic - time.monotonic()))
            try:
                async with scope:
                    return await result
            except Exception as error:
                if scope.expired():
                    raise run_limit.timed_out(limit_text(limit_ms)) from error
                raise
        if inspect.isgenerator(result) or inspect.isasyncgen(result):
            raise TypeError(_GENERATOR_RESULT)
        return result

    async def _over_limit(self, job: Job, limit_ms: int) -> None:
        """A sync handler passed its limit and its thread goes on: say so, in the log and on
        the job (``overLimitAt``, best effort: the limit holds without it)."""
        now = now_ms()
        job.over_limit_at_ms = now
        log.warning(
            "job %s (%s) passed its time limit of %s; its sync handler still runs in a thread, which cannot be "
            "stopped: the job stays owned here until it returns, then its attempt is recorded as timed out",
            job.id,
            job.name,
            limit_text(limit_ms),
        )
        try:
            await self._store.mark_over_limit(job.id, self._ctx.instance_id, now)
        except Exception as error:  # noqa: BLE001 - display only
            log.debug("could not mark job %s over its time limit: %s", job.id, error)

    async def _record_shutdown(self, job: Job) -> None:
        """Best effort, never raises: the shutdown's own bound applies to this write too."""
        ctx = self._ctx
        record = attempts.plain_attempt("shutdown", job.fail_count, ctx.instance_id, job.locked_at_ms, now_ms())
        try:
            await self._store.record_attempt(job.id, ctx.instance_id, record)
        except asyncio.CancelledError:
            return  # cancelled again: stop() stopped waiting; stale recovery records the attempt
        except Exception as error:  # noqa: BLE001 - diagnostic data only
            log.debug("could not record the shutdown of job %s: %s", job.id, error)

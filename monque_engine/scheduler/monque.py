"""`Monque`: the public facade. Thin on purpose: each call delegates to one service."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from datetime import datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .. import testing
from ..change_rows import ChangeRows
from ..cursor import CursorAnchor, encode_cursor
from ..errorgroups import ErrorGroup
from ..errors import (
    ConnectionError,
    InvalidCronError,
    InvalidJobQueryError,
    JobNotFoundError,
    JobStateError,
    MonqueError,
    ShutdownTimeoutError,
    WorkerRegistrationError,
)
from ..events import EventEmitter, EventName, Listener, Subscribe
from ..exception_text import exception_line
from ..job import (
    BulkCount,
    BulkOperationResult,
    ChangeEvent,
    CursorDirection,
    CursorPage,
    Job,
    JobListFilter,
    JobSelector,
    JobSort,
    JobStatus,
    QueueStats,
    QueueViewSummary,
)
from ..options import MonqueOptions
from ..progress import CountProgress, PageProgress
from ..store import DEFAULT_URL, InvalidStoreUrlError, JobStore, StoreOpenOptions, open_store
from ..store.urls import mask_secrets
from ..timeutil import datetime_to_ms, now_ms
from .context import SchedulerContext
from .eager import EagerRunner
from .fleet import Fleet
from .intake import JobIntake
from .lifecycle import Lifecycle
from .manager import JobManager
from .processor import Handler, JobProcessor, outside_handlers
from .query import QueryService, check_sort
from .resilient_watch import FeedState, ResilientWatch, WatchEvent
from .stop_budget import StopBudget
from .waiting import wait_for_final

if TYPE_CHECKING:
    from ..fleet_records import InstanceInfo, OwnerCheck, QueueHealth
    from ..metrics import MonqueCollector

log = logging.getLogger("monque_engine")

#: How long stop() waits, after ``shutdown_timeout``, for cancelled handlers and outcome
#: writes before abandoning them (so stop() never outlasts shutdown_timeout + this +
#: ``stop_budget.STOP_STORE_BUDGET`` for its store steps).
SHUTDOWN_GRACE = 5.0


class Monque:
    """A job queue on one jobs collection.

    ``Monque("sqlite:///jobs.db")`` (the default is ``sqlite:///monque.db``) or
    ``Monque("mongodb://host/db")``, or pass a store object. Options are upstream's in
    snake_case with intervals in seconds; see ``MonqueOptions``.
    """

    def __init__(self, store: str | JobStore = DEFAULT_URL, **options: Any) -> None:
        if not isinstance(store, str | JobStore):
            raise InvalidStoreUrlError(
                "Monque() takes a store URL (sqlite:///jobs.db, mongodb://host/db) or a JobStore, "
                f"got {type(store).__name__}"
            )
        self.options = MonqueOptions.from_kwargs(options)
        if self.options.recover_stale_jobs and self.options.lock_timeout < 2 * self.options.heartbeat_interval:
            # Liveness is the heartbeat (ADR 0004): with less than two beats per lock_timeout,
            # a running job can look stale between two beats and be handed to another worker.
            log.warning(
                "lock_timeout (%g s) is under twice heartbeat_interval (%g s): running jobs may be "
                "recovered as stale between heartbeats; raise lock_timeout or lower heartbeat_interval",
                self.options.lock_timeout,
                self.options.heartbeat_interval,
            )
        self._url = store if isinstance(store, str) else None
        self.store: JobStore = open_store(store) if isinstance(store, str) else store
        self.events = EventEmitter()
        #: ``on``/``once`` add a listener (typed per event: ``monque_engine.events.Subscribe``).
        self.on: Subscribe = self.events.on
        self.once: Subscribe = self.events.once
        # The facade alone holds the whole store; each service gets its port (ADR 0018).
        store = self.store
        self._ctx = SchedulerContext(self.options, self.events)
        self._processor = JobProcessor(self._ctx, store)
        self._intake = JobIntake(self._ctx, store)
        self._manager = JobManager(self._ctx, store, store, store.list_instances)
        self._query = QueryService(self._ctx, store, self._processor.summaries)
        self._fleet = Fleet(self._ctx, self._processor, store)
        self._lifecycle = Lifecycle(
            self._ctx, self._processor, self._fleet, liveness=store, feed=store, retention=store
        )
        self._eager = EagerRunner(self._ctx, self._processor, store, store, store)
        self._ctx.wake_at = self._processor.wake_at
        self._ctx.poll_soon = self._lifecycle.poll_soon
        self._initialized = False
        self._init_lock = asyncio.Lock()
        self._start_lock = asyncio.Lock()
        self._stopping: asyncio.Task[None] | None = None
        #: Tasks a timed-out stop() gave up on: a later stop() or close() does not wait again.
        self._abandoned: set[asyncio.Task[None]] = set()
        #: Resolved when the start() under way (if any) has finished.
        self._starting: asyncio.Future[None] | None = None
        #: A close() called from a handler, finishing after that handler returns.
        self._closing: asyncio.Task[None] | None = None
        #: close() ran (and initialize() has not reopened): calls say "closed", not "not initialized".
        self._closed = False
        #: close() is closing the store now: waits end with "closed", not "feed ended".
        self._closing_store = False
        self._metrics: MonqueCollector | None = None
        #: The stop under way left jobs processing under this instance (its shutdown timed out).
        self._left_jobs = False

    # -- identity -------------------------------------------------------------------------------
    @property
    def instance_id(self) -> str:
        return self.options.scheduler_instance_id

    @property
    def display_url(self) -> str:
        return self.store.display_url

    @property
    def is_running(self) -> bool:
        return self._processor.running

    @property
    def running_with_progress(self) -> int:
        """Jobs running in this process whose handler reported progress (the metrics' gauge)."""
        return len(self._processor.control.throttles)

    @property
    def running_job_count(self) -> int:
        """Handlers of this instance running now: what a ``stop()`` will wait for (a console that
        quits says so instead of showing a blank screen until they finish)."""
        return sum(summary.active_count for summary in self._processor.summaries().values())

    @property
    def in_test_mode(self) -> bool:
        """Jobs run inline at ``enqueue`` (option ``test_mode``, or ``testing.test_mode()``)."""
        return self.options.test_mode or testing.test_mode_active()

    @property
    def feed_state(self) -> FeedState:
        """The processor's change feed: ``connecting``, ``live``, ``reconnecting``, ``fallback`` (polling) or
        ``stopped`` (the vocabulary of ``ResilientWatch``)."""
        return self._lifecycle.feed_state

    # -- life cycle -----------------------------------------------------------------------------
    async def initialize(self) -> None:
        """Open the store, create indexes, recover stale jobs, check the instance id. Idempotent."""
        if self._initialized:
            # Before the lock: a handler calling this while close() holds the lock (and waits
            # for that handler to finish) would wait until shutdown_timeout, then be cancelled.
            return
        async with self._init_lock:
            if self._initialized:
                return
            retention = self.options.job_retention
            self.events.store_loss_reported = False  # a store opened anew may be lost anew
            try:
                await self.store.open(
                    StoreOpenOptions(
                        collection_name=self.options.collection_name,
                        create_indexes=not self.options.skip_index_creation,
                        retention_index=retention is not None,
                        on_fatal=self._store_failed,
                    )
                )
                if self.options.recover_stale_jobs and not self.store.read_only:
                    await self._lifecycle.recover_stale()
                heartbeat_ms = int(self.options.heartbeat_interval * 1000)
                if await self.store.has_live_claim(self.instance_id, now_ms() - 2 * heartbeat_ms):
                    raise ConnectionError(
                        f"Another live scheduler is using instance id {self.instance_id!r} (it holds processing "
                        "jobs with a recent heartbeat); give each process its own scheduler_instance_id"
                    )
            except MonqueError as error:
                await self._close_store_quietly()
                message = mask_secrets(str(error), self._url or "")
                raise ConnectionError(f"Failed to initialize Monque: {message}") from error
            except Exception as error:
                await self._close_store_quietly()
                # Not ours: its type says what it was ("MemoryError" alone has no text, and the
                # line read "Failed to initialize Monque:" with nothing after it).
                message = mask_secrets(exception_line(error), self._url or "")
                raise ConnectionError(f"Failed to initialize Monque: {message}") from error
            except BaseException:  # cancelled (a command stopped by a signal): leave nothing open
                await self._close_store_quietly()
                raise
            self._initialized = True
            self._closed = False

    async def _close_store_quietly(self) -> None:
        try:
            await self.store.close()
        except Exception:  # noqa: BLE001 - already reporting the real failure
            pass

    async def start(self) -> None:
        """Start processing registered workers. Already running: nothing happens."""
        if not self._initialized:
            raise ConnectionError(self._not_open_message("before start()"))
        if self.store.read_only:
            raise ConnectionError(
                f"{self.display_url} is open read-only, so this Monque cannot process jobs; drop mode=ro to start workers"
            )
        if self.in_test_mode:
            log.debug("test mode: start() runs no worker (jobs run inline at enqueue)")
            return
        async with self._start_lock:  # two concurrent start() calls must not both start duties
            if not self._initialized:  # a close() that ran while this call waited for the lock
                raise ConnectionError(self._not_open_message("before start()"))
            if self._processor.running:
                return
            # A stop() called while this start is under way waits for it, then stops what it started.
            self._starting = asyncio.get_running_loop().create_future()
            try:
                if self._stopping is not None:
                    if self._processor.calling_job() is not None:
                        # A handler: the stop waits for this very handler, so waiting for it here
                        # would last until shutdown_timeout (then cancel the stop itself).
                        return
                    await asyncio.shield(self._stopping)  # a cancelled start() leaves the stop going
                await self._lifecycle.start()
                self._processor.start()
            finally:
                self._starting.set_result(None)
                self._starting = None

    async def stop(self) -> None:
        """Stop claiming, let in-flight jobs finish up to ``shutdown_timeout``. Never raises.

        Called from one of this instance's own handlers (or a thread or task it started), it
        starts the stop and returns at once: waiting would wait for the caller itself, until
        ``shutdown_timeout`` cancelled it and left its job to run again after stale recovery.
        The stop completes once that handler, and the others, have returned.
        """
        starting = self._starting
        if starting is not None and self._processor.calling_job() is None:
            await asyncio.shield(starting)
        if self._stopping is None or self._stopping.done():  # (one a handler started may be done)
            self._stopping = asyncio.get_running_loop().create_task(self._stop(), context=outside_handlers())
        if self._processor.calling_job() is not None:
            return
        try:
            await asyncio.shield(self._stopping)
        finally:
            if self._stopping is not None and self._stopping.done():
                self._stopping = None

    async def _stop(self) -> None:
        """Bounded by ``shutdown_timeout`` plus ``SHUTDOWN_GRACE``, whatever handlers do,
        plus ``STOP_STORE_BUDGET`` for the store steps, whatever the store does (each step
        at most ``STOP_STEP_TIMEOUT``; stop_budget.py).

        Handlers get until ``shutdown_timeout`` (counted from the call); the async ones still
        running are reported with ``ShutdownTimeoutError`` (a ``job:error``) and cancelled. A
        sync one cannot be cancelled: it gets the grace to return (its outcome recorded).
        Cancelled handlers and outcome writes get the grace to finish; a task still running
        after it (a handler that swallows ``CancelledError``, a write stuck on the network)
        is abandoned, reported the same way, and its job is left to stale recovery.
        """
        processor = self._processor
        if not processor.running and all(task in self._abandoned for task in processor.running_tasks()):
            return  # nothing runs, or only what an earlier stop() already gave up on
        loop = asyncio.get_running_loop()
        self._left_jobs = False
        jobs_deadline = loop.time() + self.options.shutdown_timeout
        final_deadline = jobs_deadline + SHUTDOWN_GRACE
        processor.stop_claiming()
        budget = StopBudget()  # the store steps below: each bounded, and all of them together
        await self._lifecycle.stop_background(budget)
        if not await processor.join_fillers(jobs_deadline - loop.time(), SHUTDOWN_GRACE):
            self._shutdown_timed_out("a claim was still in flight (it is left for stale recovery)", [])
        running = processor.running_jobs()
        if running:
            _done, pending = await asyncio.wait(running.values(), timeout=max(0.0, jobs_deadline - loop.time()))
            if pending:
                # Only handlers still running are given up on. A job whose handler returned is
                # writing its outcome: cancelling would not stop that write, only lose its event
                # and misreport the job as left for recovery; let it finish within the grace.
                stuck = {
                    job_id: task
                    for job_id, task in running.items()
                    if task in pending and job_id not in processor.finishing
                }
                # A sync handler's thread cannot be cancelled (cancelling its task would only drop
                # the outcome it returns in the grace: a finished job left processing); it gets
                # the grace to return, and is reported below only if it has not by then.
                threads = processor.sync_running_jobs()
                cancelled = {job_id: task for job_id, task in stuck.items() if job_id not in threads}
                if cancelled:
                    incomplete = [job for job in processor.active_jobs if job.id in cancelled]
                    self._shutdown_timed_out(
                        f"{len(incomplete)} job(s) still running; they stay processing and stale recovery "
                        "will return them to pending",
                        incomplete,
                    )
                    for task in cancelled.values():
                        task.cancel()
                # At least a moment, so cancelled handlers can unwind even if the fillers used the grace.
                _, unfinished = await asyncio.wait(pending, timeout=max(0.1, final_deadline - loop.time()))
                if unfinished:
                    left = {job_id for job_id, task in running.items() if task in unfinished}
                    abandoned = [job for job in processor.active_jobs if job.id in left]
                    self._shutdown_timed_out(
                        f"{len(abandoned)} job(s) did not end within {SHUTDOWN_GRACE:g} s more (a sync handler still "
                        "running, a handler that ignores cancellation, or an outcome write that cannot reach the "
                        "store); they are abandoned and stale recovery will return them to pending",
                        abandoned,
                    )
                    for task in unfinished:
                        task.cancel()  # once more; never awaited: stop() must not wait for them
                        self._abandoned.add(task)
                        task.add_done_callback(self._abandoned.discard)
        await self._lifecycle.stop_heartbeat()
        await self._fleet.leave(budget, holding=self._left_jobs)  # never raises; a failure is a job:error
        self._query.stats_cache.clear()

    def _shutdown_timed_out(self, detail: str, jobs: list[Job]) -> None:
        from ..event_payloads import JobErrorEvent

        self._left_jobs = True  # every timeout report is of something left under this instance

        self.events.emit(
            "job:error",
            JobErrorEvent(
                ShutdownTimeoutError(f"Shutdown timed out after {self.options.shutdown_timeout:g} s: {detail}", jobs)
            ),
        )

    async def close(self) -> None:
        """Stop, then release the store (threads, connections).

        From one of this instance's own handlers it returns at once, as ``stop()`` does; the
        store is closed once every handler, the caller included, has returned and its
        outcome is written. A later ``close()`` from outside waits for that.
        """
        if self._processor.calling_job() is not None:
            if self._closing is None or self._closing.done():
                self._closing = asyncio.get_running_loop().create_task(self._close(), context=outside_handlers())
            return
        closing = self._closing
        if closing is not None:
            await asyncio.shield(closing)
            if self._closing is closing:
                self._closing = None
        await self._close()

    async def _close(self) -> None:
        # Under both life-cycle locks (always taken in this order): an initialize() or start()
        # running at the same time finishes first and is then closed, instead of leaving a
        # store open, or workers running on a closed store, after close() returned.
        async with self._init_lock, self._start_lock:
            await self.stop()
            self._closing_store = True  # a wait() whose feed this close ends says why
            try:
                await self.store.close()
            finally:
                self._closing_store = False
            if self._initialized:
                self._closed = True
            self._initialized = False

    def is_healthy(self) -> bool:
        """Started, and the store still trustworthy (e.g. its SQLite file not deleted or replaced)."""
        return self._initialized and self._processor.running and self.store.health_error() is None

    def _store_failed(self, error: Exception) -> None:
        """The store found it can no longer be trusted: say so once, loudly."""
        from ..event_payloads import JobErrorEvent

        self.events.emit("job:error", JobErrorEvent(error))

    async def __aenter__(self) -> Monque:
        await self.initialize()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def _require_initialized(self) -> None:
        if not self._initialized:
            raise ConnectionError(self._not_open_message("first"))

    def _not_open_message(self, when: str) -> str:
        if self._closed:
            return "Monque is closed (close() was called); call await monque.initialize() to reopen it"
        return f"Monque is not initialized; call await monque.initialize() {when}"

    # -- workers --------------------------------------------------------------------------------
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
        """Register ``async def handler(job)`` for jobs named ``name`` (plain functions run in a thread).

        ``max_retries``, ``base_retry_interval`` and ``max_backoff_delay`` (seconds) override
        the instance options for this name's failures, as upstream's per-worker retry
        options do; an execution keeps the policy of the registration that ran it.

        ``timeout`` (seconds, more than 0, at most 30 days) bounds each run; a job's own
        ``enqueue(..., timeout=)`` wins over it, and without either the instance option
        ``job_timeout`` applies (none by default). An async handler is cancelled at the
        deadline; a sync one cannot be, and keeps its job owned until it returns (poll
        ``job.should_stop()``). Either way the attempt is ``timed_out`` and the retry policy
        applies (docs/engine.md, "Time limits").
        """
        self._processor.register(
            name,
            handler,
            concurrency,
            replace,
            max_retries=max_retries,
            base_retry_interval=base_retry_interval,
            max_backoff_delay=max_backoff_delay,
            timeout=timeout,
        )

    def worker(
        self,
        name: str,
        handler: Handler | None = None,
        concurrency: int | None = None,
        replace: bool = False,
        **retry: Any,
    ) -> Any:
        """``register`` under upstream's other name: ``worker(name, handler, ...)`` registers
        at once (as Node Monque's ``worker()``), and without a handler it is a decorator
        (``@monque.worker(name, concurrency=2)``). Returns the handler either way."""
        if handler is not None:
            self.register(name, handler, concurrency, replace, **retry)
            return handler

        def decorate(handler: Handler) -> Handler:
            self.register(name, handler, concurrency, replace, **retry)
            return handler

        return decorate

    @property
    def registered_names(self) -> list[str]:
        return sorted(self._processor.workers)

    @property
    def registered_concurrency(self) -> dict[str, int]:
        """Each registered name's concurrency, as registered (the instance default where none was given)."""
        return {name: worker.concurrency for name, worker in sorted(self._processor.workers.items())}

    # -- intake ---------------------------------------------------------------------------------
    async def enqueue(
        self,
        name: str,
        data: Any = None,
        run_at: datetime | timedelta | None = None,
        unique_key: str | None = None,
        *,
        timeout: float | None = None,
    ) -> Job:
        """``timeout``: this job's own time limit in seconds, stored on it (ADR 0019) and
        winning over its registration's (see ``register``). In test mode the job is run
        before this returns, and returned as it ended (``monque_engine.testing``)."""
        self._require_initialized()
        job = await self._intake.enqueue(name, data, run_at, unique_key, timeout)
        if self.in_test_mode:
            return await self._eager.after_enqueue(job)
        return job

    async def now(self, name: str, data: Any = None) -> Job:
        return await self.enqueue(name, data)

    async def run_job(self, job_id: str) -> Job:
        """Test mode only: run the pending job ``job_id`` now, whatever its due time (a
        delayed or scheduled job), retries included; returns it as it ended."""
        self._require_initialized()
        if not self.in_test_mode:
            raise ConnectionError(
                "run_job() runs a job inline and is for test mode only: Monque(url, test_mode=True), "
                "or inside monque_engine.testing.test_mode()"
            )
        job = await self._query.get_job(job_id)
        if job is None:
            raise JobNotFoundError(str(job_id), f"run_job(): {job_id!r} names no stored job")
        if job.status is not JobStatus.PENDING:
            raise JobStateError(
                f"Job {job.id} is {job.status.value}; run_job() runs pending jobs", job.id, job.status.value, "run"
            )
        if job.name not in self._processor.workers:
            raise WorkerRegistrationError(f"run_job(): no handler is registered for {job.name!r}", job.name)
        return await self._eager.run(job.id, job.name)

    async def schedule(
        self,
        cron: str,
        name: str,
        data: Any = None,
        unique_key: str | None = None,
        tz: str | None = None,
        *,
        timezone: str | None = None,
        timeout: float | None = None,
    ) -> Job:
        """A recurring job; ``tz`` (or ``timezone``, upstream's name for it) is an IANA zone;
        ``timeout`` bounds each of its runs (as ``enqueue``'s)."""
        self._require_initialized()
        if timezone is not None:
            if tz is not None and tz != timezone:
                raise InvalidCronError(cron, f"tz={tz!r} and timezone={timezone!r} disagree; give one of them")
            tz = timezone
        return await self._intake.schedule(cron, name, data, unique_key, tz, timeout)

    async def enqueue_many(self, items: Iterable[Mapping[str, Any]]) -> list[Job]:
        """In test mode each due job is then run in turn, and returned as it ended."""
        self._require_initialized()
        jobs = await self._intake.enqueue_many(items)
        if self.in_test_mode:
            return [await self._eager.after_enqueue(job) for job in jobs]
        return jobs

    async def import_jobs(self, jobs: Iterable[Job]) -> int:
        """Store complete jobs as they are, in any status: their ids, instants, owners,
        failures and attempt history (not in upstream). What a demo's seed uses, and what a
        restore of an export would; new work goes through ``enqueue``. Ids, names and unique
        keys are checked first (nothing is stored when one is bad); watchers then see each
        job as an insert and counts include it. An id already stored fails the import: on
        SQLite nothing is stored, on MongoDB ``PartialInsertError`` says how many were
        (``JobStore.import_jobs``). Returns how many jobs were stored."""
        self._require_initialized()
        return await self._intake.import_jobs(jobs)

    async def wait(self, job_id: str, timeout: float | None = None) -> Job:
        """The job once it is final (completed, failed or cancelled), at once if it already
        is; ``job.result`` is what its handler returned. Learnt from the change feed, so any
        process may run the job (waiting.py). ``JobNotFoundError`` for an id of no job (or one
        deleted meanwhile); ``WaitTimeoutError``, a ``TimeoutError``, after ``timeout`` seconds."""
        self._require_initialized()
        return await wait_for_final(self.store, self.store, job_id, timeout, self._open_for_waits)

    def _open_for_waits(self) -> bool:
        """Whether a ``wait()`` should go on: not once ``close()`` has begun closing the store."""
        return self._initialized and not self._closing_store

    # -- queries --------------------------------------------------------------------------------
    async def get_job(self, job_id: str) -> Job | None:
        self._require_initialized()
        return await self._query.get_job(job_id)

    async def get_jobs_by_id(self, job_ids: Iterable[Any]) -> dict[str, Job]:
        """The jobs with these ids, by id, in one read (not in upstream: a console or a
        dashboard following ``watch(full_document=False)`` reads the jobs it shows this way,
        once per refresh rather than once per change). Ids that name no job, or cannot be a
        job id, are absent from the result, as ``get_job`` returns None for them."""
        self._require_initialized()
        return await self._query.get_jobs_by_id(job_ids)

    async def get_jobs(self, name: str | None = None, status: Any = None, limit: int = 100, skip: int = 0) -> list[Job]:
        self._require_initialized()
        return await self._query.get_jobs(name, status, limit, skip)

    async def get_jobs_with_cursor(
        self,
        cursor: str | None = None,
        limit: int = 50,
        direction: CursorDirection = "forward",
        filter: JobListFilter | None = None,
        sort: JobSort | None = None,
        include_data: bool = True,
    ) -> CursorPage:
        self._require_initialized()
        return await self._query.get_jobs_with_cursor(cursor, limit, direction, filter, sort, include_data)

    async def error_groups(
        self, name: str | None = None, since: datetime | None = None, limit: int = 200
    ) -> list[ErrorGroup]:
        """Failed and retrying jobs grouped by job name, exception type and normalised message.

        Each ``ErrorGroup`` has counts, first/last seen, per-minute counts for the last hour
        and a ``key``; ``JobSelector(error_group=key)`` (or ``JobListFilter(error_group=key)``)
        targets exactly that group's failed and retrying jobs in bulk calls and listings.
        """
        self._require_initialized()
        return await self._query.error_groups(name, since, limit)

    def cursor_at(self, job: Job, sort: JobSort | None = None) -> str:
        """A cursor anchored on a job you already hold, to page forward or backward from it in ``sort`` order.

        Consoles keep a window of rows and extend it from its edges; they need not (and must not)
        build cursors themselves.
        """
        sort = check_sort(sort)
        if not isinstance(job, Job):
            raise InvalidJobQueryError(f"cursor_at takes a Job (from get_job or a listing), got {type(job).__name__}")
        value = None if sort.by == "id" else getattr(job, f"{sort.by}_ms")
        return encode_cursor(CursorAnchor(job.id, value), "forward", sort)

    async def count_jobs(self, filter: JobListFilter | None = None) -> int:
        self._require_initialized()
        return await self._query.count_jobs(filter)

    def count_jobs_in_steps(
        self, filter: JobListFilter | None = None, *, step: int | None = None
    ) -> AsyncIterator[CountProgress]:
        """``count_jobs`` by status, read in bounded steps, for a caller that shows progress.

        A text filter (``JobListFilter.text``) has no index, so its count reads every job:
        seconds at 10M jobs. Iterate this instead, and each ``CountProgress`` says what was
        found so far and how many jobs were read, of about how many; the last is ``done``
        and exact. Stop iterating (``aclose()`` it, or cancel the task) and the store stops
        reading at once. Each step reads about ``step`` jobs (default ``DEFAULT_STEP_JOBS``)
        in its own short read, so other reads run between steps. Not one snapshot: each
        job is counted as its step found it. Other filters are answered in one step.
        """
        self._require_initialized()
        return self._query.count_jobs_in_steps(filter, step)

    def get_jobs_in_steps(
        self,
        cursor: str | None = None,
        limit: int = 50,
        direction: CursorDirection = "forward",
        filter: JobListFilter | None = None,
        sort: JobSort | None = None,
        include_data: bool = True,
        *,
        step: int | None = None,
    ) -> AsyncIterator[PageProgress]:
        """``get_jobs_with_cursor`` read in bounded steps (as ``count_jobs_in_steps``): each
        ``PageProgress`` holds the jobs found so far; the last is ``done`` and carries the
        ``CursorPage``. For a text filter that few jobs match, the page is otherwise one
        read of the whole store."""
        self._require_initialized()
        return self._query.get_jobs_in_steps(cursor, limit, direction, filter, sort, include_data, step)

    async def get_queue_stats(self, name: str | None = None) -> QueueStats:
        self._require_initialized()
        return await self._query.get_queue_stats(name)

    async def get_queue_view_summaries(self, name: str | None = None) -> list[QueueViewSummary]:
        """One summary per stored job name and registered worker, sorted by name; ``name``
        narrows it to that one name (an empty list when it has neither jobs nor a worker)."""
        self._require_initialized()
        return await self._query.get_queue_view_summaries(name)

    async def job_names(self) -> list[str]:
        self._require_initialized()
        return sorted(set(await self.store.names()) | set(self._processor.workers))

    # -- management -----------------------------------------------------------------------------
    async def cancel_job(self, job_id: str, running: bool = False, *, claimed_at: datetime | None = None) -> Job | None:
        """Cancel a pending job (upstream's cancel); None when there is no such job.

        ``running=True`` reaches a running job too (issue 37): the stop is requested on the
        job, its owner (in any process) cancels the handler (an async one; a sync one sees
        ``job.should_stop()``) and ends the job ``cancelled``. Returns the job with
        ``stop_requested_at`` set, still processing: wait for its ``cancelled`` status (or
        a ``job:cancelled`` event in the owner's process). ``claimed_at``: the ``locked_at``
        of the attempt you saw; the request then reaches that attempt only, never a later run.
        Raises ``StopRefusedError`` when the owner cannot hear a request (not in the instance
        registry: a Node or older worker; or dead: release its jobs instead) or when the
        attempt already ended (nothing is changed), and ``JobStateError`` for a job that is
        neither pending nor running."""
        self._require_initialized()
        claimed_at_ms = None if claimed_at is None else datetime_to_ms(claimed_at)
        return await self._manager.cancel_job(job_id, running, claimed_at_ms)

    async def retry_job(self, job_id: str) -> Job | None:
        self._require_initialized()
        return await self._manager.retry_job(job_id)

    async def reschedule_job(self, job_id: str, run_at: datetime | timedelta) -> Job | None:
        self._require_initialized()
        return await self._manager.reschedule_job(job_id, run_at)

    async def delete_job(self, job_id: str) -> bool:
        self._require_initialized()
        return await self._manager.delete_job(job_id)

    async def cancel_jobs(
        self,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkOperationResult:
        """Cancel every pending job matching ``selector`` (a ``JobSelector`` or any
        ``JobListFilter``), by filter (SQLite: 1,000 jobs a transaction; MongoDB: one
        update); other statuses are left alone.
        ``updated_before`` filters on the stored ``updatedAt`` (before that instant).
        ``as_of``: the ``BulkCount`` that ``count_bulk`` returned for the same selector; then
        only jobs that count saw and that have not changed since are cancelled (never more
        than the count)."""
        self._require_initialized()
        return await self._manager.cancel_jobs(selector, updated_before, as_of)

    async def stop_jobs(
        self,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkOperationResult:
        """Request the stop of every running (processing) job matching ``selector``, as
        ``cancel_job(id, running=True)`` does for one (``updated_before``, ``as_of``: as
        ``cancel_jobs``). ``count`` is how many requests were written; ``errors`` names the
        jobs whose owner cannot hear one (``reason`` ``unknown_owner`` or ``dead_owner``)."""
        self._require_initialized()
        return await self._manager.stop_jobs(selector, updated_before, as_of)

    async def retry_jobs(
        self,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkOperationResult:
        """Retry every failed or cancelled job matching ``selector`` by filter
        (``updated_before``, ``as_of``: as ``cancel_jobs``)."""
        self._require_initialized()
        return await self._manager.retry_jobs(selector, updated_before, as_of)

    async def delete_jobs(
        self,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkOperationResult:
        """Delete every job matching ``selector`` by filter (empty: every job;
        ``updated_before``, ``as_of``: as ``cancel_jobs``)."""
        self._require_initialized()
        return await self._manager.delete_jobs(selector, updated_before, as_of)

    async def count_bulk(
        self,
        action: str,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkCount:
        """How many jobs ``cancel_jobs`` / ``retry_jobs`` / ``delete_jobs`` (``action`` =
        ``"cancel"``, ``"retry"``, ``"delete"``) would reach with the same arguments, guard
        included: the number to confirm with. A retry may still skip jobs whose unique key
        another live job holds (reported in its result's ``errors``).

        The answer is an ``int`` that also remembers where the store stood (``BulkCount``):
        pass it as ``as_of=`` to the action and it never reaches more jobs than counted, even
        when other processes commit in between (``updated_before`` alone cannot promise that:
        a write stamped before the count may commit after it). Given ``as_of``, this counts
        what that action would reach now (a recount) and keeps the earlier position."""
        self._require_initialized()
        if action not in ("cancel", "retry", "delete", "stop"):
            raise InvalidJobQueryError(f"action must be 'cancel', 'retry', 'delete' or 'stop', got {action!r}")
        return await self._manager.count_bulk(action, selector, updated_before, as_of)  # type: ignore[arg-type]

    def count_bulk_in_steps(
        self,
        action: str,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
        step: int | None = None,
    ) -> AsyncIterator[CountProgress]:
        """``count_bulk`` read in bounded steps (as ``count_jobs_in_steps``); the last
        ``CountProgress`` carries the ``BulkCount`` in ``bulk``. Every step counts only jobs
        unchanged since the count began, so the action given that count as ``as_of`` still
        never reaches more jobs than it."""
        self._require_initialized()
        if action not in ("cancel", "retry", "delete", "stop"):
            raise InvalidJobQueryError(f"action must be 'cancel', 'retry', 'delete' or 'stop', got {action!r}")
        return self._manager.count_bulk_in_steps(action, selector, updated_before, as_of, step)  # type: ignore[arg-type]

    async def recover_stale_jobs(self) -> int:
        """Run stale recovery now (it also runs at start-up and periodically)."""
        self._require_initialized()
        return await self._lifecycle.recover_stale()

    async def purge_expired_jobs(self) -> int:
        """Apply ``job_retention`` now (it also runs periodically while started)."""
        self._require_initialized()
        return await self._lifecycle.purge_expired()

    async def repair_counts(self) -> list[tuple[str, str, int, int]] | None:
        """Recount the per-name, per-status job counts the SQLite store keeps (what counts,
        stats and the console's tabs read), and its per-error-group counts (what
        ``error_groups`` reads), from the jobs themselves. They are exact unless a row was
        changed outside the store (the sqlite3 shell). Returns what differed, as ``(name,
        status, kept, counted)`` (an error group's status reads ``failed in error group KEY``
        or ``retrying in …``); None on a store that keeps no counts (MongoDB)."""
        self._require_initialized()
        return await self.store.repair_counts()

    # -- fleet and queue control (issue 13) --------------------------------------------------------
    async def instances(self) -> list[InstanceInfo]:
        """Every scheduler instance the store knows of, registered or inferred.

        Registered instances (Python ``Monque`` started with this version or later) write a
        record on every heartbeat tick and remove it on a clean stop; a record whose heartbeat
        is older than twice its interval is reported ``alive=False``. Owners of processing
        jobs that never registered (Node Monque workers) are listed as ``inferred``, judged
        by their jobs' ``lastHeartbeat``. Each comes with how many jobs it holds.
        """
        self._require_initialized()
        return await self._fleet.instances()

    async def check_owner(self, instance_id: str) -> OwnerCheck:
        """Watch ``instance_id``'s records until they move (alive) or stay unmoved for twice
        its own heartbeat interval plus 1 s (dead; never longer than ``lock_timeout``).

        Liveness is judged by its records moving (its registry record and its processing
        jobs' ``lastHeartbeat`` / ``lockedAt``), on this process's monotonic clock: never by
        comparing their instants with this machine's wall clock, which may be stepped, or
        differ from the owner's by any amount. A live owner is usually told apart at its next
        beat; a dead one takes the whole watch. The watch is remembered, so a release (or
        count) that follows continues it instead of waiting again.
        """
        self._require_initialized()
        return await self._fleet.check_owner(instance_id)

    async def count_dead_owner_jobs(self, instance_id: str) -> int:
        """How many processing jobs ``release_dead_owner_jobs(instance_id)`` would release
        (``check_owner(instance_id).releasable``; it may watch the owner first): ask for
        confirmation with this count, then release."""
        self._require_initialized()
        return await self._fleet.count_dead_owner_jobs(instance_id)

    async def watch_owner(self, instance_id: str) -> float:
        """Start (or continue) the watch ``check_owner`` keeps on ``instance_id``, with one
        look and no waiting; returns the seconds the watch still needs before a release can
        act (0.0: a release acts at once, unless the owner beats first).

        Call it when an owner is first seen as dead and again on each refresh (the console's
        Workers view does), so ``release_dead_owner_jobs`` usually answers at once instead of
        watching for twice the owner's interval when asked. A look that sees the records move
        starts the watch again."""
        self._require_initialized()
        return await self._fleet.watch_owner(instance_id)

    async def release_dead_owner_jobs(self, instance_id: str) -> int:
        """Return a dead owner's processing jobs to pending without waiting for
        ``lock_timeout``; returns how many.

        The owner is dead when ``check_owner`` finds its records unmoved for twice its own
        heartbeat interval (continuing the watch of an earlier count or check, else watching
        now). The store then writes only if its records are still exactly those last read
        (a compare-and-set in the write), so a beat that lands in between keeps every job. A
        live owner's jobs are never released, whatever either machine's wall clock says.
        Emits ``stale:recovered`` with the count.
        """
        self._require_initialized()
        return await self._fleet.release_dead_owner_jobs(instance_id)

    async def pause(self, name: str) -> bool:
        """Stop every Python worker on this store from claiming ``name`` (jobs already
        running finish). Stored, so it lasts across restarts until ``resume(name)``. This
        process follows at once; others within their ``poll_interval``. Node Monque
        workers do not honour it. Returns False when it was already paused."""
        self._require_initialized()
        return await self._fleet.pause(name)

    async def resume(self, name: str) -> bool:
        """Undo ``pause(name)``; returns False when it was not paused."""
        self._require_initialized()
        return await self._fleet.resume(name)

    async def paused(self) -> dict[str, datetime]:
        """Paused job names and when each was paused (UTC)."""
        self._require_initialized()
        return await self._fleet.paused()

    async def queue_health(self, window_minutes: int = 60) -> list[QueueHealth]:
        """Per job name: due now vs scheduled later, the age of the oldest due job, jobs
        processing, paused, and completed / failed per minute over the last
        ``window_minutes`` (kept 48 h in the store, written by Python workers on their
        heartbeat tick, so the history survives restarts of the reader)."""
        self._require_initialized()
        return await self._fleet.queue_health(window_minutes)

    def metrics(self, **options: Any) -> MonqueCollector:
        """This Monque's Prometheus collector (built on the first call, the same one after).

        Register it with a ``prometheus_client`` registry your application already serves,
        or call its ``serve(port)`` for an endpoint of its own. Needs ``prometheus-client``
        (``pip install 'monque-tui[metrics]'``; ``MetricsUnavailableError`` without it).
        ``options``: ``cache_seconds`` (how long one read of the store's gauges serves
        scrapes, 1 s), ``read_timeout``, and which job names get series of their own (the rest
        are summed under ``name="other"``): ``names=[...]``, or the first ``max_names`` seen
        (100). Call it before ``start()`` to count every job; see
        ``monque_engine.metrics`` for what is exported.
        """
        if self._metrics is None:
            from ..metrics import MonqueCollector

            self._metrics = MonqueCollector(self, **options)
        return self._metrics

    # -- events and the change feed ---------------------------------------------------------------
    def off(self, event: EventName, listener: Listener | None = None) -> None:
        self.events.off(event, listener)

    def listener_count(self, event: EventName) -> int:
        """Listeners of ``event`` (upstream's Monque is a Node EventEmitter: ``listenerCount``)."""
        return self.events.listener_count(event)

    def remove_all_listeners(self, event: EventName | None = None) -> None:
        """Remove the listeners of ``event``, or all of them (Node's ``removeAllListeners``)."""
        self.events.remove_all_listeners(event)

    def watch(self, resume_after: Any = None, *, full_document: bool = True) -> AsyncIterator[ChangeEvent]:
        """Committed changes to the jobs collection, from any process, in commit order.

        Each event carries its ``token``; pass the last one back as ``resume_after`` to
        continue exactly after it (no gaps, no repeats).
        """
        self._require_initialized()
        return self.store.watch(resume_after, full_document=full_document)

    def resilient_watch(
        self,
        on_change: Callable[[ChangeEvent], None],
        on_event: Callable[[WatchEvent], None] | None = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
        **tuning: Any,
    ) -> ResilientWatch:
        """A change feed that reconnects and falls back by itself, as the processor's own does.

        ``await watch.start()`` opens it; ``on_change`` gets each change and ``on_event`` each
        transition (``WatchEvent``: connected, error, closed, fallback, history_lost), both on the
        event loop; ``watch.state`` is the one ``FeedState`` vocabulary; ``await watch.stop()``
        before ``close()``. ``tuning``: reconnect_delays, fallback_retry_interval, proven_after.
        """
        self._require_initialized()
        return ResilientWatch(self.store, on_change, on_event, full_document=full_document, statuses=statuses, **tuning)

    def resilient_watch_rows(
        self,
        on_rows: Callable[[ChangeRows], None],
        on_event: Callable[[WatchEvent], None] | None = None,
        **tuning: Any,
    ) -> ResilientWatch:
        """``resilient_watch`` of every change, without documents, handed over a pull at a time
        as plain rows (``ChangeRows``): for a consumer that follows every change of a busy
        store (the console beside a drain reads ~15,000 a second). On a store without a row
        feed (MongoDB) each change comes as a batch of one."""
        self._require_initialized()
        return ResilientWatch(self.store, _no_change, on_event, full_document=False, on_rows=on_rows, **tuning)

    async def open_watch(self, resume_after: Any = None, *, full_document: bool = True) -> AsyncIterator[ChangeEvent]:
        """Like ``watch`` but opens the feed now, so a bad token or a broken store raises here."""
        self._require_initialized()
        return await self.store.open_watch(resume_after, full_document=full_document)


def _no_change(change: ChangeEvent) -> None:
    """A row watch's ``on_change``: its changes go to ``on_rows``."""

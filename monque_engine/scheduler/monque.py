"""`Monque`: the public facade. Thin on purpose: each call delegates to one service."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any

from ..cursor import CursorAnchor, encode_cursor
from ..errors import ConnectionError, MonqueError, ShutdownTimeoutError
from ..events import EventEmitter, JobErrorEvent, Listener
from ..job import (
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
from ..store import DEFAULT_URL, JobStore, StoreOpenOptions, open_store
from ..store.urls import mask_secrets
from ..timeutil import now_ms
from .context import SchedulerContext
from .intake import JobIntake
from .lifecycle import Lifecycle
from .resilient_watch import FeedState, ResilientWatch, WatchEvent
from .manager import JobManager
from .processor import Handler, JobProcessor
from .query import JobQuery


class Monque:
    """A job queue on one jobs collection.

    ``Monque("sqlite:///jobs.db")`` (the default is ``sqlite:///monque.db``) or
    ``Monque("mongodb://host/db")``, or pass a store object. Options are upstream's in
    snake_case with intervals in seconds; see ``MonqueOptions``.
    """

    def __init__(self, store: str | JobStore = DEFAULT_URL, **options: Any) -> None:
        self.options = MonqueOptions.from_kwargs(options)
        self._url = store if isinstance(store, str) else None
        self.store: JobStore = open_store(store) if isinstance(store, str) else store
        self.events = EventEmitter()
        self._ctx = SchedulerContext(self.store, self.options, self.events)
        self._processor = JobProcessor(self._ctx)
        self._intake = JobIntake(self._ctx)
        self._manager = JobManager(self._ctx)
        self._query = JobQuery(self._ctx, self._processor.summaries)
        self._lifecycle = Lifecycle(self._ctx, self._processor)
        self._initialized = False
        self._init_lock = asyncio.Lock()
        self._start_lock = asyncio.Lock()
        self._stopping: asyncio.Task[None] | None = None

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
    def feed_state(self) -> FeedState:
        """The processor's change feed: ``connecting``, ``live``, ``reconnecting``, ``fallback`` (polling) or
        ``stopped`` (the vocabulary of ``ResilientWatch``)."""
        return self._lifecycle.feed_state

    # -- life cycle -----------------------------------------------------------------------------
    async def initialize(self) -> None:
        """Open the store, create indexes, recover stale jobs, check the instance id. Idempotent."""
        async with self._init_lock:
            if self._initialized:
                return
            retention = self.options.job_retention
            try:
                await self.store.open(StoreOpenOptions(
                    collection_name=self.options.collection_name,
                    create_indexes=not self.options.skip_index_creation,
                    retention_index=retention is not None,
                ))
                if self.options.recover_stale_jobs:
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
                message = mask_secrets(str(error), self._url or "")
                raise ConnectionError(f"Failed to initialize Monque: {message}") from error
            self._initialized = True

    async def _close_store_quietly(self) -> None:
        try:
            await self.store.close()
        except Exception:  # noqa: BLE001 - already reporting the real failure
            pass

    async def start(self) -> None:
        """Start processing registered workers. Already running: nothing happens."""
        if not self._initialized:
            raise ConnectionError("Monque is not initialized; call await monque.initialize() before start()")
        async with self._start_lock:  # two concurrent start() calls must not both start duties
            if self._processor.running:
                return
            if self._stopping is not None:
                await self._stopping
            await self._lifecycle.start()
            self._processor.start()

    async def stop(self) -> None:
        """Stop claiming, let in-flight jobs finish up to ``shutdown_timeout``. Never raises."""
        if self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_task(self._stop())
        try:
            await asyncio.shield(self._stopping)
        finally:
            if self._stopping is not None and self._stopping.done():
                self._stopping = None

    async def _stop(self) -> None:
        processor = self._processor
        if not processor.running and not processor.running_tasks():
            return
        processor.stop_claiming()
        await self._lifecycle.stop_background()
        await processor.join_fillers()
        running = processor.running_jobs()
        if running:
            done, pending = await asyncio.wait(running.values(), timeout=self.options.shutdown_timeout)
            if pending:
                # Only handlers still running are given up on. A job whose handler returned is
                # writing its outcome: cancelling would not stop that write, only lose its event
                # and misreport the job as left for recovery; let it finish.
                stuck = {job_id: task for job_id, task in running.items()
                         if task in pending and job_id not in processor.finishing}
                if stuck:
                    incomplete = [job for job in processor.active_jobs if job.id in stuck]
                    self.events.emit("job:error", JobErrorEvent(ShutdownTimeoutError(
                        f"Shutdown timed out after {self.options.shutdown_timeout:g} s with {len(incomplete)} "
                        "job(s) still running; they stay processing and stale recovery will return them to pending",
                        incomplete,
                    )))
                    for task in stuck.values():
                        task.cancel()
                # Outcome writes normally land in milliseconds; a store that cannot be written
                # to must not hold stop() forever (those jobs stay processing for recovery).
                _, unfinished = await asyncio.wait(pending, timeout=max(5.0, self.options.shutdown_timeout))
                for task in unfinished:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
        await self._lifecycle.stop_heartbeat()
        self._query.stats_cache.clear()

    async def close(self) -> None:
        """Stop, then release the store (threads, connections)."""
        await self.stop()
        await self.store.close()
        self._initialized = False

    def is_healthy(self) -> bool:
        return self._initialized and self._processor.running

    async def __aenter__(self) -> Monque:
        await self.initialize()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    def _require_initialized(self) -> None:
        if not self._initialized:
            raise ConnectionError("Monque is not initialized; call await monque.initialize() first")

    # -- workers --------------------------------------------------------------------------------
    def register(self, name: str, handler: Handler, concurrency: int | None = None, replace: bool = False) -> None:
        """Register ``async def handler(job)`` for jobs named ``name`` (plain functions run in a thread)."""
        self._processor.register(name, handler, concurrency, replace)

    def worker(self, name: str, concurrency: int | None = None) -> Any:
        """Decorator form of ``register``."""

        def decorate(handler: Handler) -> Handler:
            self.register(name, handler, concurrency)
            return handler

        return decorate

    @property
    def registered_names(self) -> list[str]:
        return sorted(self._processor.workers)

    # -- intake ---------------------------------------------------------------------------------
    async def enqueue(self, name: str, data: Any = None, run_at: datetime | timedelta | None = None,
                      unique_key: str | None = None) -> Job:
        self._require_initialized()
        return await self._intake.enqueue(name, data, run_at, unique_key)

    async def now(self, name: str, data: Any = None) -> Job:
        self._require_initialized()
        return await self._intake.enqueue(name, data)

    async def schedule(self, cron: str, name: str, data: Any = None, unique_key: str | None = None,
                       tz: str | None = None) -> Job:
        self._require_initialized()
        return await self._intake.schedule(cron, name, data, unique_key, tz)

    async def enqueue_many(self, items: Iterable[Mapping[str, Any]]) -> list[Job]:
        self._require_initialized()
        return await self._intake.enqueue_many(items)

    # -- queries --------------------------------------------------------------------------------
    async def get_job(self, job_id: str) -> Job | None:
        self._require_initialized()
        return await self._query.get_job(job_id)

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

    def cursor_at(self, job: Job, sort: JobSort | None = None) -> str:
        """A cursor anchored on a job you already hold, to page forward or backward from it in ``sort`` order.

        Consoles keep a window of rows and extend it from its edges; they need not (and must not)
        build cursors themselves.
        """
        sort = sort or JobSort()
        value = None if sort.by == "id" else getattr(job, f"{sort.by}_ms")
        return encode_cursor(CursorAnchor(job.id, value), "forward", sort)

    async def count_jobs(self, filter: JobListFilter | None = None) -> int:
        self._require_initialized()
        return await self._query.count_jobs(filter)

    async def get_queue_stats(self, name: str | None = None) -> QueueStats:
        self._require_initialized()
        return await self._query.get_queue_stats(name)

    async def get_queue_view_summaries(self) -> list[QueueViewSummary]:
        self._require_initialized()
        return await self._query.get_queue_view_summaries()

    async def job_names(self) -> list[str]:
        self._require_initialized()
        return sorted(set(await self.store.names()) | set(self._processor.workers))

    # -- management -----------------------------------------------------------------------------
    async def cancel_job(self, job_id: str) -> Job | None:
        self._require_initialized()
        return await self._manager.cancel_job(job_id)

    async def retry_job(self, job_id: str) -> Job | None:
        self._require_initialized()
        return await self._manager.retry_job(job_id)

    async def reschedule_job(self, job_id: str, run_at: datetime | timedelta) -> Job | None:
        self._require_initialized()
        return await self._manager.reschedule_job(job_id, run_at)

    async def delete_job(self, job_id: str) -> bool:
        self._require_initialized()
        return await self._manager.delete_job(job_id)

    async def cancel_jobs(self, selector: JobSelector | None = None) -> BulkOperationResult:
        self._require_initialized()
        return await self._manager.cancel_jobs(selector)

    async def retry_jobs(self, selector: JobSelector | None = None) -> BulkOperationResult:
        self._require_initialized()
        return await self._manager.retry_jobs(selector)

    async def delete_jobs(self, selector: JobSelector | None = None) -> BulkOperationResult:
        self._require_initialized()
        return await self._manager.delete_jobs(selector)

    async def recover_stale_jobs(self) -> int:
        """Run stale recovery now (it also runs at start-up and periodically)."""
        self._require_initialized()
        return await self._lifecycle.recover_stale()

    async def purge_expired_jobs(self) -> int:
        """Apply ``job_retention`` now (it also runs periodically while started)."""
        self._require_initialized()
        return await self._lifecycle.purge_expired()

    # -- events and the change feed ---------------------------------------------------------------
    def on(self, event: str, listener: Listener) -> Listener:
        return self.events.on(event, listener)

    def once(self, event: str, listener: Listener) -> Listener:
        return self.events.once(event, listener)

    def off(self, event: str, listener: Listener | None = None) -> None:
        self.events.off(event, listener)

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
        return ResilientWatch(self.store, on_change, on_event, full_document=full_document, statuses=statuses,
                              **tuning)

    async def open_watch(self, resume_after: Any = None, *, full_document: bool = True) -> AsyncIterator[ChangeEvent]:
        """Like ``watch`` but opens the feed now, so a bad token or a broken store raises here."""
        self._require_initialized()
        return await self.store.open_watch(resume_after, full_document=full_document)

"""``SyncMonque``: the queue from synchronous code (Django and Flask views, scripts, thread pools).

Each client holds one ``Monque``, opened on first use on the process's background loop
(``loop.py``) and never started: a producer and an operator, not a worker. A call hands its
coroutine to that loop and waits for the answer, so there is no event loop and no connection
per call, and any number of threads may call at once (the loop serialises what must be
serialised; a SQLite store group-commits what they write together).

One call is cheaper than that hand-over: a run of plain enqueues on SQLite (a loop in a
script or a management command, or a thread pool's) appends to the store's inbox from the
calling thread itself (``JobStore.append_from_thread``; threads appending at once share a
commit), as a task's run of awaited enqueues does on the loop (ADR 0014). A lone enqueue,
as a request handler makes, goes through the loop and writes the job row. Through the loop
alone a call cost 3-5x the async single enqueue (``python -m bench.sync_client``).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, TypeVar

from ..errorgroups import ErrorGroup
from ..errors import ConnectionError
from ..job import (
    BulkCount,
    BulkOperationResult,
    CursorDirection,
    CursorPage,
    InstanceInfo,
    Job,
    JobListFilter,
    JobSelector,
    JobSort,
    QueueHealth,
    QueueStats,
)
from ..scheduler import Monque
from ..scheduler.context import SchedulerContext
from ..scheduler.intake import JobIntake
from ..scheduler.lifecycle import POLL_TASK
from ..store import DEFAULT_URL, InvalidStoreUrlError
from . import loop as background

T = TypeVar("T")

#: Enqueues made through one client in a row, by any of its threads, each starting within
#: ``STREAK_GAP`` seconds of the latest return, before the next plain ones go to the inbox
#: from the calling thread (as the loop's streak of 32 awaited enqueues in one turn: a few
#: calls stay job rows at once). Per client, not per thread, so that a pool of threads
#: enqueueing together pays the run's start once, not once per thread.
STREAK = 32
#: The next enqueue continues the run when it starts this soon after the latest returned: a
#: loop of calls does in microseconds; a request handler's next request, unless the site is
#: enqueueing hundreds a second, does not.
STREAK_GAP = 0.001


@dataclass(slots=True)
class _Opened:
    """A client's ``Monque`` opened on this process's loop."""

    monque: Monque
    loop: background.BackgroundLoop
    pid: int
    intake: JobIntake


@dataclass(slots=True)
class _Run:
    """This client's run of enqueues, from every thread: how many calls in a row, when the
    latest returned, and the calls in progress (one item each: a deque's append and pop are
    atomic, so the count is exact). Count and time unlocked: a lost update only moves where
    a run starts or ends."""

    count: int = 0
    returned: float = 0.0
    going: deque[None] = field(default_factory=deque)


class SyncMonque:
    """The queue from synchronous code: ``SyncMonque("sqlite:///jobs.db")`` (or a
    ``mongodb://`` URL), with the async ``Monque``'s options, method names and arguments.

    Opened on first use (or by ``with SyncMonque(url) as monque:``), closed by ``close()`` or
    at interpreter exit. Safe to share between threads, and across ``fork``: a forked child
    opens its own connection on its first call and never uses its parent's. Errors are the
    async API's, raised in the calling thread. It runs no worker; workers run
    ``monque-tui --worker`` or an async ``Monque``. In test mode (``test_mode=True``, or
    ``monque_engine.testing.test_mode()``) it runs the handlers given to ``register`` inline,
    at ``enqueue``, on its background loop (sync ones in a thread, as a worker would).
    """

    def __init__(self, store: str = DEFAULT_URL, **options: Any) -> None:
        if not isinstance(store, str):
            raise InvalidStoreUrlError(
                "SyncMonque() takes a store URL (sqlite:///jobs.db, mongodb://host/db), got "
                f"{type(store).__name__}: a store object belongs to the event loop that opened it"
            )
        # A producer recovers no stale jobs at open (its workers do, at start and periodically).
        options.setdefault("recover_stale_jobs", False)
        self._url = store
        self._options = options
        #: Built now, so a bad URL or option raises here as ``Monque()`` does; opened on first use.
        self._unopened: Monque | None = Monque(store, **options)
        self._display_url = self._unopened.display_url
        self._pid = os.getpid()
        self._opened: _Opened | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._run_of = _Run()
        #: The last open's error (None once one succeeds), and how many opens failed: a thread
        #: that waited on the lock for a failing open raises its error instead of retrying.
        self._failed_open: Exception | None = None
        self._failed_opens = 0
        #: ``register`` calls, replayed on the ``Monque`` a forked child builds for itself.
        self._registrations: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        background.track(self)

    # -- life cycle -------------------------------------------------------------------------------
    @property
    def display_url(self) -> str:
        """The store's URL with its password masked."""
        return self._display_url

    def open(self) -> SyncMonque:
        """Open the store now (calls do it on first use): a bad store raises here."""
        self._open()
        return self

    def _open(self) -> _Opened:
        opened = self._opened
        if opened is not None and opened.pid == os.getpid() and not self._closed:
            return opened
        failures = self._failed_opens
        with self._lock:
            if self._closed:
                raise ConnectionError("SyncMonque is closed (close() was called); create a new SyncMonque")
            opened = self._opened
            if opened is not None and opened.pid == os.getpid():
                return opened
            failed = self._failed_open
            if failed is not None and self._failed_opens != failures:
                # An open that failed while this thread waited for it: its answer is this
                # call's too. Trying again in turn made the last of N threads wait N times the
                # store's timeout (8 gunicorn threads on an unreachable MongoDB: 40 s).
                raise failed
            loop = background.background_loop()
            monque, self._unopened = self._unopened, None
            if monque is None or self._pid != os.getpid():
                monque = Monque(self._url, **self._options)
                for args, kwargs in self._registrations:
                    monque.register(*args, **kwargs)
            try:
                loop.run(monque.initialize())
            except Exception as error:
                self._failed_open = error
                self._failed_opens += 1
                raise
            self._failed_open = None
            background.opened(monque)
            intake = JobIntake(SchedulerContext(monque.options, monque.events), monque.store)
            self._opened = _Opened(monque, loop, os.getpid(), intake)
            return self._opened

    def close(self) -> None:
        """Close the store (its connections). Later calls raise ``ConnectionError``; closing
        twice does nothing."""
        with self._lock:
            self._closed = True
            opened, self._opened = self._opened, None
        if opened is not None and opened.pid == os.getpid() and not opened.loop.loop.is_closed():
            background.closed(opened.monque)
            opened.loop.run(opened.monque.close())

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> SyncMonque:
        return self.open()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _forget_after_fork(self) -> None:
        """In a forked child: drop (never close, never use) what the parent opened (loop.py
        keeps it alive, so that not even the garbage collector closes it here)."""
        self._lock = threading.Lock()  # a parent thread may have held it at the fork
        self._run_of = _Run()
        self._opened = None
        self._failed_open = None

    def _run(self, call: Callable[[Monque], Coroutine[Any, Any, T]]) -> T:
        opened = self._open()
        return opened.loop.run(call(opened.monque))

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open" if self._opened is not None else "not opened yet"
        return f"<SyncMonque {self._display_url} ({state})>"

    # -- test mode --------------------------------------------------------------------------------
    def register(
        self, name: str, handler: Any, concurrency: int | None = None, replace: bool = False, **options: Any
    ) -> None:
        """Register a handler, as ``Monque.register``: run inline in test mode only (a
        ``SyncMonque`` runs no worker). Lets an application register its handlers on the
        client its views use, so its tests see the jobs run."""
        args, kwargs = (name, handler, concurrency, replace), options
        with self._lock:
            opened, unopened = self._opened, self._unopened
            if unopened is not None:  # a bad registration raises here, and is not kept
                unopened.register(*args, **kwargs)
            elif opened is None or opened.pid != os.getpid():
                Monque(self._url, **self._options).register(*args, **kwargs)  # checked; kept for the next open
            self._registrations.append((args, kwargs))
        if unopened is None and opened is not None and opened.pid == os.getpid():
            monque = opened.monque

            async def register() -> None:
                monque.register(*args, **kwargs)

            try:
                opened.loop.run(register())
            except BaseException:
                with self._lock:
                    self._registrations.remove((args, kwargs))
                raise

    def run_job(self, job_id: str) -> Job:
        """Test mode: run the pending job now, whatever its due time (``Monque.run_job``)."""
        return self._run(lambda monque: monque.run_job(job_id))

    # -- intake -----------------------------------------------------------------------------------
    def enqueue(
        self,
        name: str,
        data: Any = None,
        run_at: datetime | timedelta | None = None,
        unique_key: str | None = None,
        *,
        timeout: float | None = None,
    ) -> Job:
        opened = self._open()
        run = self._run_of
        started = time.monotonic()
        # A call in progress in another thread continues the run whatever the time since the
        # latest return: threads of a pool wait for one another (a shared commit, the GIL, the
        # loop's absorb), and a gap of a millisecond among them is no pause of the run (it sent
        # the next 32 calls through the loop a few times a run: issue 38's 8-thread figure).
        going = run.going
        run.count = run.count + 1 if going or started - run.returned <= STREAK_GAP else 1
        going.append(None)
        try:
            # A job with its own time limit goes through the loop, as one with a unique key:
            # the inbox the thread path appends to has no column for it (the store writes
            # such a job straight to the job table).
            if run.count > STREAK and unique_key is None and timeout is None and not opened.monque.in_test_mode:
                job = opened.intake.build(name, data, run_at)
                if opened.monque.store.append_from_thread(job):
                    return job.to_job()
            return opened.loop.run(opened.monque.enqueue(name, data, run_at, unique_key, timeout=timeout))
        finally:
            going.pop()
            run.returned = time.monotonic()

    def now(self, name: str, data: Any = None) -> Job:
        return self.enqueue(name, data)

    def schedule(
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
        """A recurring job; ``tz`` (or ``timezone``) is an IANA zone; ``timeout`` its runs' time limit."""
        return self._run(
            lambda monque: monque.schedule(cron, name, data, unique_key, tz, timezone=timezone, timeout=timeout)
        )

    def enqueue_many(self, items: Iterable[Mapping[str, Any]]) -> list[Job]:
        return self._run(lambda monque: monque.enqueue_many(items))

    def wait(self, job_id: str, timeout: float | None = None) -> Job:
        """Block until the job is final and return it (``Monque.wait``): its ``result`` is
        what the handler returned. Other threads' calls go on meanwhile (the wait is a
        coroutine on the shared loop, woken by the change feed)."""
        _refuse_a_wait_that_blocks_its_worker()
        return self._run(lambda monque: monque.wait(job_id, timeout))

    # -- reads ------------------------------------------------------------------------------------
    def get_job(self, job_id: str) -> Job | None:
        return self._run(lambda monque: monque.get_job(job_id))

    def get_jobs_by_id(self, job_ids: Iterable[Any]) -> dict[str, Job]:
        return self._run(lambda monque: monque.get_jobs_by_id(job_ids))

    def get_jobs(self, name: str | None = None, status: Any = None, limit: int = 100, skip: int = 0) -> list[Job]:
        return self._run(lambda monque: monque.get_jobs(name, status, limit, skip))

    def get_jobs_with_cursor(
        self,
        cursor: str | None = None,
        limit: int = 50,
        direction: CursorDirection = "forward",
        filter: JobListFilter | None = None,
        sort: JobSort | None = None,
        include_data: bool = True,
    ) -> CursorPage:
        return self._run(
            lambda monque: monque.get_jobs_with_cursor(cursor, limit, direction, filter, sort, include_data)
        )

    def count_jobs(self, filter: JobListFilter | None = None) -> int:
        return self._run(lambda monque: monque.count_jobs(filter))

    def get_queue_stats(self, name: str | None = None) -> QueueStats:
        return self._run(lambda monque: monque.get_queue_stats(name))

    def job_names(self) -> list[str]:
        return self._run(lambda monque: monque.job_names())

    def error_groups(
        self, name: str | None = None, since: datetime | None = None, limit: int = 200
    ) -> list[ErrorGroup]:
        return self._run(lambda monque: monque.error_groups(name, since, limit))

    # -- management -------------------------------------------------------------------------------
    def cancel_job(self, job_id: str, running: bool = False, *, claimed_at: datetime | None = None) -> Job | None:
        return self._run(lambda monque: monque.cancel_job(job_id, running, claimed_at=claimed_at))

    def retry_job(self, job_id: str) -> Job | None:
        return self._run(lambda monque: monque.retry_job(job_id))

    def reschedule_job(self, job_id: str, run_at: datetime | timedelta) -> Job | None:
        return self._run(lambda monque: monque.reschedule_job(job_id, run_at))

    def delete_job(self, job_id: str) -> bool:
        return self._run(lambda monque: monque.delete_job(job_id))

    def cancel_jobs(
        self,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkOperationResult:
        return self._run(lambda monque: monque.cancel_jobs(selector, updated_before=updated_before, as_of=as_of))

    def stop_jobs(
        self,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkOperationResult:
        return self._run(lambda monque: monque.stop_jobs(selector, updated_before=updated_before, as_of=as_of))

    def retry_jobs(
        self,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkOperationResult:
        return self._run(lambda monque: monque.retry_jobs(selector, updated_before=updated_before, as_of=as_of))

    def delete_jobs(
        self,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkOperationResult:
        return self._run(lambda monque: monque.delete_jobs(selector, updated_before=updated_before, as_of=as_of))

    def count_bulk(
        self,
        action: str,
        selector: JobSelector | JobListFilter | None = None,
        *,
        updated_before: datetime | None = None,
        as_of: BulkCount | None = None,
    ) -> BulkCount:
        """How many jobs ``cancel_jobs`` / ``retry_jobs`` / ``delete_jobs`` would reach; pass
        the answer back as ``as_of=`` to never act on more (as ``Monque.count_bulk``)."""
        return self._run(lambda monque: monque.count_bulk(action, selector, updated_before=updated_before, as_of=as_of))

    # -- queue control ----------------------------------------------------------------------------
    def pause(self, name: str) -> bool:
        return self._run(lambda monque: monque.pause(name))

    def resume(self, name: str) -> bool:
        return self._run(lambda monque: monque.resume(name))

    def paused(self) -> dict[str, datetime]:
        return self._run(lambda monque: monque.paused())

    def instances(self) -> list[InstanceInfo]:
        return self._run(lambda monque: monque.instances())

    def queue_health(self, window_minutes: int = 60) -> list[QueueHealth]:
        return self._run(lambda monque: monque.queue_health(window_minutes))


def _refuse_a_wait_that_blocks_its_worker() -> None:
    """A sync wait called from a coroutine blocks that coroutine's loop until the job ends;
    when a worker runs on that loop (a FastAPI app's lifespan started one), the job it waits
    for can never run: it hung for ever, or timed out saying no worker ran the name."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        return  # a thread with no running loop: a view, a script, a thread pool
    if any(task.get_name() == POLL_TASK for task in asyncio.all_tasks(running)):
        raise RuntimeError(
            "SyncMonque.wait() was called from a coroutine on the event loop a Monque worker runs on: it "
            "would block that loop, so the worker could never run the job; use await monque.wait(job_id) there"
        )

"""Intake: new jobs into the job table, one at a time or in multi-row statements, and
``enqueue_many``'s build-and-insert in lockstep with the write thread (ADR 0001).

Single enqueues of a streak go to the inbox instead (``inbox.py``); jobs with a unique key
are inserted one statement each (a clash returns the live job that holds the key).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence

from ...errors import ConnectionError
from ...gcpause import gc_paused
from ...job import Job, NewJob
from .bulk import BulkInserter
from .journal import Changes, Journal
from .queries import row_to_job
from .runner import Operation
from .schema import Tables
from .statements import Prepared

#: Jobs per multi-row INSERT (2-6 bound values each; far below SQLite's limit of 32766
#: variables): a chunk of enqueue_many (intake's BUILD_CHUNK) is one statement, so the write
#: thread needs the GIL back from SQLite once per chunk and statement (bulk.py).
MULTI_ROW = 250


class Intake:
    """One collection's inserts, built once per open."""

    def __init__(self, tables: Tables, journal: Journal, prepared: Prepared) -> None:
        self._journal = journal
        self._prepared = prepared
        self._bulk = BulkInserter(tables, journal)

    def one(self, conn: sqlite3.Connection, job: NewJob) -> Job:
        """Insert one job (the caller holds the transaction), or find the live job holding its
        unique key."""
        prepared = self._prepared
        cursor = conn.execute(
            prepared.insert,
            (
                job.id,
                job.name,
                job.data_json,
                job.next_run_at_ms,
                job.repeat_interval,
                job.unique_key,
                job.created_at_ms,
                job.created_at_ms,
                job.timeout_ms,
            ),
        )
        if cursor.rowcount == 1:
            changes = Changes()
            changes.add("insert", job.id, job.name, "pending", job.next_run_at_ms, None)
            self._journal.write(conn, changes)
            return job.to_job()
        if job.unique_key is None:
            raise ConnectionError(f"Job id {job.id} already exists")
        row = conn.execute(prepared.unique_holder, (job.name, job.unique_key)).fetchone()
        return row_to_job(row)

    def plain(self, conn: sqlite3.Connection, jobs: Sequence[NewJob], ready: Callable[[], None] | None = None) -> None:
        """Insert jobs without unique keys, MULTI_ROW at a time (the caller holds the
        transaction). ``ready`` is called before the first jobs' statement (bulk.py)."""
        bulk = self._bulk
        if len(jobs) <= MULTI_ROW:  # a chunk of enqueue_many: no copy
            bulk.insert(conn, jobs, ready)
        else:
            for start in range(0, len(jobs), MULTI_ROW):
                bulk.insert(conn, jobs[start : start + MULTI_ROW], ready)
                ready = None
        limited = [(job.timeout_ms, job.id) for job in jobs if job.timeout_ms is not None]
        if limited:  # rare: the multi-row statements leave the column out (ADR 0019)
            conn.executemany(self._prepared.set_timeout, limited)

    async def chunks(
        self,
        submit: Callable[[Operation[list[list[Job] | None]]], asyncio.Future[list[list[Job] | None]]],
        chunks: Iterable[list[NewJob]],
    ) -> list[Job]:
        """Build and insert at the same time: the write thread inserts chunk k while the loop
        validates chunk k+1, in one transaction (ADR 0001, enqueue_many).

        The operation takes chunks from a thread-safe queue; the loop puts every chunk and
        then an end mark (or, when building fails, an abort mark) *without awaiting in
        between*, so the operation never waits for a loop that is itself waiting. It keeps
        what it took, so when the runner re-runs it alone (a batch-mate failed) it replays
        the same chunks instead of waiting for more.

        Hand-over in lockstep: once the operation runs, the loop, after putting chunk k,
        blocks (without the GIL) until the write thread is about to insert it. The write
        thread needs the GIL to bind a statement and again each time SQLite returns; a loop
        that keeps building holds it, and the thread waits out the interpreter's 5 ms switch
        interval, so the two threads ran one after the other. While the loop is blocked the
        thread has the GIL at once: it writes the chunk's feed rows (short), then signals and
        starts the jobs' statement, whose step (the long part, B-tree work without the GIL)
        runs while the loop builds chunk k+1. By the time it returns the loop is usually
        blocked again, so its one GIL hand-back per chunk costs no wait. The wait is a hint
        only: it gives up after ACK_TIMEOUT, and stops once the operation has ended.
        """
        handoff: queue.SimpleQueue[list[NewJob] | BaseException | None] = queue.SimpleQueue()
        acks: queue.SimpleQueue[int] = queue.SimpleQueue()
        taken: list[list[NewJob] | BaseException | None] = []
        running = threading.Event()

        def insert_chunk(conn: sqlite3.Connection, chunk: list[NewJob], ready: Callable[[], None]) -> list[Job] | None:
            if all(job.unique_key is None for job in chunk):
                self.plain(conn, chunk, ready)
                return None  # stored exactly as built
            ready()
            return [self.one(conn, job) for job in chunk]

        def op(conn: sqlite3.Connection) -> list[list[Job] | None]:
            running.set()
            results: list[list[Job] | None] = []
            index = 0
            try:
                while True:
                    if index < len(taken):
                        item = taken[index]
                    else:
                        item = handoff.get()
                        taken.append(item)
                    if item is None:
                        return results
                    if isinstance(item, BaseException):
                        raise _BuildAborted() from None
                    results.append(insert_chunk(conn, item, functools.partial(acks.put, index)))
                    index += 1
            finally:
                acks.put(-1)  # ended: the loop stops waiting

        built: list[list[NewJob]] = []
        outcome: list[list[Job]] = []
        pending = submit(op)
        lockstep = True
        try:
            with gc_paused():  # the synchronous part only: no await inside
                for chunk in chunks:
                    if chunk:
                        if lockstep and not built and not running.is_set():
                            # The thread needs the GIL to start the operation at all. If it
                            # is busy with another batch, build on; lockstep starts when it
                            # does (it gets the GIL at the interpreter's switch interval).
                            running.wait(START_WAIT)
                        handoff.put(chunk)
                        if lockstep and running.is_set():
                            lockstep = _await_ack(acks, len(built))
                        built.append(chunk)
                        outcome.append([job.to_job() for job in chunk])  # while SQLite inserts it
        except BaseException as error:
            handoff.put(error)  # the operation raises, its transaction rolls back: nothing stored
            with contextlib.suppress(BaseException):
                await pending
            raise
        handoff.put(None)
        results = await pending
        stored: list[Job] = []
        for as_built, result in zip(outcome, results, strict=True):
            stored.extend(as_built if result is None else result)
        return stored


#: Longest the loop blocks, per chunk, for the write thread to take it. It normally does
#: within the time it needs to finish the previous one (under a millisecond); on a busy
#: machine it may not be scheduled for a while, and the loop builds on meanwhile (in
#: alternating runs at load 4, 2 ms did better than a long wait).
ACK_TIMEOUT = 0.002
#: Longest the loop blocks, once per call, for the write thread to start the operation.
START_WAIT = 0.002


def _await_ack(acks: queue.SimpleQueue[int], index: int) -> bool:
    """Block until the write thread is about to insert chunk ``index``, or ACK_TIMEOUT has
    passed (it is late: build on, and wait again after the next chunk). False when the
    operation has ended: stop waiting for it."""
    while True:
        try:
            got = acks.get(timeout=ACK_TIMEOUT)
        except queue.Empty:
            return True
        if got < 0:
            return False
        if got >= index:
            return True


class _BuildAborted(Exception):
    """Building a chunk of ``insert_chunks`` failed on the loop: roll the insert back."""

"""The inbox: where a lone producer's single enqueues land, one B-tree per commit.

Why (ADR 0009, issue 14): a commit costs about one WAL frame per B-tree it changes. A job
row touches six (the table, the pending index, three sort indexes, the change feed), so
one awaited ``enqueue`` at a time cost ~1.7× what huey's whole call does, and no index
could go without breaking the console's sorts at 1M jobs or the cross-process feed. An
append to the inbox (a rowid table without indexes) changes one B-tree; the rows are then
**absorbed** in bulk: moved into the job table, its indexes and the feed in one statement
each, a few microseconds per job, as ``enqueue_many`` inserts.

What keeps every promise:

* An append commits before ``enqueue`` returns (same durability as a job row).
* Every write transaction of this store, in any process, absorbs first (``absorb`` right
  after ``BEGIN IMMEDIATE``): a claim, a cancel or a delete never misses a queued job.
* Every read of pending jobs looks at the inbox in the same snapshot it reads from and,
  when it holds rows, reads a temporary view that adds them to the job table (``InboxView``,
  ``SqliteStore._read``): a job whose ``enqueue`` returned is seen by any read that starts
  afterwards, in any process, and no read waits for the write lock or writes.
* Feed watchers that see the inbox non-empty ask for an absorb, so inserts reach ``watch()``
  streams and other processes' workers within a poll interval.
* Only a streak uses it: a task that has already enqueued ``STREAK`` plain jobs in one loop
  turn (a loop of awaited ``enqueue`` calls, none of which had to wait). The turn's end
  absorbs what it appended, so no other code of the process, and no raw SQL after a yield,
  finds a job missing from the job table; nor does a single ``enqueue`` in a request
  handler ever go there. A streak also absorbs every ``ABSORB_EVERY`` appends, and
  ``close()`` absorbs. A process that crashed mid-streak leaves its rows to the next writer
  (or writable opener).

Only jobs that cannot clash go there: no ``unique_key``, no cron schedule (both must be
checked against the job table under the write lock), and only on the inline path, when no
other task of this process writes in the same loop turn (a crowd shares group commits).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ...errors import ConnectionError
from ...job import NewJob
from .journal import Changes, Journal
from .runner import MISS, WriteRunner
from .schema import INTEGER_COLUMNS, JOB_COLUMNS, Tables
from .unreadable import log

T = TypeVar("T")

#: Appends by this process before it absorbs them itself (amortises the absorb's commit,
#: which writes the six B-trees once for all of them).
ABSORB_EVERY = 256
#: Plain enqueues a task makes in one loop turn before the next ones go to the inbox: a
#: few enqueues (a request handler's, a test's) stay in the job table at once.
STREAK = 32
#: A synchronous producer's run of appends (``append_from_thread``) counts as paused, and is
#: absorbed, once no append came for this long: a thread has no loop turn to end.
THREAD_IDLE = 0.002


class Inbox:
    """The statements for one collection's inbox, built once per open."""

    def __init__(self, tables: Tables, journal: Journal) -> None:
        inbox, jobs = tables.inbox, tables.jobs
        self._journal = journal
        self.append_sql = f"INSERT INTO {inbox} (id, name, data, next_run_at, created_at) VALUES (?, ?, ?, ?, ?)"
        self.any_sql = f"SELECT 1 FROM {inbox} LIMIT 1"
        # ``WHERE true``: SQLite's parser needs it between ``SELECT … FROM`` and ``ON CONFLICT``.
        self._move_jobs = (
            f"INSERT INTO {jobs} (id, name, data, status, next_run_at, fail_count, created_at, updated_at, change_seq) "
            f"SELECT id, name, data, 'pending', next_run_at, 0, created_at, created_at, {tables.change_stamp} "
            f"FROM {inbox} "
            "WHERE true ORDER BY seq ON CONFLICT DO NOTHING RETURNING name"
        )
        self._move_feed = journal.moved_feed_sql(inbox)
        self._empty = f"DELETE FROM {inbox}"

    @staticmethod
    def row(job: NewJob) -> tuple[Any, ...]:
        return (job.id, job.name, job.data_json, job.next_run_at_ms, job.created_at_ms)

    def absorb(self, conn: sqlite3.Connection) -> int:
        """Move every queued job into the job table and the feed (the caller holds the write
        transaction); how many moved. Cheap when the inbox is empty: one root-page read."""
        if conn.execute(self.any_sql).fetchone() is None:
            return 0
        counts = Changes()
        moved = 0
        for (name,) in conn.execute(self._move_jobs).fetchall():
            counts.move(name, None, "pending")
            moved += 1
        self._journal.inserted(conn, self._move_feed, (), counts)
        conn.execute(self._empty)
        return moved


#: What an inbox row is as a job row (the values ``Inbox.absorb`` gives the job table).
_AS_JOB = {
    "id": "id", "name": "name", "data": "data", "status": "'pending'", "next_run_at": "next_run_at",
    "fail_count": "0", "created_at": "created_at", "updated_at": "created_at",
}  # fmt: skip


class InboxView:
    """Reads see queued jobs without absorbing them (reads never take the write lock; a
    read-only store, ``mode=ro``, could not anyway).

    When the read's snapshot finds rows in the inbox (a producer mid-streak in another
    process, or one that crashed before absorbing), a TEMP view named like the job table
    shadows it for that read alone: the job table plus the inbox rows as pending jobs. Only
    this connection's temp schema is written; the file never is (reader connections are
    ``query_only``, lifted for the view's own statement alone).
    """

    def __init__(self, tables: Tables) -> None:
        jobs, inbox = tables.jobs, tables.inbox
        self.any_sql = f"SELECT 1 FROM main.{inbox} LIMIT 1"
        # Each value CAST to its job column's type: SQLite flattens a UNION ALL view into the
        # query (so each arm uses its own indexes: a sorted page stays an index walk) only when
        # both arms' columns have the same affinity, and a bare NULL or 'pending' has none.
        # Without it, a page over 1M jobs was a full scan and a sort (2.4 s, against 1 ms).
        queued = ", ".join(
            f"CAST({_AS_JOB.get(column, 'NULL')} AS {'INTEGER' if column in INTEGER_COLUMNS else 'TEXT'}) AS {column}"
            for column in JOB_COLUMNS
        )
        self._create = (
            f"CREATE TEMP VIEW {jobs} AS SELECT {tables.columns} FROM main.{jobs} "
            f"UNION ALL SELECT {queued} FROM main.{inbox}"
        )
        self._create_queued_only = f"CREATE TEMP VIEW {jobs} AS SELECT {queued} FROM main.{inbox}"
        self._drop = f"DROP VIEW IF EXISTS temp.{jobs}"

    def read(
        self,
        op: Callable[[sqlite3.Connection], T],
        conn: sqlite3.Connection,
        combine: Callable[[T, T], T] | None = None,
    ) -> T:
        """``op`` in one snapshot, seeing the inbox's rows as pending jobs if it holds any.

        ``combine`` is for counts and other aggregates: SQLite never flattens a UNION ALL
        view into an aggregate, so over the view a count of 1M jobs scans them all (~1 s,
        against ~0.1 s from an index). With it, ``op`` runs on the job table and again on a
        view of the inbox rows alone, and ``combine(stored, queued)`` adds the two answers.
        """
        began = not conn.in_transaction
        if began:
            conn.execute("BEGIN")
        try:
            if conn.execute(self.any_sql).fetchone() is None:
                return op(conn)
            if combine is not None:
                stored = op(conn)
                self._shadow(conn, self._create_queued_only)
                try:
                    return combine(stored, op(conn))
                finally:
                    self._shadow(conn, self._drop)
            self._shadow(conn, self._create)
            try:
                return op(conn)
            except sqlite3.OperationalError as error:
                if "no such index" not in str(error):
                    raise
                # ``INDEXED BY`` names an index of the job table, which the view lacks: the
                # error-group queries, which only look at jobs that have failed, never at
                # queued ones. Run it on the job table itself.
                self._shadow(conn, self._drop)
                return op(conn)
            finally:
                self._shadow(conn, self._drop)
        finally:
            if began and conn.in_transaction:
                conn.execute("COMMIT")  # a read transaction (and the temp schema): writes nothing to the file

    def queued(self, op: Callable[[sqlite3.Connection], T], conn: sqlite3.Connection) -> T | None:
        """``op`` over a view of the inbox's rows alone (named like the job table), in the
        caller's transaction; None when the inbox is empty. For reads that walk the job
        table themselves and add the queued jobs once (``scan.py``)."""
        if conn.execute(self.any_sql).fetchone() is None:
            return None
        self._shadow(conn, self._create_queued_only)
        try:
            return op(conn)
        finally:
            self._shadow(conn, self._drop)

    @staticmethod
    def _shadow(conn: sqlite3.Connection, statement: str) -> None:
        conn.execute("PRAGMA query_only=0")  # the temp schema only: the statement writes no file
        try:
            conn.execute(statement)
        finally:
            conn.execute("PRAGMA query_only=1")


class InboxProducer:
    """This process's side of the inbox: when a single enqueue goes there (a streak), and
    when what it appended is absorbed (the turn's end, every ABSORB_EVERY appends, a feed
    watcher's request, close). One per writable open store; the store holds it.
    """

    def __init__(self, inbox: Inbox, writer: WriteRunner, lost: Callable[[], object]) -> None:
        self.inbox = inbox
        self._writer: WriteRunner | None = writer
        #: Why the store can no longer be trusted (its ``health_error``), else None.
        self._lost = lost
        #: This process's inbox appends since its last absorb.
        self.appended = 0
        #: The task enqueueing in this loop turn and how many plain jobs it has enqueued in
        #: it (a streak), or None between turns (see ``append``).
        self._streak_task: asyncio.Task[Any] | None = None
        self._streak = 0
        self._absorb_queued = False
        #: Set while the store closes: no more appends, since its absorb is the last one.
        self.closing = False
        #: A synchronous producer's last append (monotonic), and whether the loop watches for its pause.
        self._thread_appended_at = 0.0
        self._thread_watched = False

    def detach(self) -> None:
        """The store closed: nothing is appended or absorbed by this object any more."""
        self._writer = None

    def append(self, job: NewJob) -> bool:
        """Append a plain job (no unique key, no schedule) to the inbox if this call continues
        a streak (the same task has enqueued STREAK plain jobs in this loop turn already: a
        loop of awaited enqueues that never had to wait) and the append can run inline now.
        False: the caller inserts the job row as usual."""
        writer = self._writer
        if writer is None or self.closing:
            return False
        task = asyncio.current_task()
        if self._streak_task is None:
            writer.loop.call_soon(self._turn_ended)
        elif task is not self._streak_task:
            self._streak = 0
        self._streak_task = task
        self._streak += 1
        return self._streak > STREAK and writer.try_append(self.inbox.append_sql, self.inbox.row(job))

    def append_from_thread(self, job: NewJob) -> bool:
        """Append a plain job from a synchronous producer's thread, which has decided that its
        caller is in a run of enqueues (``monque_engine.sync``). What it appends is absorbed as
        a task's streak is, on the loop: once the run pauses (no append for ``THREAD_IDLE``), every
        ``ABSORB_EVERY`` appends, and at ``close()``. False: the caller inserts the job row."""
        writer = self._writer
        if writer is None or self.closing or not writer.append_from_thread(self.inbox.append_sql, self.inbox.row(job)):
            return False
        self.appended += 1
        self._thread_appended_at = time.monotonic()
        if not self._thread_watched:
            self._thread_watched = True
            try:
                writer.loop.call_soon_threadsafe(self._thread_paused)
            except RuntimeError:  # the loop is closed: close() absorbed, or the next opener will
                pass
        return True

    def _thread_paused(self) -> None:
        """(On the loop.) Absorb a synchronous producer's appends once it paused, or once
        ``ABSORB_EVERY`` are waiting; else look again when it would have paused."""
        writer = self._writer
        if writer is None:
            self._thread_watched = False
            return
        idle = time.monotonic() - self._thread_appended_at
        if self.appended >= ABSORB_EVERY or idle >= THREAD_IDLE:
            self.absorb_soon()
        if idle >= THREAD_IDLE:
            self._thread_watched = False
            return
        writer.loop.call_later(THREAD_IDLE - idle, self._thread_paused)

    def absorb(self, conn: sqlite3.Connection) -> None:
        """First in every write transaction (the write runner calls it): queued jobs in."""
        if self.inbox.absorb(conn):
            self.appended = 0

    def _turn_ended(self) -> None:
        """The enqueueing task let the loop run: absorb its appends now, before anything else
        of this process (or, through the database, of others) looks for them."""
        self._streak_task = None
        self._streak = 0
        writer = self._writer
        if not self.appended or writer is None:
            return
        try:
            if writer.run_inline_now(self.inbox.absorb) is not MISS:
                return
        except ConnectionError as error:
            log.debug("absorbing the inbox failed: %s", error)  # the next write reports its own
            return
        self.absorb_soon()

    async def appended_one(self) -> None:
        self.appended += 1
        writer = self._writer
        if self.appended >= ABSORB_EVERY and writer is not None:
            try:
                await writer.run(self.inbox.absorb, inline=True)
            except ConnectionError as error:
                # The job is committed (in the inbox): the caller must not be told otherwise,
                # or a retry queues it twice. The next write absorbs, and reports its own error.
                log.warning("%s; the jobs stay in the inbox until the next write absorbs them", error)

    def absorb_soon(self) -> None:
        """Absorb on the write thread without waiting for it: the loop turn ended while the
        database was busy, or a feed watcher saw rows in the inbox (maybe another process's)."""
        writer = self._writer
        if writer is None or self._absorb_queued:
            return
        try:
            queued = writer.submit(self.inbox.absorb)
        except ConnectionError:
            return  # closing: close() absorbs what this process appended
        self._absorb_queued = True
        queued.add_done_callback(self._absorb_done)

    def _absorb_done(self, done: asyncio.Future[int]) -> None:
        self._absorb_queued = False
        if not done.cancelled() and done.exception() is not None:
            # The next write or read absorbs again and reports its own error; a lost file
            # reaches on_fatal through the identity check.
            log.debug("absorbing the inbox failed: %s", done.exception())

    async def absorb_before_close(self) -> None:
        """Leave no row of this process in the inbox, so tools that read the job table directly
        see every job once the process has closed the store. Quiet when the file is gone."""
        writer = self._writer
        if writer is None or not self.appended or self._lost() is not None:
            return
        try:
            await writer.run(self.inbox.absorb)
        except ConnectionError as error:
            # The rows stay committed in the inbox; the next process to open the file moves them.
            log.warning("%s; its last enqueued jobs stay in the inbox until the next process opens it", error)

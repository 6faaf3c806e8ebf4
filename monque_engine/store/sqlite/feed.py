"""The cross-process change feed of the SQLite store.

Writers append to the change table inside their own transactions (the store's own statements), so a
row's ``seq`` is commit order. A watcher thread polls ``PRAGMA data_version`` on its own
connection, a counter SQLite bumps whenever *another* connection commits: a few
microseconds per look, so it can look every 2 ms and a commit in any process reaches every
subscriber within milliseconds. In-process commits notify directly, without waiting.

Each subscriber pulls its own rows (``seq > last``) after a notification. Pulling rather
than pushing makes resumption trivial and exact: a watch that restarts from a token reads
the rows after it, in order, no gaps and no repeats.

Who is woken is decided on the watcher thread, per subscriber: a stream that filters by
status (the engine's own, which listens for pending jobs) is woken only when the feed has a
row it wants past the point already checked for it. During a drain every claim and
completion commits feed rows no pending-watcher wants; waking it for each (a pull, two
thread hops, its coroutine resumed) cost the loop that runs the jobs a fifth of its time
(ADR 0001). The pull stays authoritative: a wake is only a hint, a missed-looking one is
impossible (see ``_due``).
"""

from __future__ import annotations

import asyncio
import functools
import operator
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...change_rows import ChangeRows
from ...daemon_call import call_in_thread
from ...errors import ChangeFeedHistoryLostError, ConnectionError, InvalidCursorError, InvalidJobDocumentError
from ...job import STATUS_BY_VALUE, ChangeEvent, JobStatus, change_event
from . import jobrow
from .identity import is_damage_error
from .queries import row_to_job
from .runner import ReadRunner
from .schema import JOB_COLUMNS, Tables
from .unreadable import log

PULL_LIMIT = 1000
#: A row stream's pull (``open_rows``): its consumer takes each pull in one call, so a larger
#: page costs it nothing per row, and a console that fell behind catches up in fewer pulls.
ROWS_PULL_LIMIT = 4000
#: A row stream's row is (seq, op, job id, name, status, next run) after the bounds row (-1, head, mark).
_first = operator.itemgetter(0)
#: A pulled row is (head, pruned mark, seq, op, job id, name, status, next run, [job columns]).
_seq = operator.itemgetter(2)
#: After this process commits, the watcher thread looks at once, then at most once per
#: this many seconds while commits keep coming (later ones are seen together). Under load
#: every claim and every completion flush commits (ADR 0001).
COALESCE = 0.002


class PullSql(NamedTuple):
    """A stream's pull (``ChangeFeed._pull_sql``): its rows with both bounds on each, and the
    statement that also answers when there are none."""

    rows: str
    empty: str


@dataclass(eq=False)
class _Subscriber:
    wake: asyncio.Event
    #: SQL condition on the feed row (alias ``c``) this stream wants, or None for every row.
    wants: str | None
    #: Feed rows up to this seq need no wake for this stream (read, or not wanted); -1
    #: until the stream knows where it starts (then every change wakes it).
    checked: int = -1


class ChangeFeed:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        connect: Callable[[], sqlite3.Connection],
        reader: Callable[[], ReadRunner],
        tables: Tables,
        interval: float,
        on_inbox: Callable[[], None] | None = None,
        damaged: Callable[[BaseException], BaseException | None] | None = None,
    ) -> None:
        self._loop = loop
        #: Told when a look finds the file damaged (identity.py); the watcher then stops.
        self._damaged = damaged
        #: Called (on the loop) when a look finds jobs waiting in the inbox (inbox.py): their
        #: feed rows appear once they are absorbed. None for a read-only store.
        self._on_inbox = on_inbox
        self._inbox_sql = f"SELECT 1 FROM {tables.inbox} LIMIT 1"
        #: Opens the streams' own reader (one thread, one connection) at the first stream:
        #: their pulls never share a thread with the store's reads (see ``_streams_reader``).
        self._open_reader = reader
        self._reader: ReadRunner | None = None
        self._reader_lock = asyncio.Lock()
        self._tables = tables
        self._interval = interval
        self._subscribers: dict[asyncio.Event, _Subscriber] = {}
        self._stop = threading.Event()
        self._poke = threading.Event()  # this process committed: look now
        self._closed = False
        self._watched = threading.Event()  # set while at least one stream is open
        conn = self._conn = connect()  # fail here, in the opener, if the file cannot be read
        self._thread = threading.Thread(target=self._poll, args=(conn,), name="monque-sqlite-feed", daemon=True)
        self._thread.start()

    # -- detection --------------------------------------------------------------------------------
    def _poll(self, conn: sqlite3.Connection) -> None:
        try:
            try:
                (last,) = conn.execute("PRAGMA data_version").fetchone()
            except sqlite3.Error:
                if self._stop.is_set():
                    return  # closed at once after opening (a command refusing its input): interrupted, not a fault
                raise
            while not self._stop.is_set():
                poked = self._poke.wait(self._interval)
                if self._stop.is_set():
                    break
                if not self._watched.is_set():
                    # Nobody is listening: sleep until a stream opens (or we close) instead
                    # of polling every few ms in an idle process.
                    self._watched.wait()
                    continue
                self._poke.clear()
                try:
                    (version,) = conn.execute("PRAGMA data_version").fetchone()
                    if version != last or poked:
                        last = version
                        due = self._due(conn)
                        if due:
                            self._notify_threadsafe(due)
                        if self._on_inbox is not None and conn.execute(self._inbox_sql).fetchone() is not None:
                            self._call_threadsafe(self._on_inbox)
                except sqlite3.Error as error:
                    if is_damage_error(error) and self._damaged is not None and self._damaged(error) is not None:
                        # Reported once; every operation of the store now says so, and the
                        # streams' next pulls too (woken, they read and raise).
                        self._call_threadsafe(self.notify)
                        return
                    continue  # transient (e.g. the file is being replaced); look again next tick
                if poked:
                    self._stop.wait(COALESCE)  # commits meanwhile are seen together, next look
        finally:
            conn.close()

    def _due(self, conn: sqlite3.Connection) -> list[asyncio.Event]:
        """The streams to wake: those with a wanted feed row past their ``checked`` point.

        Never misses one: rows get seqs above every committed one, so a row committed after
        the head read here lies past the ``checked`` set here and is looked at next time; a
        woken stream pulls from its own position up to at least this head.
        """
        t = self._tables
        head, pruned = conn.execute(
            f"SELECT (SELECT coalesce(max(seq), 0) FROM {t.changes}), "
            f"(SELECT value FROM {t.meta} WHERE key = 'feed_pruned_through')"
        ).fetchone()
        due: list[asyncio.Event] = []
        for sub in list(self._subscribers.values()):
            checked = sub.checked
            if checked >= head:
                continue
            # Position unknown, history pruned past it (its pull must say so), or it wants
            # every row: wake. Otherwise only if a row it wants arrived since the last look.
            if checked < 0 or checked < int(pruned) or sub.wants is None or self._wanted_since(conn, sub, head):
                due.append(sub.wake)
            sub.checked = max(sub.checked, head)
        return due

    def _wanted_since(self, conn: sqlite3.Connection, sub: _Subscriber, head: int) -> bool:
        sql = f"SELECT 1 FROM {self._tables.changes} c WHERE c.seq > ? AND c.seq <= ? AND {sub.wants} LIMIT 1"
        return conn.execute(sql, (sub.checked, head)).fetchone() is not None

    def _notify_threadsafe(self, due: list[asyncio.Event]) -> None:
        self._call_threadsafe(self._wake, due)

    def _call_threadsafe(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            self._stop.set()  # the loop is gone

    @staticmethod
    def _wake(due: list[asyncio.Event]) -> None:
        for event in due:
            event.set()

    def notify(self) -> None:
        """Wake every subscriber (called on the loop thread)."""
        for event in self._subscribers:
            event.set()

    def committed(self) -> None:
        """This process committed (loop thread): the watcher thread looks now, and wakes the
        streams that want what was written (at most one look per COALESCE while commits
        keep coming)."""
        if self._subscribers and not self._poke.is_set():
            # Already set: the thread has not looked yet, and it clears the flag before it
            # looks, so that look sees this commit too (no lock, no notify per commit).
            self._poke.set()

    def end_streams(self) -> None:
        """End every open stream (on the loop thread, before ``close``)."""
        self._closed = True
        for event in self._subscribers:
            event.set()

    def _subscribe(self, wake: asyncio.Event, wants: str | None) -> _Subscriber:
        sub = self._subscribers[wake] = _Subscriber(wake, wants)
        self._watched.set()
        return sub

    def _unsubscribe(self, wake: asyncio.Event) -> None:
        self._subscribers.pop(wake, None)
        if not self._subscribers:
            self._watched.clear()

    def close(self) -> None:
        self._stop.set()
        self._poke.set()
        self._watched.set()
        try:
            self._conn.interrupt()  # a look blocked on a lock ends now (a no-op otherwise)
        except sqlite3.Error:
            pass
        self._thread.join(timeout=5)
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    # -- reading ------------------------------------------------------------------------------------
    def _bounds(self, conn: sqlite3.Connection) -> tuple[int, int]:
        t = self._tables
        (last,) = conn.execute(f"SELECT coalesce(max(seq), 0) FROM {t.changes}").fetchone()
        (pruned,) = conn.execute(f"SELECT value FROM {t.meta} WHERE key='feed_pruned_through'").fetchone()
        return int(last), int(pruned)

    def _pull_sql(self, full_document: bool, statuses: tuple[JobStatus, ...] | None) -> PullSql:
        """One statement per pull: the feed's head, the pruning mark and the rows after the
        position, read in one implicit read transaction (one snapshot, so they agree).

        Five statements (BEGIN, two bounds, the rows, COMMIT) cost each open stream five
        trips through the GIL per wake-up; under a drain the engine's own watcher wakes
        every couple of milliseconds and those trips slowed the loop that runs the jobs
        (ADR 0001). The head and mark are one-row scalar subqueries on every row (SQLite
        reads each once per statement). A pull that finds nothing reads again with
        ``PullSql.empty``, whose LEFT JOIN returns one row with both bounds even then (the
        rows and the bounds must come from one snapshot: a head read after an empty rows
        read could pass a change committed in between). Until 2026-12 every pull was that
        LEFT JOIN, a third slower per row for a console reading ~15,000 rows a second
        beside a drain (issue 40).
        """
        t = self._tables
        wanted = _wanted(statuses)
        status_clause = "" if wanted is None else f" AND {wanted}"
        head = f"(SELECT coalesce(max(seq), 0) FROM {t.changes})"
        mark = f"(SELECT value FROM {t.meta} WHERE key = 'feed_pruned_through')"
        # ORDER BY walks the rowid and LIMIT stops the walk (a watcher far behind reads one
        # page, not everything it missed).
        picked = "c.seq, c.op, c.job_id, c.name, c.status, c.next_run_at"
        source = f"{t.changes} c"
        if full_document:
            picked += ", " + ", ".join(f"j.{c}" for c in JOB_COLUMNS)
            source += f" LEFT JOIN {t.jobs} j ON j.id = c.job_id AND c.op != 'delete'"
        where = f"FROM {source} WHERE c.seq > ?{status_clause} ORDER BY c.seq LIMIT {PULL_LIMIT}"
        bounds = f"(SELECT {head} AS high) b CROSS JOIN (SELECT {mark} AS pruned) m"
        return PullSql(
            rows=f"SELECT {head}, {mark}, {picked} {where}",
            empty=f"SELECT b.high, m.pruned, r.* FROM {bounds} LEFT JOIN (SELECT {picked} {where}) r",
        )

    async def open(
        self, resume_after: Any, *, full_document: bool, statuses: tuple[JobStatus, ...] | None
    ) -> AsyncIterator[ChangeEvent]:
        reader, wake, start = await self._start(resume_after, statuses)
        return self._stream(reader, wake, start, self._pull_sql(full_document, statuses), full_document)

    async def open_rows(self, resume_after: Any) -> AsyncIterator[ChangeRows]:
        """Every change after ``resume_after`` (no documents, no filter), a pull at a time
        (``ChangeRows``): for a consumer of every change of a busy store (the console)."""
        reader, wake, start = await self._start(resume_after, None)
        return self._row_stream(reader, wake, start, self._rows_sql())

    async def _start(
        self, resume_after: Any, statuses: tuple[JobStatus, ...] | None
    ) -> tuple[ReadRunner, asyncio.Event, int]:
        """Subscribe a new stream and find where it starts (``resume_after`` checked)."""
        if resume_after is not None and (
            not isinstance(resume_after, int) or isinstance(resume_after, bool) or resume_after < 0
        ):
            raise InvalidCursorError(
                f"Resume token {resume_after!r} is not one this store made; pass ChangeEvent.token from a previous watch"
            )
        reader = await self._streams_reader()
        wake = asyncio.Event()
        sub = self._subscribe(wake, _wanted(statuses))  # before reading the head: no commit slips between
        try:
            head, pruned = await reader.run(self._bounds)
        except BaseException:
            self._unsubscribe(wake)
            raise
        if resume_after is None:
            start = head
        elif resume_after < pruned:
            self._unsubscribe(wake)
            raise ChangeFeedHistoryLostError(
                f"Resume token {resume_after} is older than the oldest change kept ({pruned + 1}); "
                "the watcher was away too long: reload the full state, then watch without a token"
            )
        elif resume_after > head:
            self._unsubscribe(wake)
            raise ChangeFeedHistoryLostError(
                f"Resume token {resume_after} is ahead of this database's feed (last change {head}); "
                "was the database file replaced? Reload, then watch without a token"
            )
        else:
            start = resume_after
        sub.checked = start  # the stream's first pull reads everything after it
        return reader, wake, start

    def _rows_sql(self) -> str:
        """A row stream's pull: a first row with the feed's head and pruning mark, then the
        changes after the position as ``ChangeRows`` rows, in one statement (one snapshot).

        The bounds ride in a row of their own (token -1) rather than in two more columns of
        every row, as ``_pull_sql`` has them: two integer objects per change fewer to make."""
        t = self._tables
        head = f"(SELECT coalesce(max(seq), 0) FROM {t.changes})"
        mark = f"(SELECT value FROM {t.meta} WHERE key = 'feed_pruned_through')"
        rows = (
            f"SELECT c.seq, c.op, c.job_id, c.name, c.status, c.next_run_at FROM {t.changes} c "
            f"WHERE c.seq > ? ORDER BY c.seq LIMIT {ROWS_PULL_LIMIT}"
        )
        return f"SELECT -1, {head}, {mark}, NULL, NULL, NULL UNION ALL SELECT * FROM ({rows})"

    async def _row_stream(
        self, reader: ReadRunner, wake: asyncio.Event, last: int, sql: str
    ) -> AsyncIterator[ChangeRows]:
        try:
            while not self._closed:
                wake.clear()
                pulled = await self._pull_unless_closed(reader, functools.partial(self._pull_rows, sql=sql, after=last))
                if pulled is None:
                    return
                rows, high = pulled
                full = len(rows) == ROWS_PULL_LIMIT
                last = _first(rows[-1]) if full else high  # a full page: read on from its last row (its seq)
                if rows:
                    yield ChangeRows(rows, last)
                if not full:
                    await wake.wait()
        finally:
            self._unsubscribe(wake)

    async def _pull_unless_closed(
        self, reader: ReadRunner, pull: Callable[[sqlite3.Connection], tuple[list[tuple[Any, ...]], int]]
    ) -> tuple[list[tuple[Any, ...]], int] | None:
        """A stream's pull; None when the store closed while it ran. The close ends the streams
        first, then cuts the reader's read short: a stream whose pull was under way raised
        "closed while this read ran" into its consumer, where one waiting between pulls ends
        (``StopAsyncIteration``). Both end now."""
        try:
            return await reader.run(pull)
        except ConnectionError:
            if self._closed:
                return None
            raise

    def _pull_rows(self, conn: sqlite3.Connection, sql: str, after: int) -> tuple[list[tuple[Any, ...]], int]:
        found = conn.execute(sql, (after,)).fetchall()
        # The compound statement does not promise its order: sort by seq (the bounds row's -1
        # first), usually already in order, so one pass in C.
        found.sort(key=_first)
        _, high, pruned = found[0][:3]
        high, pruned = int(high), int(pruned)
        if after < pruned:
            raise ChangeFeedHistoryLostError(
                f"The change feed moved past this watcher: it stopped at {after}, but changes up to "
                f"{pruned} were pruned; reload the full state, then watch without a token"
            )
        del found[0]
        return found, max(after, high)

    async def _streams_reader(self) -> ReadRunner:
        """The streams' reader, opened (off the loop) by the first stream of this store.

        The store's own readers serve the engine's reads: the due-time look-up that arms a
        worker's next timer, listings, counts. A stream catching up on a backlog (a watcher
        that was away, a console following a bulk action) pulls page after page; on the
        store's readers each pull queued beside those reads, so a worker's next timer could
        wait on its feed's catch-up (issue 34 suspected it of a 24 s stall during a purge).
        On a thread of their own, the pulls delay only each other. Opened lazily: a command that never watches opens no extra connection.
        """
        async with self._reader_lock:
            if self._reader is None:
                if self._closed:
                    raise ConnectionError("the change feed is closed")
                reader = await call_in_thread(self._open_reader)
                if self._stop.is_set():  # closed while it opened: nobody else will close it
                    await call_in_thread(reader.close)
                    raise ConnectionError("the change feed is closed")
                self._reader = reader
            return self._reader

    async def _stream(
        self, reader: ReadRunner, wake: asyncio.Event, last: int, sql: PullSql, full_document: bool
    ) -> AsyncIterator[ChangeEvent]:
        try:
            while not self._closed:
                wake.clear()
                after = last
                pulled = await self._pull_unless_closed(reader, functools.partial(self._pull, sql=sql, after=after))
                if pulled is None:
                    return
                rows, high = pulled
                if full_document:
                    for row in rows:
                        yield self._event(row, True)
                else:
                    # The common case (a console, the engine's own wake-ups): inlined, with the
                    # event built straight from its slots. A console following a drain of 5,000
                    # jobs/s reads ~15,000 changes a second, and this loop is paid for each.
                    statuses, make = STATUS_BY_VALUE, change_event
                    for _, _, seq, op, job_id, name, status, next_run_at in rows:
                        if op == "stop":  # running.STOP_OP: a stop request is an update to readers
                            yield make("update", job_id, None, seq, name, statuses.get(status), next_run_at, True)
                        else:
                            yield make(op, job_id, None, seq, name, statuses.get(status), next_run_at, False)
                if len(rows) == PULL_LIMIT:
                    last = _seq(rows[-1])
                    continue
                last = high  # rows filtered out by status still advance the position
                await wake.wait()
        finally:
            self._unsubscribe(wake)

    def _pull(self, conn: sqlite3.Connection, sql: PullSql, after: int) -> tuple[list[tuple[Any, ...]], int]:
        found = conn.execute(sql.rows, (after,)).fetchall() or conn.execute(sql.empty, (after,)).fetchall()
        high, pruned, first_seq = found[0][:3]  # every row carries both bounds, then a change or NULLs
        high, pruned = int(high), int(pruned)
        if after < pruned:
            # An open stream fell behind the kept window: say so, never skip silently.
            raise ChangeFeedHistoryLostError(
                f"The change feed moved past this watcher: it stopped at {after}, but changes up to "
                f"{pruned} were pruned; reload the full state, then watch without a token"
            )
        if first_seq is None:  # the LEFT JOIN's empty side: nothing after ``after``
            return [], max(after, high)
        # The outer join does not promise the subquery's order (and sorting there would
        # copy up to PULL_LIMIT rows into a temp b-tree): sort here, usually already in order.
        # The rows keep their two leading bound columns (``_seq``): a copy of each without
        # them cost a console following a drain more than the sort.
        found.sort(key=_seq)
        return found, high

    @staticmethod
    def _event(row: tuple[Any, ...], full_document: bool) -> ChangeEvent:
        seq, op, job_id, name, status, next_run_at = row[2:8]
        job = None
        job_row = row[8:]  # the job's columns (Tables.columns) when the pull asked for them
        if full_document and job_row and job_row[jobrow.ID] is not None:
            try:
                job = row_to_job(job_row)
            except InvalidJobDocumentError as error:
                # As the MongoDB stream does: the change is still reported, without its job.
                log.warning("%s; its change is reported without the job", error)
        stop = op == "stop"  # running.STOP_OP: a stop request is an update to readers
        return change_event(
            "update" if stop else op, job_id, job, seq, name, STATUS_BY_VALUE.get(status), next_run_at, stop
        )


def _wanted(statuses: tuple[JobStatus, ...] | None) -> str | None:
    """The feed rows a status-filtered stream reads, as SQL on alias ``c``: changes that left
    a job in one of ``statuses``, and no deletes (a deleted job is in no status; a delete row
    keeps the status the job had, so it must be excluded by its operation).

    Deletes passed until 2026-12 (issue 34): a purge of 683k jobs then sent 683k events to every
    worker (its stream watches ``pending``), which read them a page at a time on the store's
    readers (those of its due-time look-ups too) and dropped every one. MongoDB's filtered streams drop
    them too (``mongo/changes.py``); a console's unfiltered stream still gets every delete.
    """
    if statuses is None:
        return None
    values = ",".join(f"'{s.value}'" for s in statuses)
    # And every stop request (running.STOP_OP, a processing job): its owner must hear it.
    return f"((c.op != 'delete' AND c.status IN ({values})) OR c.op = 'stop')"


__all__ = ["ChangeFeed", "ConnectionError"]

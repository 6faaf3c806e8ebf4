"""Threads that own SQLite connections, so the event loop never waits on the database.

Why not one thread hop per statement (aiosqlite's model): a hop costs ~70 µs on these
machines, which caps a queue near 3k jobs/s. Instead:

* ``WriteRunner`` has one thread with one write connection. Coroutines append operations
  to a queue; the thread takes everything queued and runs it in **one transaction** (group
  commit), then resolves all their futures with a single loop wake-up. Under load, one
  commit serves dozens of claims and completions.
* When nothing is queued and the database is free, a write may run **inline** on the loop
  thread instead (``inline=True``): a non-blocking attempt on a second connection whose
  busy timeout is 0, so it either finishes in microseconds or falls back to the thread.
  It is only enabled when commits do not fsync (``synchronous=NORMAL``).
* Neither write connection checkpoints (``wal_autocheckpoint=0``): a ``Checkpointer``
  (checkpointer.py) does it on a third connection, so no commit waits for one.
* ``ReadRunner`` threads hold read connections; WAL lets them read while writes commit.

A failing operation never takes its batch-mates down: the batch is rolled back and each
operation is re-run in a transaction of its own.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import functools
import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, Final, Literal, TypeAlias, TypeVar

from ...errors import ConnectionError
from ...exception_text import exception_line
from .busy import begin_immediate, is_busy_error, retry_while_busy
from .checkpointer import FRAMES_PER_COMMIT, Checkpointer, estimate_frames
from .identity import is_damage_error
from .sqlerrors import wrap_error
from .threadappends import Append, ThreadAppends

T = TypeVar("T")
Operation = Callable[[sqlite3.Connection], T]
log = logging.getLogger("monque_engine.sqlite")

MAX_BATCH = 512


def _nothing(conn: sqlite3.Connection) -> None:
    return None


class _Miss(enum.Enum):
    """A one-member enum, so ``result is not MISS`` narrows ``T | Miss`` to ``T`` for mypy."""

    MISS = enum.auto()


Miss: TypeAlias = Literal[_Miss.MISS]
MISS: Final = _Miss.MISS  #: run_inline_now could not run the operation without waiting


class _Runner:
    """Shared queue-and-thread machinery; subclasses decide how a batch runs."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        name: str,
        describe: Callable[[], str],
        damaged: Callable[[BaseException], BaseException | None] | None = None,
    ) -> None:
        self._loop = loop
        self._name = name
        self._describe = describe
        #: Told of a statement SQLite refused because the file is damaged (identity.py):
        #: returns the error every caller gets from then on, or None (not open yet).
        self._damaged = damaged
        self._queue: collections.deque[tuple[Operation[Any], asyncio.Future[Any]]] = collections.deque()
        self._cv = threading.Condition()
        self._closing = False
        #: Set by close(): waits for another process's lock end now (``begin_immediate``).
        self._abandon = threading.Event()
        self._threads: list[threading.Thread] = []
        self._conns: list[sqlite3.Connection] = []  # the threads' connections, to interrupt at close
        #: Set when a thread died outside a batch (``_thread_ended``): every later operation
        #: fails with it, and the store reports it as its health (``broken``).
        self._broken: ConnectionError | None = None
        #: The batch each thread is running (by thread id: a read runner has several), so a
        #: thread that dies can still answer its callers.
        self._in_flight: dict[int, list[tuple[Operation[Any], asyncio.Future[Any]]]] = {}

    def _start_threads(self, count: int, connect: Callable[[], sqlite3.Connection]) -> None:
        ready: list[BaseException | None] = []
        started = threading.Event()

        def main() -> None:
            try:
                conn = connect()
            except BaseException as error:  # noqa: BLE001 - reported to the opener
                ready.append(error)
                started.set()
                return
            self._conns.append(conn)
            ready.append(None)
            started.set()
            try:
                self._serve(conn)
            except BaseException as error:  # noqa: BLE001 - said to every caller waiting, then the thread ends
                self._thread_ended(error)
            finally:
                conn.close()

        for index in range(count):
            started.clear()
            thread = threading.Thread(target=main, name=f"{self._name}-{index}", daemon=True)
            thread.start()
            started.wait()
            if ready[-1] is not None:
                raise self._wrap(ready[-1])
            self._threads.append(thread)

    def _wrap(self, error: BaseException) -> BaseException:
        """``wrap_error``, and a statement that found the file damaged marks it so (sticky)."""
        if self._damaged is not None and is_damage_error(error):
            verdict = self._damaged(error)
            if verdict is not None:
                return verdict
        return wrap_error(error, self._describe)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop that opened the store (kept: ``asyncio.get_running_loop()`` is a getpid
        system call on Python 3.11, and completions needed it once per job)."""
        return self._loop

    def _thread_ended(self, error: BaseException) -> None:
        """A thread died outside a batch (``_take`` itself met a MemoryError): the operations
        queued for it fail now, and later ones at once, instead of waiting for nobody."""
        failure = self._thread_failure(error)
        with self._cv:
            self._broken = failure
            queued = self._in_flight.pop(threading.get_ident(), []) + list(self._queue)  # (_resolve skips what is done)
            self._queue.clear()
        if queued:
            try:
                self._loop.call_soon_threadsafe(self._resolve, queued, [(False, failure) for _ in queued])
            except RuntimeError:
                pass  # the loop is closed: nobody is waiting

    @property
    def broken(self) -> ConnectionError | None:
        """Why this runner takes no more operations (a thread of it died), else None."""
        return self._broken

    def submit(self, op: Operation[T]) -> asyncio.Future[T]:
        future: asyncio.Future[T] = self._loop.create_future()
        with self._cv:
            if self._closing:
                raise ConnectionError(f"{self._describe()}: the store is closed")
            if self._broken is not None:
                raise ConnectionError(str(self._broken))
            self._queue.append((op, future))
            self._cv.notify()
        return future

    def _take(self) -> list[tuple[Operation[Any], asyncio.Future[Any]]] | None:
        with self._cv:
            while not self._queue:
                if self._closing:
                    return None
                self._cv.wait()
            batch: list[tuple[Operation[Any], asyncio.Future[Any]]] = []
            while self._queue and len(batch) < MAX_BATCH:
                batch.append(self._queue.popleft())
            return batch

    def _thread_failure(self, error: BaseException) -> ConnectionError:
        failure = ConnectionError(f"{self._describe()}: the store's thread failed: {exception_line(error)}")
        failure.__cause__ = error
        return failure

    def _serve(self, conn: sqlite3.Connection) -> None:
        me = threading.get_ident()
        while (batch := self._take()) is not None:
            self._in_flight[me] = batch
            try:
                outcomes = self._run_batch(conn, batch)
            except BaseException as error:  # noqa: BLE001 - the thread must outlive what one batch met
                # A MemoryError (a worker under ulimit -v) ended the write thread with the
                # batch's callers waiting, and every later write queued behind nobody: the
                # worker sat at "active=100" for ten minutes (a resource-exhaustion probe).
                # A transaction it left open would hold the write lock for every later batch.
                if conn.in_transaction:
                    conn.rollback()
                failure = self._thread_failure(error)
                outcomes = [(False, failure) for _ in batch]
            try:
                self._loop.call_soon_threadsafe(self._resolve, batch, outcomes)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                return
            self._in_flight.pop(me, None)

    def _run_batch(self, conn: sqlite3.Connection, batch: list[Any]) -> list[tuple[bool, Any]]:
        raise NotImplementedError

    def _resolve(
        self, batch: list[tuple[Operation[Any], asyncio.Future[Any]]], outcomes: list[tuple[bool, Any]]
    ) -> None:
        for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
            if future.done():
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def close(self) -> None:
        with self._cv:
            self._closing = True
            self._abandon.set()
            self._cv.notify_all()
        self._interrupt()
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads.clear()
        self._conns.clear()

    def _interrupt(self) -> None:
        """Stop what the threads' connections wait for at close (the write runner's waits are
        its own loop, which ``_abandon`` ends; see ReadRunner)."""


class ReadRunner(_Runner):
    """Read-only operations, each in its own implicit read transaction.

    A read can still meet SQLITE_BUSY for a moment (another process closing the file takes it
    exclusively to clean up the WAL); reads are retried for up to ``busy_timeout``.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        connect: Callable[[], sqlite3.Connection],
        describe: Callable[[], str],
        threads: int = 2,
        busy_timeout: float = 10.0,
        verify: Callable[[], None] | None = None,
        damaged: Callable[[BaseException], BaseException | None] | None = None,
    ) -> None:
        super().__init__(loop, "monque-sqlite-read", describe, damaged)
        self._busy_timeout = busy_timeout
        self._verify = verify
        self._start_threads(threads, connect)

    def _interrupt(self) -> None:
        """A read blocked at close (SQLite's own busy handler, in C, up to ``busy_timeout``)
        ends now: reads change nothing, so cutting one short loses nothing."""
        for conn in list(self._conns):
            try:
                conn.interrupt()  # thread-safe; a no-op when the connection runs nothing
            except sqlite3.Error:
                pass

    def _take(self) -> list[tuple[Operation[Any], asyncio.Future[Any]]] | None:
        # One operation at a time per thread so a slow scan never holds up a quick lookup.
        with self._cv:
            while not self._queue:
                if self._closing:
                    return None
                self._cv.wait()
            return [self._queue.popleft()]

    def _run_batch(self, conn: sqlite3.Connection, batch: list[Any]) -> list[tuple[bool, Any]]:
        outcomes: list[tuple[bool, Any]] = []
        for op, _ in batch:
            try:
                value = retry_while_busy(functools.partial(op, conn), self._busy_timeout, self._abandon)
                if self._verify is not None:
                    self._verify()  # what was read must come from the file the path names
                outcomes.append((True, value))
            except BaseException as error:  # noqa: BLE001 - handed to the awaiting coroutine
                if self._abandon.is_set() and (is_busy_error(error) or "interrupted" in str(error)):
                    # cut short (or still busy) because the store is closing: say that
                    failure: BaseException = ConnectionError(f"{self._describe()} was closed while this read ran")
                else:
                    failure = self._wrap(error)
                outcomes.append((False, failure))
        return outcomes

    async def run(self, op: Operation[T]) -> T:
        return await self.submit(op)


class WriteRunner(_Runner):
    """Write operations with group commit and an optional inline fast path."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        connect: Callable[[], sqlite3.Connection],
        describe: Callable[[], str],
        busy_timeout: float,
        inline_connect: Callable[[], sqlite3.Connection] | None,
        on_commit: Callable[[], None],
        verify: Callable[[], None] | None = None,
        precheck: Callable[[], None] | None = None,
        checkpoint_connect: Callable[[], sqlite3.Connection] | None = None,
        db_path: str | None = None,
        damaged: Callable[[BaseException], BaseException | None] | None = None,
    ) -> None:
        super().__init__(loop, "monque-sqlite-write", describe, damaged)
        self._busy_timeout = busy_timeout
        self._on_commit = on_commit
        #: Raises ConnectionError when the file was deleted or replaced (identity.py): run
        #: after each commit, before the caller is told it succeeded (one stat, ~2 µs).
        self._verify = verify or (lambda: None)
        #: The same verdict without a system call, before writing: once the file is known
        #: to be gone, nothing more is written to it.
        self._precheck = precheck or (lambda: None)
        self._gate = threading.Lock()  # one writer of this process at a time: thread or inline
        self._thread_appends = ThreadAppends(self._gate)
        self._in_batch = False
        self._inline: sqlite3.Connection | None = None
        #: Coalescing writers (see ``run``): this turn's first task, whether another task
        #: wrote in this turn, and whether the last turn had more than one.
        self._turn_seen = False
        self._turn_writer: asyncio.Task[Any] | None = None
        self._turn_crowded = False
        self._crowd = False
        #: Runs first in every write transaction (the store's inbox absorb, inbox.py), once
        #: the schema exists: whatever a transaction reads or changes, queued jobs are in it.
        self._absorb: Callable[[sqlite3.Connection], Any] = _nothing
        self._start_threads(1, connect)
        self._checkpointer: Checkpointer | None = None
        try:
            if inline_connect is not None:
                self._inline = inline_connect()
            if checkpoint_connect is not None:
                self._checkpointer = Checkpointer(
                    checkpoint_connect, self._gate, db_path, skip=self._lost, on_error=self._checkpoint_failed
                )
        except BaseException:
            self.close()
            raise

    def absorb_first(self, absorb: Callable[[sqlite3.Connection], Any]) -> None:
        """Run ``absorb`` at the start of every write transaction from now on."""
        self._absorb = absorb

    def _lost(self) -> bool:
        """Whether the path no longer names our file (one stat, before each checkpoint): a
        replaced file shares the ``-wal`` and ``-shm`` names, so copying would mark the new
        file's frames as copied into the old one."""
        try:
            self._verify()
        except BaseException:  # noqa: BLE001 - the file is gone: nothing to checkpoint into
            return True
        return False

    def _checkpoint_failed(self, error: BaseException) -> bool:
        """A checkpoint failed: whether it is because the file is damaged (then recorded)."""
        return is_damage_error(error) and self._damaged is not None and self._damaged(error) is not None

    def _note_frames(self, frames: int) -> None:
        if self._checkpointer is not None:
            self._checkpointer.note(frames)

    async def run(self, op: Operation[T], *, inline: bool = False, coalesce: bool = False) -> T:
        """Run ``op``: inline when allowed and possible, else in the write thread's next group commit.

        ``coalesce`` (single inserts): when more than one task wrote in the last loop turn, a
        crowd of producers is writing (request handlers, gathered calls, whose futures one
        group commit resolves at once). Inline, each would commit alone, one after another,
        on the loop; sent to the write thread, they share one commit. A lone producer is
        never diverted: its inline writes do not yield, so every turn has one writer.
        """
        if coalesce and not self._note_writer():
            inline = False
        if inline:
            result = self.run_inline_now(op)
            if result is not MISS:
                return result
        return await self.submit(op)

    def _note_writer(self) -> bool:
        """Count this task among the turn's writers; whether it may write inline."""
        task = asyncio.current_task()
        if not self._turn_seen:
            self._turn_seen = True
            self._turn_writer = task
            self._loop.call_soon(self._next_turn)
        elif task is not self._turn_writer:
            self._turn_crowded = True
        return not (self._crowd or self._turn_crowded)

    def _next_turn(self) -> None:
        self._crowd = self._turn_crowded
        self._turn_seen = False
        self._turn_writer = None
        self._turn_crowded = False

    def run_inline_now(self, op: Operation[T]) -> T | Miss:
        """Run ``op`` in its own transaction on the loop thread, if that can be done without
        waiting (inline writes enabled, nothing queued, the database free); else ``MISS``.
        Raises what ``op`` raises (rolled back), or the file-identity error."""
        if self._inline is None or self._queue or self._in_batch:
            return MISS
        self._precheck()
        result = self._try_inline(op)
        if result is not MISS:
            self._committed_inline(FRAMES_PER_COMMIT)
        return result

    def try_append(self, statement: str, params: tuple[Any, ...]) -> bool:
        """One single-statement write, committed on its own, inline, without the absorb (the
        inbox append, inbox.py); False when it cannot run without waiting, or when another
        task of this process writes in this loop turn (a crowd shares group commits)."""
        if self._inline is None or self._queue or self._in_batch or not self._note_writer():
            return False
        self._precheck()
        return self._append_now(statement, params)

    def append_from_thread(self, statement: str, params: tuple[Any, ...]) -> bool:
        """``try_append`` from a thread that is not the loop's (a synchronous producer,
        ``monque_engine.sync``): it waits for this process's other writer, as its caller
        waits anyway, and commits together with other threads' appends queued meanwhile
        (threadappends.py); False when inline writes are off or another process holds the lock."""
        if self._inline is None:
            return False
        self._precheck()
        return self._thread_appends.append(statement, params, self._commit_appends)

    def _append_now(self, statement: str, params: tuple[Any, ...]) -> bool:
        conn = self._inline
        if conn is None or not self._gate.acquire(blocking=False):
            return False
        try:
            conn.execute(statement, params)  # autocommit: atomic, and nothing written if busy
        except sqlite3.OperationalError as error:
            if is_busy_error(error):
                return False
            raise self._wrap(error) from None
        except BaseException as error:  # noqa: BLE001 - re-raised wrapped, as inline writes are
            raise self._wrap(error) from None
        finally:
            self._gate.release()
        self._committed_inline(1)
        return True

    def _commit_appends(self, batch: list[Append]) -> bool | BaseException:
        """(Gate held.) The threads' queued rows in one transaction: all or none."""
        conn = self._inline
        if conn is None:  # closed while the threads waited for the gate
            return False
        try:
            if len(batch) == 1:  # autocommit, as try_append
                (alone,) = batch
                conn.execute(alone.statement, alone.params)
            else:
                conn.execute("BEGIN IMMEDIATE")  # busy timeout 0: busy, and nothing is written
                try:
                    statements = {row.statement for row in batch}
                    if len(statements) == 1:  # one store's inbox: always
                        (statement,) = statements
                        conn.executemany(statement, [row.params for row in batch])
                    else:
                        for row in batch:
                            conn.execute(row.statement, row.params)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            self._committed_inline(1)
        except sqlite3.OperationalError as error:
            return False if is_busy_error(error) else self._wrap(error)
        except BaseException as error:  # noqa: BLE001 - every thread of the batch raises it
            return self._wrap(error)
        return True

    def _committed_inline(self, frames: int) -> None:
        self._verify()  # committed, but to an unlinked file: the caller must not be told "done"
        self._on_commit()
        self._note_frames(frames)

    def _try_inline(self, op: Operation[T]) -> T | Miss:
        if not self._gate.acquire(blocking=False):
            return MISS
        conn = self._inline
        assert conn is not None
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as error:
                if is_busy_error(error):
                    return MISS
                raise self._wrap(error) from None
            try:
                self._absorb(conn)
                result = op(conn)
                conn.execute("COMMIT")
            except BaseException as error:  # noqa: BLE001 - roll back on anything, then re-raise it wrapped
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise self._wrap(error) from None
            return result
        finally:
            self._gate.release()

    def _resolve(self, batch: list[Any], outcomes: list[tuple[bool, Any]]) -> None:
        super()._resolve(batch, outcomes)
        if any(ok for ok, _ in outcomes):
            self._on_commit()

    def _run_batch(self, conn: sqlite3.Connection, batch: list[Any]) -> list[tuple[bool, Any]]:
        """Commit the batch; then, if the path no longer names our file, fail every success."""
        try:
            self._precheck()
        except BaseException as error:  # noqa: BLE001 - the whole batch fails, nothing is written
            return [(False, error) for _ in batch]
        outcomes = self._commit_batch(conn, batch)
        if any(ok for ok, _ in outcomes):
            try:
                self._verify()
            except BaseException as error:  # noqa: BLE001
                return [(False, error) if ok else (ok, value) for ok, value in outcomes]
        return outcomes

    def _commit_batch(self, conn: sqlite3.Connection, batch: list[Any]) -> list[tuple[bool, Any]]:
        self._in_batch = True
        changes_before = conn.total_changes
        try:
            with self._gate:
                try:
                    begin_immediate(conn, self._busy_timeout, self._describe, self._abandon)
                except BaseException as error:  # noqa: BLE001
                    # The file stayed locked: every operation of the batch fails with that, once
                    # (re-running each alone would wait busy_timeout again for every one).
                    failure = self._wrap(error)
                    return [(False, failure) for _ in batch]
                try:
                    return self._transaction(conn, [op for op, _ in batch], begun=True)
                except BaseException as error:  # noqa: BLE001
                    # Wrapped first: a damaged file is recorded, and the re-runs below write nothing.
                    failure = self._wrap(error)
                    if len(batch) == 1:
                        return [(False, failure)]
                # Something in the batch failed: isolate it by running each on its own.
                outcomes: list[tuple[bool, Any]] = []
                for op, _ in batch:
                    try:
                        outcomes.extend(self._transaction(conn, [op]))
                    except BaseException as error:  # noqa: BLE001
                        outcomes.append((False, self._wrap(error)))
                return outcomes
        finally:
            self._in_batch = False
            self._note_frames(estimate_frames(conn.total_changes - changes_before))

    def _transaction(
        self, conn: sqlite3.Connection, ops: list[Operation[Any]], begun: bool = False
    ) -> list[tuple[bool, Any]]:
        if not begun:
            self._precheck()  # a batch-mate found the file damaged: the rest write nothing
            begin_immediate(conn, self._busy_timeout, self._describe, self._abandon)
        try:
            self._absorb(conn)
            results = [(True, op(conn)) for op in ops]
            conn.execute("COMMIT")
            return results
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            checkpointer.close()  # first: its last pass may want the gate
        super().close()
        with self._gate:  # a synchronous producer's append (append_from_thread) may be running
            if self._inline is not None:
                self._inline.close()
                self._inline = None

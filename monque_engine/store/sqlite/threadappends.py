"""Appends from synchronous producers' threads, committed together: a group commit without
a thread hop (``WriteRunner.append_from_thread``, used by ``monque_engine.sync``).

Why: threads of one process appending at once (a thread pool, gunicorn's threads) each
committed alone, one after another, so 8 threads wrote less in all than one thread did
(0.8-0.95x, ``python -m bench.sync_client``). Under the GIL only one thread runs Python at
a time, and a thread that lets it go for SQLite's few microseconds of C takes it back before
a waiting thread wakes: the threads took turns in 5 ms slices, each committing its own rows
one by one (4,955 commits of one row for 4,956 rows, counted). A commit is about 40 % of a
lone thread's call (the WAL write and its locks, the file-identity check), and that is what
many threads could share.

So each thread queues its row, and one of them, the *leader*, commits what is queued in
one transaction, then releases the others (each waits on a lock of its own row, not on the
GIL). Before it commits, the leader waits for the *crowd*: the threads whose rows the last
transaction wrote and who came back quickly the time before (a thread in a tight run of
enqueues, back within ``QUICK``). Each of them queues its next row after a few microseconds
of Python; the last one to arrive wakes the leader, so a batch holds a row of most threads
of the run (about 6 of 8 in the bench) and nobody waits for a timer. ``CROWD_WAIT`` bounds
the wait when a thread does not come back (its run ended): who is not back by then is not
waited for again until it is quick again. A thread that does other work between its
enqueues (I/O, a request) is not quick, is never waited for, and its rows are committed as
they come, as before; a lone thread never waits at all (the crowd is itself).

Tried and not kept (docs/benchmarks.md): the gate's holder committing what was queued
during its commit (batches never formed: 0.8-0.95x); one appender thread per store fed by a
queue (batches of ~3.5 rows, 3.3 context switches a row, 0.73-0.92x); a leader that does
not wait for the crowd (0.83-1.12x).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

#: What the committer reports for a batch: True (written), False (not written: the caller
#: takes the usual path) or the error every row of the batch raises.
Outcome = bool | BaseException
#: A thread back with its next row within this many seconds after its last one returned is
#: in a tight run of enqueues (measured: 6 us median, 33 us p99, 8 threads on a loaded
#: machine), and the next leader waits for it. A thread that spends longer between two
#: enqueues (an I/O call, a request) is not waited for: its rows are committed as they come.
QUICK = 0.0002
#: How long a leader waits at most for the crowd to queue (each of its threads must get the
#: GIL in turn: 0.2-0.4 ms for seven, measured); who is not back by then is not waited for
#: until it is quick again.
CROWD_WAIT = 0.001
#: Set on a row to hand its thread the leader's part (it is woken with it, not with an outcome).
_LEAD: Any = object()


class Append:
    """One thread's row, waiting to be committed. A follower's row has ``done``, held until
    the row is settled (a leader's own row needs none: a lone thread allocates no lock)."""

    __slots__ = ("done", "outcome", "params", "quick", "statement", "thread")

    def __init__(self, statement: str, params: tuple[Any, ...], thread: int, quick: bool) -> None:
        self.statement = statement
        self.params = params
        self.thread = thread
        self.quick = quick  #: its thread came back quickly after its previous row
        self.outcome: Outcome | None = None
        self.done: threading.Lock | None = None


class ThreadAppends:
    """The rows threads have queued and not yet seen committed, and who commits them."""

    def __init__(self, gate: threading.Lock) -> None:
        self._gate = gate
        self._lock = threading.Lock()
        self._crowd_back = threading.Condition(self._lock)
        self._queued: list[Append] = []
        self._leading = False
        #: Threads the next leader waits for (the last batch's quick ones not back yet).
        self._awaited: set[int] = set()
        self._local = threading.local()
        #: Transactions that wrote rows, and the rows they wrote (read by tests and
        #: benchmarks: fewer commits than rows is the batching at work). Updated by the
        #: leader only, under the lock.
        self.commits = 0
        self.rows = 0

    def append(self, statement: str, params: tuple[Any, ...], commit: Callable[[list[Append]], Outcome]) -> bool:
        """Queue the row and wait until it is committed (True) or refused (False), or raise
        the batch's error. ``commit`` runs with the gate held, by whichever thread leads."""
        local = self._local
        returned: float | None = getattr(local, "returned", None)
        quick = returned is not None and time.monotonic() - returned < QUICK
        me = threading.get_ident()
        row = Append(statement, params, me, quick)
        with self._lock:
            self._queued.append(row)
            self._awaited.discard(me)
            follower = self._leading
            if not follower:
                self._leading = True
            else:
                row.done = threading.Lock()
                row.done.acquire()
                if not self._awaited:
                    self._crowd_back.notify()  # the last one the leader waited for
        try:
            if not follower or self._follow(row):
                self._lead(row, commit)
        finally:
            local.returned = time.monotonic()
        written = row.outcome
        if isinstance(written, BaseException):
            raise written
        return bool(written)

    def _follow(self, row: Append) -> bool:
        """Wait for the row to be settled; True when its thread is to lead instead."""
        assert row.done is not None
        try:
            row.done.acquire()
        except BaseException:  # KeyboardInterrupt in the main thread: withdraw, then raise it
            self._withdraw(row)
            raise
        if row.outcome is _LEAD:
            row.outcome = None
            return True
        return False

    def _withdraw(self, row: Append) -> None:
        """An interrupted follower's row leaves the queue if no leader has taken it yet (a row
        already taken is committed all the same), and a lead handed to it passes on: nobody is
        left waiting for a thread that is gone."""
        with self._lock:
            if row not in self._queued:
                return
            self._queued.remove(row)
            if row.outcome is _LEAD:
                self._pass_lead()

    def _lead(self, row: Append, commit: Callable[[list[Append]], Outcome]) -> None:
        batch: list[Append] = []
        outcome: Outcome = False
        try:
            with self._lock:
                if self._awaited:
                    self._crowd_back.wait_for(lambda: not self._awaited, CROWD_WAIT)
                    self._awaited.clear()  # who is not back by now is not on its way
            with self._gate:  # then what is queued by the time the gate is ours (the loop may hold it)
                with self._lock:
                    batch, self._queued = self._queued, []
                try:
                    outcome = commit(batch)
                except BaseException as error:  # noqa: BLE001 - every caller of the batch raises it
                    outcome = error
        finally:  # whatever happened, nobody is left waiting for this leader
            self._settle(row, batch, outcome)

    def _settle(self, row: Append, batch: list[Append], outcome: Outcome) -> None:
        with self._lock:
            if not batch and row in self._queued:  # interrupted before it took the batch
                self._queued.remove(row)
            if outcome is True:
                self.commits += 1
                self.rows += len(batch)
                self._awaited = {queued.thread for queued in batch if queued.quick}
            for queued in batch:
                queued.outcome = outcome
                if queued.done is not None:  # a follower (the leader's own row has none)
                    queued.done.release()
            self._pass_lead()

    def _pass_lead(self) -> None:
        """(Lock held.) The thread of the oldest row queued leads next, woken with the lead
        instead of an outcome; with none queued, nobody leads until the next row."""
        for following in self._queued:  # the oldest only (a follower: it has ``done``)
            following.outcome = _LEAD
            if following.done is not None:
                following.done.release()
            return
        self._leading = False

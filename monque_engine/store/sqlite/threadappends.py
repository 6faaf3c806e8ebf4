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
one transaction, then wakes the others with one call for the whole batch (``Wakes``: they
sleep on a counting semaphore, on Linux an eventfd, whose one write lets go of the GIL while
the kernel wakes them; releasing a lock a row, as before, cost the leader 4-12 us a row with
the GIL held, 40-60 us of a 220 us cycle of 8 rows). Before it commits, the leader waits for the *crowd*: the threads whose rows the last
transaction wrote and who came back quickly the time before (a thread in a tight run of
enqueues, back within ``QUICK``). Each of them queues its next row after a few microseconds
of Python; the last one to arrive wakes the leader, so a batch holds a row of most threads
of the run (about 6 of 8 in the bench) and nobody waits for a timer. ``CROWD_WAIT`` bounds
the wait when a thread does not come back (its run ended): who is not back by then is not
waited for again until it is quick again. A thread that does other work between its
enqueues (I/O, a request) is not quick, is never waited for, and its rows are committed as
they come, as before; a lone thread never waits at all (the crowd is itself).

Tried and not kept (docs/benchmarks.md): followers woken one at a time by the next thread
about to block (a chain: fewer context switches, the same throughput); the batch as one
multi-row INSERT in autocommit (slower than BEGIN + executemany + COMMIT); the gate's holder committing what was queued
during its commit (batches never formed: 0.8-0.95x); one appender thread per store fed by a
queue (batches of ~3.5 rows, 3.3 context switches a row, 0.73-0.92x); a leader that does
not wait for the crowd (0.83-1.12x).
"""

from __future__ import annotations

import os
import sys
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
#: Followers sleep on an eventfd where there is one (Linux), else on a ``threading.Semaphore``.
EVENTFD = hasattr(os, "eventfd")


def green_threads() -> bool:
    """Whether gevent or eventlet patched ``threading``: its "threads" are then greenlets of
    one OS thread, and a follower blocked in ``os.eventfd_read`` (a system call neither can
    switch away from) stopped the whole process, the leader that would wake it included
    (``gunicorn -k gevent``: a probe). Their patched ``threading.Semaphore`` yields instead."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched("threading"):
        return True
    patcher = sys.modules.get("eventlet.patcher")
    return patcher is not None and bool(patcher.is_monkey_patched("thread"))


class Append:
    """One thread's row, waiting to be committed. A follower's row has ``wakes``, where its
    thread sleeps, and is ``waiting`` until its thread has woken (a leader's own row has
    neither: a lone thread sleeps nowhere)."""

    __slots__ = ("outcome", "params", "quick", "statement", "thread", "waiting", "wakes")

    def __init__(self, statement: str, params: tuple[Any, ...], thread: int, quick: bool) -> None:
        self.statement = statement
        self.params = params
        self.thread = thread
        self.quick = quick  #: its thread came back quickly after its previous row
        self.outcome: Outcome | None = None
        self.wakes: Wakes | None = None
        self.waiting = False


class Wakes:
    """Where the followers of one *generation* sleep: the rows queued between two leaders'
    takes, so the rows of one batch. A counting semaphore, raised once by the number of the
    batch's sleepers when it is settled, or by one to pass the lead on: one call a batch, not
    one a row. On Linux an eventfd in semaphore mode: ``os.eventfd_write`` and
    ``os.eventfd_read`` let go of the GIL around the system call, so the kernel's wake-ups run
    beside Python, not inside the leader's turn. Reused once every sleeper has woken. A
    token nobody was meant to take may be left in it (a spare raised for an interrupted
    thread, ``ThreadAppends._recover``): whoever it wakes finds its row neither settled nor
    given the lead and sleeps again, so a spare costs a wake-up, never a wrong answer."""

    __slots__ = ("fd", "semaphore", "taken", "waiting")

    def __init__(self) -> None:
        self.fd = os.eventfd(0, os.EFD_SEMAPHORE | os.EFD_CLOEXEC) if EVENTFD and not green_threads() else -1
        self.semaphore = None if self.fd >= 0 else threading.Semaphore(0)
        self.waiting = 0  #: its rows' threads that have not woken yet
        self.taken = False  #: a leader took its rows: no more join

    def wait(self) -> None:
        if self.semaphore is None:
            os.eventfd_read(self.fd)
        else:
            self.semaphore.acquire()

    def wake(self, count: int) -> None:
        if self.semaphore is None:
            os.eventfd_write(self.fd, count)
        else:
            self.semaphore.release(count)

    def close(self, _close: Callable[[int], None] = os.close) -> None:  # bound now: __del__ may run at exit
        fd, self.fd = self.fd, -1
        if fd >= 0:
            _close(fd)

    def __del__(self) -> None:
        self.close()


class ThreadAppends:
    """The rows threads have queued and not yet seen committed, and who commits them."""

    def __init__(self, gate: threading.Lock) -> None:
        self._gate = gate
        self._lock = threading.Lock()
        self._crowd_back = threading.Condition(self._lock)
        self._queued: list[Append] = []
        #: The row whose thread leads now (from becoming leader until its batch is settled).
        #: None with ``_lead_token`` set: the lead was passed on and no thread has taken it yet.
        self._leader: Append | None = None
        #: Threads the next leader waits for (the last batch's quick ones not back yet).
        self._awaited: set[int] = set()
        self._local = threading.local()
        #: Transactions that wrote rows, and the rows they wrote (read by tests and
        #: benchmarks: fewer commits than rows is the batching at work). Updated by the
        #: leader only, under the lock.
        self.commits = 0
        self.rows = 0
        #: Where the followers queued now sleep (None until the first); those already woken
        #: from, kept for the next generations.
        self._wakes: Wakes | None = None
        self._spare: list[Wakes] = []
        #: The lead was passed on: the next follower to wake whose row is not settled leads.
        #: Taken in the same two stores as ``_leader`` is set, with no call between them, so
        #: an interrupt never lands between the two (``_recover`` relies on it).
        self._lead_token = False

    def append(self, statement: str, params: tuple[Any, ...], commit: Callable[[list[Append]], Outcome]) -> bool:
        """Queue the row and wait until it is committed (True) or refused (False), or raise
        the batch's error. ``commit`` runs with the gate held, by whichever thread leads."""
        local = self._local
        returned: float | None = getattr(local, "returned", None)
        quick = returned is not None and time.monotonic() - returned < QUICK
        me = threading.get_ident()
        row = Append(statement, params, me, quick)
        try:
            with self._lock:
                self._queued.append(row)
                self._awaited.discard(me)
                follower = self._leader is not None or self._lead_token
                if not follower:
                    self._leader = row
                else:
                    wakes = self._wakes
                    if wakes is None:
                        wakes = self._wakes = self._spare.pop() if self._spare else Wakes()
                    wakes.waiting += 1
                    row.wakes = wakes
                    row.waiting = True
                    if not self._awaited:
                        self._crowd_back.notify()  # the last one the leader waited for
            if not follower or self._follow(row):
                self._lead(row, commit)
        except BaseException:  # KeyboardInterrupt in the main thread, wherever it landed
            self._recover(row)
            raise
        finally:
            local.returned = time.monotonic()
        written = row.outcome
        if isinstance(written, BaseException):
            raise written
        return bool(written)

    def _follow(self, row: Append) -> bool:
        """Wait for the row to be settled; True when its thread is to lead instead (it woke
        on the lead token, its row not settled: the row is in the next batch, still queued).
        Woken with neither, it took a spare token (see ``Wakes``) and sleeps again."""
        wakes = row.wakes
        assert wakes is not None
        while True:
            wakes.wait()
            with self._lock:
                lead = row.outcome is None
                if lead:
                    if not self._lead_token:
                        continue  # a spare: not this row's turn
                    self._lead_token = False
                    self._leader = row
                row.waiting = False
                self._woken(wakes)
            return lead

    def _woken(self, wakes: Wakes) -> None:
        """(Lock held.) One sleeper fewer: once its generation is taken and all have woken,
        the semaphore serves the next generation (a spare token left in it is slept through)."""
        wakes.waiting -= 1
        if wakes.waiting == 0 and wakes.taken:
            self._reuse(wakes)

    def _reuse(self, wakes: Wakes) -> None:
        wakes.taken = False
        self._spare.append(wakes)

    def _recover(self, row: Append) -> None:
        """``append`` was left by an exception (Ctrl-C in the main thread) at any point after
        its row was made: nobody may be left waiting for a thread that is gone.

        Its row leaves the queue if no leader has taken it yet (a row already taken is
        committed all the same). If its thread held the lead, the lead is passed on. If the
        lead was passed to the queued rows and not taken, this thread may have taken its
        token and gone before saying so: one more token is raised (a spare is slept through,
        see ``Wakes``), or, with no row left queued, the lead is dropped. A thread that was
        asleep is counted out of its semaphore's sleepers."""
        wake: list[tuple[Wakes, int]] = []
        with self._lock:
            if row.wakes is not None and row.waiting:
                row.waiting = False
                self._woken(row.wakes)
            if row in self._queued:
                self._queued.remove(row)
            if self._leader is row:
                self._pass_lead(wake)
            elif self._leader is None and self._lead_token:
                if self._queued:
                    assert self._wakes is not None  # the queued rows are followers of the coming generation
                    wake.append((self._wakes, 1))
                else:
                    self._lead_token = False
        for wakes, count in wake:
            wakes.wake(count)

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
                    wakes, self._wakes = self._wakes, None
                    if wakes is not None:  # its rows are this batch's: later ones sleep elsewhere
                        wakes.taken = True
                        if wakes.waiting == 0:
                            self._reuse(wakes)
                try:
                    outcome = commit(batch)
                except BaseException as error:  # noqa: BLE001 - every caller of the batch raises it
                    outcome = error
        finally:  # whatever happened, nobody is left waiting for this leader
            self._settle(row, batch, outcome)

    def _settle(self, row: Append, batch: list[Append], outcome: Outcome) -> None:
        wake: list[tuple[Wakes, int]] = []
        with self._lock:
            if not batch and row in self._queued:  # interrupted before it took the batch
                self._queued.remove(row)
            if outcome is True:
                self.commits += 1
                self.rows += len(batch)
                self._awaited = {queued.thread for queued in batch if queued.quick}
            sleeping: dict[Wakes, int] = {}  # one entry: a batch is one generation
            for queued in batch:
                queued.outcome = outcome
                if queued.wakes is not None and queued.waiting:  # a follower, not woken yet
                    sleeping[queued.wakes] = sleeping.get(queued.wakes, 0) + 1
            wake.extend(sleeping.items())
            self._pass_lead(wake)
        for wakes, count in wake:  # the lock let go of: the woken take it to count themselves out
            wakes.wake(count)

    def _pass_lead(self, wake: list[tuple[Wakes, int]]) -> None:
        """(Lock held.) A thread of a row queued leads next: the first of them to wake, woken
        with the lead token instead of an outcome; with none queued, nobody leads until the
        next row."""
        self._leader = None
        if self._queued:
            assert self._wakes is not None  # the queued rows are followers of the coming generation
            self._lead_token = True
            wake.append((self._wakes, 1))

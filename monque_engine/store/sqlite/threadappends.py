"""Appends from synchronous producers' threads, committed together: a group commit without
a thread hop (``WriteRunner.append_from_thread``, used by ``monque_engine.sync``).

Why: threads of one process appending at once (a thread pool, gunicorn's threads) each
committed alone, one after another, behind the write gate, so 8 threads wrote less in all
than one thread did (0.86x, ``python -m bench.sync_client``). Now each thread queues its
row, then takes the gate; whoever holds it commits every row queued by then in one
transaction, and the others, taking the gate in turn, find theirs written. Nobody waits
for a timer, and no thread is woken but by the gate's own hand-over.

The holder does not hand the gate over while rows are still queued: having committed its own,
it commits those that arrived meanwhile (up to ``MORE_ROUNDS`` more transactions), then lets
go. Before, the next row's thread had to be woken and get the GIL before its row could be
committed, so each row waited in turn for a wake-up (8 threads 0.77x one thread on a quiet
machine); now those wake-ups overlap the holder's next commit, and a thread woken late finds
its row written. What remains is the GIL: every thread's Python work is serialised, so 8
threads can at best match one (0.87-1.19x on a loaded machine, docs/benchmarks.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

#: What the committer reports for a batch: True (written), False (not written: the caller
#: takes the usual path) or the error every row of the batch raises.
Outcome = bool | BaseException
#: Transactions the gate's holder commits for rows queued after its own, before it lets go
#: (bounds how long one caller works for the others).
MORE_ROUNDS = 8


class Append:
    """One thread's row, waiting to be committed."""

    __slots__ = ("outcome", "params", "statement")

    def __init__(self, statement: str, params: tuple[Any, ...]) -> None:
        self.statement = statement
        self.params = params
        self.outcome: Outcome | None = None


class ThreadAppends:
    """The rows threads have queued and not yet seen committed."""

    def __init__(self, gate: threading.Lock) -> None:
        self._gate = gate
        self._lock = threading.Lock()
        self._queued: list[Append] = []
        #: Transactions that wrote rows, and the rows they wrote (read by tests and
        #: benchmarks: fewer commits than rows is the batching at work). Updated with the gate
        #: held, so never lost.
        self.commits = 0
        self.rows = 0

    def append(self, statement: str, params: tuple[Any, ...], commit: Callable[[list[Append]], Outcome]) -> bool:
        """Queue the row and wait until it is committed (True) or refused (False), or raise
        the batch's error. ``commit`` runs with the gate held."""
        row = Append(statement, params)
        with self._lock:
            self._queued.append(row)
        with self._gate:
            more = 0
            while True:  # its own row (unless a holder before took it), then what came meanwhile
                if row.outcome is not None:
                    if row.outcome is not True or not self._queued or more == MORE_ROUNDS:
                        break
                    more += 1
                with self._lock:
                    batch, self._queued = self._queued, []
                if not batch:
                    break
                outcome = commit(batch)
                if outcome is True:
                    self.commits += 1
                    self.rows += len(batch)
                for queued in batch:
                    queued.outcome = outcome
        written: Outcome | None = row.outcome
        if isinstance(written, BaseException):
            raise written
        return bool(written)

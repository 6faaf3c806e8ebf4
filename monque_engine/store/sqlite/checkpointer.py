"""WAL checkpoints on a thread and connection of their own, so no writer waits for one.

SQLite's automatic checkpoint runs inside the ``COMMIT`` that crosses 1,000 WAL pages: that
commit copies the pages into the database file and syncs both files (20-40 ms here), and
whoever awaits it waits that long. Our write connections therefore never checkpoint
(``wal_autocheckpoint=0``); writers tell this thread roughly how many WAL frames each commit
added, and once enough have accumulated it checkpoints beside them.

A checkpoint concurrent with a stream of commits never catches up with the end of the WAL,
and the WAL only restarts from its beginning (instead of growing) when a writer finds it
fully copied. So each checkpoint runs in two passes (ADR 0001, addenda 2 and 4): the long
one (PASSIVE) beside the writers, then a short one that copies only what they added
meanwhile, holding this process's write gate *and* SQLite's write lock (FULL), so that
writers in other processes cannot outrun it either. The next commit then restarts the WAL.
Without the write lock, two processes writing without pause (a producer and a worker) grew
the WAL by 1.5 GB in 20 s: each one's catch-up pass was overtaken by the other's commits.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable

log = logging.getLogger("monque_engine.sqlite")

#: Estimated WAL frames between checkpoints. One enqueue commits ~7 frames, so this is about
#: 1,000 single enqueues (~28 MB of WAL); fewer measured slower (more syncs per job), more
#: no faster.
CHECKPOINT_FRAMES = 7000
#: A commit of one small write dirties one leaf page of each B-tree it touches (the table,
#: its indexes, the feed): about this many frames.
FRAMES_PER_COMMIT = 7
#: How long the short pass waits for the write lock (another process's transaction, a few
#: ms) and then for readers on an older snapshot (a console's count at 1M jobs can take
#: 100 ms) before it copies what it can without them (SQLite then runs it as PASSIVE, and
#: the WAL restarts after a later checkpoint). Every writer waits for the short pass, so this
#: bounds their stall.
CATCH_UP_WAIT_MS = 25
#: Rows changed per extra frame in a large commit (a 1,000-job ``enqueue_many`` writes 2,000
#: rows, job and feed row, in 86-105 frames: ADR 0001 addendum 3b).
ROWS_PER_FRAME = 20


def estimate_frames(rows_changed: int) -> int:
    """WAL frames a commit that changed ``rows_changed`` rows probably wrote."""
    return FRAMES_PER_COMMIT + rows_changed // ROWS_PER_FRAME


class Checkpointer:
    """One thread that checkpoints after every ~CHECKPOINT_FRAMES frames the writers report."""

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        gate: threading.Lock,
        skip: Callable[[], bool] = lambda: False,
        threshold: int | None = None,
    ) -> None:
        self._gate = gate  # held by this process's writer while it writes
        self._skip = skip  # the file is gone or replaced: nothing of ours to copy into it
        self._threshold = CHECKPOINT_FRAMES if threshold is None else threshold
        self._frames = 0  # approximate: written by two threads without a lock, reset here
        self._due = threading.Event()
        self._closing = False
        self._conn = connect()
        self._conn.execute(f"PRAGMA busy_timeout={CATCH_UP_WAIT_MS}")  # PASSIVE never waits; FULL may
        self.passes = 0  # completed checkpoint passes, for tests and diagnostics
        self._thread = threading.Thread(target=self._serve, name="monque-sqlite-checkpoint", daemon=True)
        self._thread.start()

    def note(self, frames: int) -> None:
        """A commit added about ``frames`` frames (any thread; a plain add, no lock taken).

        A lost update between two threads only shifts the next checkpoint a little; the
        event is what cannot be lost, and it is set from the count alone.
        """
        self._frames += frames
        if self._frames >= self._threshold and not self._due.is_set():
            self._due.set()

    def _serve(self) -> None:
        try:
            while True:
                self._due.wait()
                if self._closing:
                    return
                self._due.clear()
                self._frames = 0
                if self._skip():
                    continue
                self._checkpoint("PASSIVE")  # beside the writers: the long pass
                with self._gate:  # the short pass: writers of every process wait for it
                    self._checkpoint("FULL")
        finally:
            self._conn.close()

    def _checkpoint(self, mode: str) -> None:
        try:
            self._conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        except sqlite3.Error as error:  # busy (another process checkpoints): next time
            log.debug("checkpoint skipped: %s", error)
        self.passes += 1

    def close(self) -> None:
        self._closing = True
        self._due.set()
        self._thread.join(timeout=30)

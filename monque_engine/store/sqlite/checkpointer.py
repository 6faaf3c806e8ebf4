"""WAL checkpoints on a thread and connection of their own, so no writer waits for one.

SQLite's automatic checkpoint runs inside the ``COMMIT`` that crosses 1,000 WAL pages: that
commit copies the pages into the database file and syncs both files (20-40 ms here), and
whoever awaits it waits that long. Our write connections therefore never checkpoint
(``wal_autocheckpoint=0``). After each commit the writer reads how many WAL frames wait to
be copied (``WalGauge``: every process's frames, exactly) and, past a threshold, wakes this
thread, which checkpoints beside the writers.

A checkpoint concurrent with a stream of commits never catches up with the end of the WAL,
and the WAL only restarts from its beginning (instead of growing) when a writer finds it
fully copied *and* no reader still reads from it. So each checkpoint runs in passes (ADR
0001, addenda 2 and 4): PASSIVE ones beside the writers until what they add meanwhile is
small, then a short RESTART one holding this process's write gate and SQLite's write lock
(so writers of other processes cannot outrun it either), which also waits, briefly, for
readers to leave the WAL. The next commit then restarts the WAL.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable

from ...exception_text import exception_line
from .heldfiles import held_fd

log = logging.getLogger("monque_engine.sqlite")

#: WAL frames waiting to be copied that start a checkpoint: ~1,000 single enqueues' worth
#: (~28 MB). Fewer measured slower (more syncs per job), more no faster.
CHECKPOINT_FRAMES = 7000
#: Without a gauge (see WalGauge): a small commit dirties one leaf page of each B-tree it
#: touches (the table, its indexes, the feed), about this many frames ...
FRAMES_PER_COMMIT = 7
#: ... and a large one about one more per this many rows (small payloads; an estimate only).
ROWS_PER_FRAME = 20
#: PASSIVE passes beside the writers end when fewer frames than this wait (or after
#: MAX_PASSIVE_PASSES): the closing pass, which every writer waits for, copies only these.
CATCH_UP_FRAMES = 500
MAX_PASSIVE_PASSES = 3
#: How long the closing pass waits, in all, for the write lock (another process's
#: transaction, a few ms) and for readers to leave the WAL (a console's count at 1M jobs can
#: take 100 ms) before it copies what it can without them; a later checkpoint completes.
CATCH_UP_WAIT_MS = 25
#: Closing passes in a row that could not complete before a warning says the WAL grows.
WARN_AFTER_INCOMPLETE = 10
#: What ``wal_checkpoint`` returns when another connection holds the checkpoint lock ...
ANOTHER_CHECKPOINTS = (1, -1, -1)
#: ... and how long to leave that one alone before looking again.
OTHER_CHECKPOINT_BACKOFF = 0.05


def estimate_frames(rows_changed: int) -> int:
    """WAL frames a commit that changed ``rows_changed`` rows probably wrote (no gauge)."""
    return FRAMES_PER_COMMIT + rows_changed // ROWS_PER_FRAME


class WalGauge:
    """How many WAL frames wait for a checkpoint, from the header of SQLite's WAL index.

    The ``-shm`` file starts with the WAL-index header in the layout SQLite's file-format
    documentation gives (walformat.html, "the wal-index header"; unchanged since 3.7.0):
    ``iVersion`` (3007000) at byte 0, ``mxFrame`` at 16, and the checkpoint's ``nBackfill``
    at 96, native byte order. It counts every process's frames, which an estimate per commit
    cannot. Read without a lock: a torn read only moves one checkpoint a little. One
    ``pread`` (~1 µs), no mapping, so a truncated file can only give a short read.
    """

    VERSION = 3007000

    def __init__(self, db_path: str) -> None:
        # Kept open while the -shm file lives (heldfiles.py): closing a descriptor of it
        # would drop the WAL locks of every SQLite connection of this process.
        self._fd = held_fd(db_path + "-shm")

    @classmethod
    def open(cls, db_path: str) -> WalGauge | None:
        """A gauge, or None when the index is not readable or not in the known layout."""
        try:
            gauge = cls(db_path)
        except OSError:
            return None
        if gauge.waiting() is None:
            gauge.close()
            return None
        return gauge

    def waiting(self) -> int | None:
        try:
            header = os.pread(self._fd, 100, 0)
        except OSError:
            return None
        if len(header) < 100 or int.from_bytes(header[0:4], sys.byteorder) != self.VERSION:
            return None
        last = int.from_bytes(header[16:20], sys.byteorder)
        copied = int.from_bytes(header[96:100], sys.byteorder)
        return max(0, last - copied)

    def close(self) -> None:
        self._fd = -1  # the descriptor itself stays with heldfiles


class Checkpointer:
    """One thread that checkpoints once CHECKPOINT_FRAMES frames wait in the WAL."""

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        gate: threading.Lock,
        db_path: str | None = None,
        skip: Callable[[], bool] = lambda: False,
        threshold: int | None = None,
        on_error: Callable[[BaseException], bool] = lambda error: False,
    ) -> None:
        self._connect = connect
        self._gate = gate  # held by this process's writer while it writes
        #: Opened at the first commit (the WAL index exists by then); None: estimate instead.
        self._gauge_path = db_path
        self._gauge: WalGauge | None = None
        self._skip = skip  # the file is gone or replaced: nothing of ours to copy into it
        #: Told of a failed checkpoint; True: the file is damaged, checkpoints end here.
        self._on_error = on_error
        self._threshold = CHECKPOINT_FRAMES if threshold is None else threshold
        self._estimate = 0  # without a gauge: written by two threads without a lock, reset here
        self._due = threading.Event()
        self._closing = False
        self._incomplete = 0  # closing passes in a row that did not reach the WAL's end
        self.checkpoints = 0  # completed checkpoints (the WAL fully copied), for tests
        self.passes: list[str] = []  # modes of the passes run (bounded), for tests
        self._thread = threading.Thread(target=self._serve, name="monque-sqlite-checkpoint", daemon=True)
        self._thread.start()

    def note(self, frames: int) -> None:
        """A commit wrote about ``frames`` frames (any thread; no lock taken).

        With a gauge the WAL's own count decides and ``frames`` is ignored. Without one, a
        lost update between two threads only shifts the next checkpoint a little. The event
        is what cannot be lost: it is set from the count alone, after every commit.
        """
        if self._gauge_path is not None:  # the first commit: the WAL index exists now
            self._gauge = WalGauge.open(self._gauge_path)
            self._gauge_path = None
        if self._gauge is not None:
            waiting = self._gauge.waiting()
            if waiting is None:
                return
        else:
            waiting = self._estimate = self._estimate + frames
        if waiting >= self._threshold and not self._due.is_set():
            self._due.set()

    def _still_due(self) -> bool:
        waiting = self._gauge.waiting() if self._gauge is not None else None
        return waiting is None or waiting >= self._threshold

    @staticmethod
    def _tell_failure(error: Exception, failing: str | None) -> str:
        """One line when checkpoints start failing, and again only when the reason changes:
        on a full disk each threshold printed a whole traceback, 177 in a minute (a
        resource-exhaustion probe). The traceback is at debug level."""
        reason = exception_line(error)
        if reason != failing:
            log.warning(
                "WAL checkpoint failed (%s); the WAL grows until one succeeds: retrying at each threshold "
                "(said again only if the reason changes)",
                reason,
            )
        log.debug("WAL checkpoint failed", exc_info=True)
        return reason

    def _serve(self) -> None:
        conn: sqlite3.Connection | None = None
        failing: str | None = None  # the reason checkpoints are failing, once said
        try:
            while True:
                self._due.wait()
                self._due.clear()
                if self._closing:  # after clear(): a close() that set the event is never lost
                    return
                if not self._still_due():  # set again by commits during the last checkpoint
                    continue
                self._estimate = 0
                try:
                    if conn is None:
                        conn = self._connect()
                        conn.execute(f"PRAGMA busy_timeout={CATCH_UP_WAIT_MS}")  # PASSIVE never waits
                    if not self._skip():
                        self._checkpoint(conn)
                        if failing is not None:
                            log.info("WAL checkpoint succeeded again")
                            failing = None
                except Exception as error:  # noqa: BLE001 - retried at the next threshold (said by _tell_failure)
                    if self._on_error(error):
                        return  # the file is damaged: copying pages into it helps nobody
                    failing = self._tell_failure(error, failing)
        finally:
            if conn is not None:
                conn.close()

    def _checkpoint(self, conn: sqlite3.Connection) -> None:
        for _ in range(MAX_PASSIVE_PASSES):  # beside the writers: the long passes
            if self._pass(conn, "PASSIVE") == ANOTHER_CHECKPOINTS:
                self._yield_to_other()
                return
            waiting = self._gauge.waiting() if self._gauge is not None else None
            if waiting is None or waiting < CATCH_UP_FRAMES:
                break
        with self._gate:  # the closing pass: writers of every process wait for it
            result = self._pass(conn, "RESTART")
        busy, frames, copied = result
        if result == ANOTHER_CHECKPOINTS:
            self._yield_to_other()
        elif busy == 0 and frames == copied:
            self.checkpoints += 1
            self._incomplete = 0
        else:
            self._incomplete += 1
            if self._incomplete == WARN_AFTER_INCOMPLETE:
                log.warning(
                    "WAL checkpoints have not completed %d times in a row (%d of %d frames copied): another "
                    "connection keeps writing or reading, and the -wal file grows until one completes",
                    self._incomplete,
                    copied,
                    frames,
                )

    def _yield_to_other(self) -> None:
        """Another connection (another process's checkpointer) holds the checkpoint lock: it
        does the work. Wait a moment before looking again, rather than spin on the lock while
        every commit says the WAL is still long."""
        time.sleep(OTHER_CHECKPOINT_BACKOFF)

    def _pass(self, conn: sqlite3.Connection, mode: str) -> tuple[int, int, int]:
        """One ``wal_checkpoint`` pass: SQLite's (busy, frames in the WAL, frames copied).
        Busy is a result, not an error (another checkpoint runs, or the wait ran out)."""
        started = time.monotonic()
        busy, frames, copied = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        if len(self.passes) < 1000:
            self.passes.append(mode)
        log.debug(
            "checkpoint %s: busy=%s frames=%s copied=%s in %.1f ms",
            mode,
            busy,
            frames,
            copied,
            (time.monotonic() - started) * 1000,
        )
        return int(busy), int(frames), int(copied)

    def close(self) -> None:
        self._closing = True
        self._due.set()
        self._thread.join(timeout=30)
        if self._thread.is_alive():  # its gauge stays open: it may still read it
            log.warning("the WAL checkpoint thread did not stop within 30 s; leaving it (daemon)")
        elif self._gauge is not None:
            self._gauge.close()

"""Notice when the database path stops naming the file this process has open.

An open SQLite connection keeps its inode. If the file is deleted, or replaced (a restore
from backup done with ``mv``/``os.replace``), the process keeps reading and writing the old,
unlinked inode: its writes are acknowledged and vanish when it exits, and jobs in the new
file are never seen. So the store remembers the (device, inode) of the path at open and
compares it with ``os.stat(path)``:

* after every commit, before any caller is told its write succeeded (one ``stat`` is
  ~2 µs here, against 50-80 µs for the commit itself, and one ``stat`` covers a whole
  group-committed batch);
* on the maintenance tick and whenever health is asked, so an idle process notices too.

The first mismatch is final: the store reports it once (``on_lost``, which the facade turns
into a ``job:error`` event) and fails every later operation with the same
``ConnectionError``. Reopening silently would be worse: jobs already handed out by the old
file could run again, and the caller would never learn that acknowledged work was lost.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ...errors import StoreLostError


class FileLostError(StoreLostError):
    """The database file was deleted or replaced while this process had it open."""


class FileIdentity:
    def __init__(self, path: str, display: str | None = None) -> None:
        """``path``: absolute, so a later ``os.chdir`` does not look like a deleted file;
        ``display``: the path as the user gave it, for the message."""
        self.path = path
        self.display = display or path
        self._identity: tuple[int, int] | None = None
        self._lost: FileLostError | None = None
        self._lock = threading.Lock()
        self._on_lost: Callable[[FileLostError], None] | None = None

    def capture(self) -> None:
        """Remember which file the path names now (call once the file is open)."""
        stat = os.stat(self.path)
        self._identity = (stat.st_dev, stat.st_ino)

    def on_lost(self, listener: Callable[[FileLostError], None] | None) -> None:
        """``listener`` is called once, from whichever thread noticed first."""
        self._on_lost = listener

    @property
    def lost(self) -> FileLostError | None:
        return self._lost

    def raise_if_lost(self) -> None:
        """The free check (no system call): raise if a loss was already noticed."""
        if self._lost is not None:
            raise FileLostError(str(self._lost))

    def check(self) -> None:
        """Raise ``FileLostError`` if the path no longer names the opened file (sticky)."""
        self.raise_if_lost()
        if self._identity is None:
            return
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            self._fail("was deleted")
        except OSError:
            return  # e.g. a permission change on the directory: not evidence of a new file
        else:
            if (stat.st_dev, stat.st_ino) != self._identity:
                self._fail("was replaced by another file")

    def _fail(self, what: str) -> None:
        error = FileLostError(
            f"SQLite database {self.display} {what} while this process had it open; writes since then went "
            "to the old, unlinked file and are lost at exit, and jobs in the file now at that path are not "
            "seen; restart the process to open the current file"
        )
        with self._lock:
            first = self._lost is None
            if first:
                self._lost = error
        if first and self._on_lost is not None:
            self._on_lost(error)
        raise FileLostError(str(self._lost))

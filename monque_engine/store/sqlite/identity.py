"""Notice when the database path stops naming the file this process has open, or the file
is damaged.

An open SQLite connection keeps its inode. If the file is deleted, or replaced (a restore
from backup done with ``mv``/``os.replace``), the process keeps reading and writing the old,
unlinked inode: its writes are acknowledged and vanish when it exits, and jobs in the new
file are never seen. So the store remembers the (device, inode) of the path at open and
compares it with ``os.stat(path)``:

* after every commit, before any caller is told its write succeeded (one ``stat`` is
  ~2 µs here, against 50-80 µs for the commit itself, and one ``stat`` covers a whole
  group-committed batch);
* on the maintenance tick and whenever health is asked, so an idle process notices too.

A file damaged in place (bytes written over it by something other than SQLite: a bad disk,
a stray ``dd``, a copy over the open file) kept taking enqueues: an append to the inbox
touches a page or two the process has cached, and nothing read the damaged ones. Two
signs now mark the file damaged:

* any statement of the store that SQLite fails with SQLITE_CORRUPT or SQLITE_NOTADB
  ("database disk image is malformed", "file is not a database"), whichever page it read;
* the file's header, read at the same moments as the ``stat`` above (one ``pread`` of 24
  bytes on a descriptor held open and one comparison: ~0.7 µs here, against 50-80 µs for
  a commit): its magic string, page size and payload fractions never change while SQLite
  owns the file, so other bytes there mean someone else wrote over its first page. Damage deeper in the file is found when a statement
  reads it (SQLite checks each page it loads); a full ``PRAGMA quick_check`` reads every
  page (0.15 s for 200,000 jobs, cached; every process would repeat it), so it is left to
  the operator, and the message says how.

The first sign is final: the store reports it once (``on_lost``, which the facade turns
into a ``job:error`` event) and fails every later operation with the same
``ConnectionError``. Reopening silently would be worse: jobs already handed out by the old
file could run again, and the caller would never learn that acknowledged work was lost.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import threading
from collections.abc import Callable

from ...errors import StoreDamagedError, StoreLostError
from .heldfiles import held_fd


class FileLostError(StoreLostError):
    """The database file was deleted or replaced while this process had it open."""


class FileDamagedError(StoreDamagedError):
    """The database file was found damaged while this process had it open."""


#: The primary result codes that mean the file's bytes are not what SQLite wrote.
SQLITE_CORRUPT = 11
SQLITE_NOTADB = 26
#: ... except a virtual table's own complaint, which says nothing about the file.
SQLITE_CORRUPT_VTAB = SQLITE_CORRUPT | (1 << 8)
#: What SQLite says for those, when an error carries no code.
_DAMAGE_WORDS = ("database disk image is malformed", "file is not a database", "malformed database schema")

#: The header's fixed fields (fileformat.html, "the database header"): the magic string and
#: the page size (bytes 0-17), and the payload fractions 64, 32, 32 (bytes 21-23). Bytes 18-19
#: (the journal mode) are left out: they may change legitimately.
_MAGIC = b"SQLite format 3\x00"
_FIXED = (slice(0, 18), slice(21, 24))
_HEADER_BYTES = 24


def is_damage_error(error: BaseException) -> bool:
    """Whether SQLite refused a statement because the file's bytes are damaged."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB) and code != SQLITE_CORRUPT_VTAB
    return any(words in str(error) for words in _DAMAGE_WORDS)


def _fixed_fields(header: bytes) -> bytes | None:
    if len(header) < _HEADER_BYTES or not header.startswith(_MAGIC):
        return None
    return b"".join(header[part] for part in _FIXED)


class FileIdentity:
    def __init__(self, path: str, display: str | None = None) -> None:
        """``path``: absolute, so a later ``os.chdir`` does not look like a deleted file;
        ``display``: the path as the user gave it, for the message."""
        self.path = path
        self.display = display or path
        self._identity: tuple[int, int] | None = None
        self._fd = -1  # the opened file itself, for its header
        self._header: bytes | None = None  # its fixed fields at capture, None if unreadable
        self._last_header = b""  # the whole header last read (the fast path compares this)
        self._lost: StoreLostError | None = None
        self._lock = threading.Lock()
        self._on_lost: Callable[[StoreLostError], None] | None = None

    def capture(self) -> None:
        """Remember which file the path names now, and its header (call once the file is open)."""
        stat = os.stat(self.path)
        identity = (stat.st_dev, stat.st_ino)
        fd = held_fd(self.path)
        try:
            header = os.pread(fd, _HEADER_BYTES, 0)
        except OSError:
            header = b""
        self._identity = identity
        self._fd, self._header, self._last_header = fd, _fixed_fields(header), header

    def close(self) -> None:
        """Stop reading the file's header. The descriptor itself stays open (``_header_fd``)."""
        self._fd = -1

    def on_lost(self, listener: Callable[[StoreLostError], None] | None) -> None:
        """``listener`` is called once, from whichever thread noticed first."""
        self._on_lost = listener

    @property
    def lost(self) -> StoreLostError | None:
        return self._lost

    def raise_if_lost(self) -> None:
        """The free check (no system call): raise if a loss or damage was already noticed."""
        lost = self._lost
        if lost is not None:
            raise type(lost)(str(lost))

    def check(self) -> None:
        """Raise ``FileLostError`` if the path no longer names the opened file, or
        ``FileDamagedError`` if its header was overwritten (sticky)."""
        self.raise_if_lost()
        if self._identity is None:
            return
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            moved_to = self._moved_to()
            if moved_to is not None:
                raise self._fail(self._moved_error(moved_to)) from None
            raise self._fail(self._lost_error("was deleted")) from None
        except OSError:
            return  # e.g. a permission change on the directory: not evidence of a new file
        if (stat.st_dev, stat.st_ino) != self._identity:
            raise self._fail(self._lost_error("was replaced by another file"))
        self._check_header()

    def _check_header(self) -> None:
        fd, expected = self._fd, self._header
        if fd < 0 or expected is None:
            return
        try:
            header = os.pread(fd, _HEADER_BYTES, 0)
        except OSError:
            return  # an I/O error is the statements' to report, with SQLite's words
        if header == self._last_header:
            return  # the usual case: one comparison, no copies
        self._last_header = header
        if _fixed_fields(header) != expected:
            raise self._fail(self._damaged_error("its header was overwritten: the first bytes are not SQLite's"))

    def damaged(self, cause: BaseException) -> StoreLostError | None:
        """SQLite found the file damaged (``cause``): record it (sticky, reported once) and
        return the error to raise; None before the file is captured (the opener says it)."""
        if self._identity is None:
            return None
        return self._fail(self._damaged_error(" ".join(str(cause).split()) or type(cause).__name__))

    def _lost_error(self, what: str) -> FileLostError:
        return FileLostError(
            f"SQLite database {self.display} {what} while this process had it open; writes since then went "
            "to the old, unlinked file and are lost at exit, and jobs in the file now at that path are not "
            "seen; restart the process to open the current file"
        )

    def _moved_to(self) -> str | None:
        """Where the opened file is now, if it was renamed rather than deleted (Linux: the held
        descriptor's name); None when it is gone or this cannot be told."""
        fd = self._fd
        if fd < 0 or self._identity is None:
            return None
        try:
            # The descriptor is shared (heldfiles.py) and closed once its file leaves its path:
            # its number may name another file by now (a review found a message naming
            # b.db-shm). Only a descriptor still on our file, and a name that is that file, count.
            held = os.fstat(fd)
            name = os.readlink(f"/proc/self/fd/{fd}")
            there = os.stat(name)
        except OSError:
            return None
        ours = self._identity
        if (held.st_dev, held.st_ino) != ours or (there.st_dev, there.st_ino) != ours or name == self.path:
            return None
        return name

    def _moved_error(self, moved_to: str) -> FileLostError:
        """A rename is not a deletion: this process's last commits are in the WAL beside the old
        path, which SQLite will not write into a moved file. "was deleted ... restart the process"
        read as if nothing could be saved, and a restart made a new, empty store at the path and
        lost them (a resource-exhaustion probe); moving the file back keeps them."""
        wal = shlex.quote(self.display + "-wal")
        return FileLostError(
            f"SQLite database {self.display} was moved to {moved_to} while this process had it open; this "
            f"process stops writing. Its last commits are in {wal}, beside the old path: stop every process "
            f"using either path and move the file back (mv {shlex.quote(moved_to)} {shlex.quote(self.display)}) "
            "before anything opens the old path, or they are lost; then restart"
        )

    def _damaged_error(self, what: str) -> FileDamagedError:
        path = shlex.quote(self.display)
        return FileDamagedError(
            f"SQLite database {self.display} is damaged ({what}); this process stops using it. Stop every "
            f"process using the file, check it with: sqlite3 {path} 'PRAGMA integrity_check'; then restore "
            f"a backup, or keep what is readable with: sqlite3 {path} .recover | sqlite3 recovered.db"
        )

    def _fail(self, error: StoreLostError) -> StoreLostError:
        """Record ``error`` unless a verdict exists; return (a copy of) the verdict, to raise."""
        with self._lock:
            first = self._lost is None
            if first:
                self._lost = error
        if first and self._on_lost is not None:
            self._on_lost(error)
        lost = self._lost
        assert lost is not None
        return type(lost)(str(lost))

"""What SQLite's errors mean for an operator: the hint to add to words that say too little,
and the wrapping that turns a database error into the engine's ``ConnectionError``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ...errors import ConnectionError, MonqueError, StoreUnavailableError
from .busy import is_busy_error

#: SQLite says only "disk I/O error" for a write the system refused: a file grown past the
#: process's size limit (EFBIG), a failing or vanished device. The usual causes, to check.
DISK_IO_HINT = (
    " (the system refused a read or write: check free space, the file-size limit "
    "(ulimit -f) and that the file and its directory still exist)"
)


#: A damaged file ("database disk image is malformed"): what an operator can do about it.
CORRUPT_HINT = (
    " (the file is damaged: stop the processes using it, then restore a backup, or keep what is "
    "readable with: sqlite3 jobs.db .recover | sqlite3 recovered.db)"
)
#: "file is not a database": another kind of file at the path, or an encrypted database.
NOT_A_DATABASE_HINT = " (the file at that path is not a SQLite database, or is encrypted: check the URL's path)"


def error_hint(error: sqlite3.Error) -> str:
    """What to check for the SQLite errors whose own words say too little, or ``""``."""
    name = str(getattr(error, "sqlite_errorname", "") or "")
    if name.startswith("SQLITE_CORRUPT") or "disk image is malformed" in str(error):
        return CORRUPT_HINT
    if name == "SQLITE_NOTADB" or "file is not a database" in str(error):
        return NOT_A_DATABASE_HINT
    if "disk I/O error" in str(error):
        return DISK_IO_HINT
    if "unable to open database file" in str(error):
        return _unable_to_open_hint()
    return ""


def _unable_to_open_hint() -> str:
    """SQLite says "unable to open database file" for a folder it cannot write its -wal and
    -shm in, and as well for a process out of file descriptors (a worker at ``ulimit -n
    18``: a resource-exhaustion probe), which the words do not suggest."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        limit = ""
    else:
        limit = "" if soft == resource.RLIM_INFINITY else f", {soft} now"
    return (
        " (SQLite could not open the file or the -wal and -shm files beside it: check that its folder is "
        f"writable, and this process's open-file limit (ulimit -n{limit}))"
    )


#: SQLite's result codes for a store that cannot take an operation *now* (another connection's
#: lock, a full disk, the system refusing a read or write, out of memory or descriptors):
#: the same operation may pass later (``StoreUnavailableError``).
_PASSING = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_FULL", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_NOMEM")


def passes(error: sqlite3.Error) -> bool:
    """Whether ``error`` says the store cannot take an operation now, not that it never will."""
    name = str(getattr(error, "sqlite_errorname", "") or "")
    if name:
        return name.startswith(_PASSING)
    text = str(error)
    return is_busy_error(error) or any(words in text for words in ("disk is full", "disk I/O error", "unable to open"))


def wrap_error(error: BaseException, describe: Callable[[], str]) -> BaseException:
    """Database errors become ConnectionError with the cause kept; ours pass through."""
    if isinstance(error, MonqueError):
        return error
    if isinstance(error, sqlite3.Error):
        hint = error_hint(error)
        kind = StoreUnavailableError if passes(error) else ConnectionError
        wrapped = kind(f"{describe()}: {error}{hint}")
        wrapped.__cause__ = error
        return wrapped
    return error

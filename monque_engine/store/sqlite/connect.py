"""Connections to the store's file, and the checks before one is made.

Every way a path can be wrong (a directory, a device, a missing directory, a read-only
mount, missing permissions, a file that is not ours or too new) becomes one clear sentence
before SQLite gives its own ("unable to open database file"); connections then get the
pragmas the store relies on (WAL, the settings' synchronous and cache, ``query_only`` for
readers, or SQLite's ``mode=ro`` for a read-only store).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from ...errors import ConnectionError
from ..filekind import special_file_kind
from . import migrations
from .busy import retry_while_busy
from .identity import FileIdentity
from .queries import register_functions
from .runner import ReadRunner, WriteRunner
from .schema import Tables
from .sqlerrors import error_hint
from .url import SqliteSettings


def connect(
    settings: SqliteSettings,
    file: str,
    describe: Callable[[], str],
    *,
    busy_timeout: float,
    autocheckpoint: bool = True,
    write: bool = False,
) -> sqlite3.Connection:
    """A connection to ``file`` as the store uses them: WAL, the settings' pragmas, and
    ``query_only`` unless it is for writing."""
    if settings.read_only:
        return connect_read_only(settings, file, busy_timeout)
    conn = sqlite3.connect(file, isolation_level=None, check_same_thread=False, timeout=settings.busy_timeout)
    try:
        register_functions(conn)
        retry_while_busy(lambda: _use_wal(conn, describe), settings.busy_timeout)
        conn.execute(f"PRAGMA synchronous={settings.synchronous.upper()}")
        conn.execute(f"PRAGMA cache_size=-{settings.cache_mb * 1024}")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("PRAGMA journal_size_limit=67108864")  # truncate the WAL back to 64 MB after checkpoints
        if not autocheckpoint:
            conn.execute("PRAGMA wal_autocheckpoint=0")
        if not write:
            conn.execute("PRAGMA query_only=1")
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
    except BaseException:
        conn.close()
        raise
    return conn


class Runners:
    """How one opened file's runners connect: the store's reader threads, its write thread
    (and that thread's checkpointer), and the change feed's poller. Built by
    ``SqliteStore.open`` once the file's identity is captured."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        settings: SqliteSettings,
        file: str,
        describe: Callable[[], str],
        identity: FileIdentity,
    ) -> None:
        self._loop, self._settings, self._file = loop, settings, file
        self._describe, self._identity = describe, identity

    def reading(self) -> sqlite3.Connection:
        """A reader's connection (``query_only``), waiting up to the busy timeout."""
        return connect(self._settings, self._file, self._describe, busy_timeout=self._settings.busy_timeout)

    def writing(self) -> sqlite3.Connection:
        """A write connection that never waits (the write runner retries) and never
        checkpoints inside its commits: the runner's Checkpointer does, on one of these of its
        own (checkpointer.py)."""
        return connect(self._settings, self._file, self._describe, busy_timeout=0, autocheckpoint=False, write=True)

    def reader(self, threads: int = 2) -> ReadRunner:
        """The store's readers (two threads), or with ``threads=1`` the change feed's own
        (its streams' pulls never queue beside the store's reads: feed.py)."""
        identity, settings = self._identity, self._settings
        return ReadRunner(
            self._loop,
            self.reading,
            self._describe,
            threads,
            settings.busy_timeout,
            verify=identity.check,
            damaged=identity.damaged,
        )

    def writer(self, committed: Callable[[], None]) -> WriteRunner:
        """The write runner; ``committed`` is called after each commit (the feed's wake-up)."""
        identity, settings = self._identity, self._settings
        inline = self.writing if settings.inline_writes and settings.synchronous != "full" else None
        return WriteRunner(
            self._loop,
            self.writing,
            self._describe,
            settings.busy_timeout,
            inline,
            committed,
            verify=identity.check,
            precheck=identity.raise_if_lost,
            checkpoint_connect=self.writing,
            db_path=os.path.realpath(self._file),  # where SQLite puts -shm
            damaged=identity.damaged,
        )


def connect_read_only(settings: SqliteSettings, file: str, busy_timeout: float) -> sqlite3.Connection:
    """SQLite's ``mode=ro``: the file is never created, switched to WAL or written.

    SQLite still needs the ``-wal`` and ``-shm`` side files to read a WAL database safely
    while other processes write it, so it creates them (empty) if they are missing and
    the directory allows; the database file's bytes and mtime are never touched.
    ``immutable=1`` would avoid the side files but would read a file that others are
    changing as if it could not change, which is wrong for a live queue.
    """
    uri = f"file:{quote(file)}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=settings.busy_timeout)
    try:
        register_functions(conn)
        conn.execute("PRAGMA query_only=1")
        conn.execute(f"PRAGMA cache_size=-{settings.cache_mb * 1024}")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
    except BaseException:
        conn.close()
        raise
    return conn


def probe(settings: SqliteSettings, tables: Tables) -> None:
    """Before anything changes the file: refuse one that is not ours or is too new.

    Runs on a connection that only reads (``query_only``; no WAL switch, no tables), so
    another application's database is left exactly as it was. Not SQLite's ``mode=ro``:
    that would leave empty ``-wal``/``-shm`` files next to a WAL file it refuses.
    """
    path = settings.path
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return
    conn = sqlite3.connect(
        f"file:{quote(os.path.abspath(path))}?mode=rw",
        uri=True,
        isolation_level=None,
        timeout=settings.busy_timeout,
    )
    try:
        conn.execute("PRAGMA query_only=1")
        version = retry_while_busy(lambda: migrations.inspect(conn, tables, path), settings.busy_timeout)
        if version is not None:
            migrations.check_version(version, path)
    finally:
        conn.close()


def _use_wal(conn: sqlite3.Connection, describe: Callable[[], str]) -> None:
    """Switch the file to WAL once; later connections only check. Switching takes a lock
    that busy processes make contended, so it is not repeated by every connection."""
    (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
    if str(mode).lower() != "wal":
        (mode,) = conn.execute("PRAGMA journal_mode=WAL").fetchone()
    mode = str(mode).lower()
    if mode != "wal":
        raise ConnectionError(
            f"{describe()} could not switch to WAL journaling (got {mode!r}); "
            "WAL needs a local file system that supports shared memory"
        )


def preflight(settings: SqliteSettings) -> None:
    """Turn the usual ways a path is wrong into one clear sentence each."""
    path = Path(settings.path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ConnectionError(f"Cannot open {path}: it is a directory; name a file such as {path / 'monque.db'}")
    special = special_file_kind(path)
    if special is not None:
        raise ConnectionError(
            f"Cannot open {path}: it is {special}, not a file; a SQLite store is a regular file "
            "(e.g. sqlite:///jobs.db)"
        )
    if settings.must_exist and not path.exists():
        how = "a read-only open (mode=ro)" if settings.read_only else "mode=rw"
        raise ConnectionError(
            f"Cannot open SQLite database {path}: the file does not exist, and {how} never creates one; check the path"
        )
    read_only_fs = _on_read_only_file_system(parent)
    # SQLite keeps a WAL database's -wal and -shm beside the file a link names, and makes them
    # on open: a folder it cannot write refused a store with no side files left (after a clean
    # close) as "attempt to write a readonly database", mode=ro too (a CLI probe).
    real = Path(os.path.realpath(path))
    side_files = all(Path(f"{real}{suffix}").exists() for suffix in ("-wal", "-shm"))
    folder_closed = path.exists() and not side_files and not os.access(real.parent, os.W_OK | os.X_OK)
    if settings.read_only:
        if not os.access(path, os.R_OK):
            raise ConnectionError(f"Cannot open {path}: permission denied (it must be readable)")
        if read_only_fs and not side_files:
            raise ConnectionError(
                f"Cannot open {path} read-only: it is on a read-only file system, and SQLite cannot create "
                "the -wal and -shm files it needs to read a WAL database there; open it while a worker has "
                "it open through a writable mount, or copy it to a writable directory"
            )
        if folder_closed:
            raise ConnectionError(_folder_not_writable(path, real))
        return
    if not parent.is_dir():
        raise ConnectionError(
            f"Cannot create SQLite database {path}: directory {parent} does not exist (mkdir -p {parent})"
        )
    if read_only_fs:
        raise ConnectionError(
            f"Cannot {'open' if path.exists() else 'create'} {path}: directory {parent} is on a read-only file "
            "system; remount it read-write, or use a writable directory"
        )
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise ConnectionError(f"Cannot open {path}: permission denied (it must be readable and writable)")
    if folder_closed:
        raise ConnectionError(_folder_not_writable(path, real))
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise ConnectionError(f"Cannot create {path}: directory {parent} is not writable")


def explain_open_error(
    settings: SqliteSettings, error: BaseException, describe: Callable[[], str]
) -> tuple[ConnectionError, sqlite3.DatabaseError] | None:
    """The sentence an open that failed with ``error`` raises instead, and its cause; None
    when ``error`` is raised as it is."""
    if isinstance(error, sqlite3.DatabaseError):
        return open_error(settings, error, describe), error
    # The runners hand back sqlite3 errors already wrapped; a file that is not a database
    # (or is damaged) still deserves the sentence that says so.
    cause = error.__cause__
    if (
        isinstance(error, ConnectionError)
        and isinstance(cause, sqlite3.DatabaseError)
        and any(text in str(cause) for text in ("not a database", "malformed"))
    ):
        return open_error(settings, cause, describe), cause
    return None


def open_error(settings: SqliteSettings, error: sqlite3.DatabaseError, describe: Callable[[], str]) -> ConnectionError:
    text = str(error)
    if "not a database" in text or "malformed" in text:
        return ConnectionError(
            f"{settings.path} is not a SQLite database or is corrupt ({text}); "
            "point the URL at another file, or restore this one from a backup"
        )
    return ConnectionError(f"Cannot open {describe()}: {text}{error_hint(error)}")


def _folder_not_writable(path: Path, real: Path) -> str:
    return (
        f"Cannot open {path}: directory {real.parent} is not writable, and SQLite keeps its {real.name}-wal "
        "and -shm files there (a worker with it open makes them); make the directory writable"
    )


def _on_read_only_file_system(directory: Path) -> bool:
    """Whether ``directory`` is on a file system mounted read-only (so the root user, who
    passes every permission check, is told the real reason instead of SQLite's "unable to
    open database file" or "attempt to write a readonly database")."""
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows), or the directory is missing
        return False

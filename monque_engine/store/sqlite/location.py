"""Where a SQLite URL points, looked at without opening the store (``locate_store``).

A tool that only reads (``monque-tui export``, ``paused``) must not create a database where a
path was mistyped, nor six tables where a collection name was: it asks this first. The file
is only stat-ed and, when it is a regular file, its table list read without writing:

* no ``-wal`` file beside it (no process has it open, and every commit is in the file):
  ``immutable=1``, which reads the file alone and makes no side files;
* a ``-wal`` file (a process has it open, or one ended without checkpointing): ``mode=ro``,
  which reads the commits still in the WAL too (a collection made a moment ago may be
  there only) and uses the side files that are already there.

Neither ever writes the database file. (``mode=ro`` alone would leave empty ``-wal`` and
``-shm`` files beside a closed store; ``immutable=1`` alone would miss commits in a WAL.)
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from ..base import StoreLocation
from .url import parse_sqlite_url


def locate(url: str) -> StoreLocation:
    """The file ``url`` names, whether something is there, and the Monque collections in it."""
    settings = parse_sqlite_url(url)
    path = settings.path
    collections = monque_collections(path) if os.path.isfile(path) else None
    return StoreLocation("sqlite", path, settings.read_only, os.path.exists(path), collections)


def _read_only(path: str) -> sqlite3.Connection:
    mode = "mode=ro" if os.path.exists(f"{path}-wal") else "immutable=1"
    return sqlite3.connect(f"{Path(path).resolve().as_uri()}?{mode}", uri=True)


def monque_collections(path: str) -> tuple[str, ...] | None:
    """The collections in the database at ``path`` (a table ``X`` with its ``X_meta`` beside
    it), sorted; None when it cannot be read (not a database, locked, damaged): the store's
    own open then says what is wrong."""
    try:
        with contextlib.closing(_read_only(path)) as db:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error:
        return None
    return tuple(sorted(name for name in tables if f"{name}_meta" in tables))


def schema_version(path: str, collection: str) -> int | None:
    """Collection ``collection``'s Monque schema version in the file at ``path``, read the same
    way (never writing); None when it cannot be read. ``monque-tui check`` compares it with
    the version this code knows: a newer file is one no worker of this version can open."""
    try:
        with contextlib.closing(_read_only(path)) as db:
            row = db.execute(f'SELECT value FROM "{collection}_meta" WHERE key = ?', ("schema_version",)).fetchone()
    except sqlite3.Error:
        return None
    if row is None:
        return None
    (value,) = row
    try:
        return int(value)
    except (TypeError, ValueError):
        return None

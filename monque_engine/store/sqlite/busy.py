"""Waiting for SQLite's write lock, and retrying what met another connection's lock: in
short sleeps of our own instead of SQLite's busy handler (which sleeps 1, 2, 5, 10 ... ms)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from ...errors import ConnectionError, StoreUnavailableError

T = TypeVar("T")


def is_busy_error(error: BaseException) -> bool:
    return isinstance(error, sqlite3.OperationalError) and ("locked" in str(error) or "busy" in str(error))


def begin_immediate(
    conn: sqlite3.Connection, timeout: float, describe: Callable[[], str], stop: threading.Event | None = None
) -> None:
    """Take the write lock, retrying with short sleeps instead of SQLite's 1 ms+ busy handler.

    SQLite's default handler sleeps 1, 2, 5, 10 … ms between attempts, which throttles
    several worker processes on one file far below what the disk can do. ``stop`` set (the
    store is closing) ends the wait at once: a command stopped by SIGTERM while another
    process held the lock waited out the whole busy timeout before it could exit.
    """
    deadline = time.monotonic() + timeout
    delay = 0.00005
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if not is_busy_error(error):
                raise
            if stop is not None and stop.is_set():
                raise ConnectionError(
                    f"{describe()} was closed while a write waited for the lock another connection holds; "
                    "nothing was written"
                ) from error
            if time.monotonic() >= deadline:
                raise StoreUnavailableError(
                    f"{describe()} stayed locked by another connection for more than {timeout:g} s; "
                    "another process is holding a long write transaction (raise busy_timeout in the URL "
                    "with ?busy_timeout=SECONDS, or find the process holding the lock)"
                ) from error
            time.sleep(delay)
            delay = min(delay * 2, 0.002)


def retry_while_busy(action: Callable[[], T], timeout: float, stop: threading.Event | None = None) -> T:
    """Run ``action``, retrying with short sleeps while SQLite reports the file busy.

    For the few statements outside a transaction that can still meet a lock (switching the
    journal mode, for one, while other processes write), where SQLite's own busy handler is
    not always consulted. ``stop`` set ends the retries (the store is closing).
    """
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        try:
            return action()
        except sqlite3.OperationalError as error:
            if not is_busy_error(error) or time.monotonic() >= deadline:
                raise
            if stop is not None and stop.is_set():
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

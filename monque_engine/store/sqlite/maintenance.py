"""The store's background upkeep: the change table kept a window (not a history), and a
deleted or replaced file noticed even while the process neither reads nor writes.

The upkeep writes in bounded transactions (``TRIM_CHUNK`` rows each, a pause between): after
a retention purge had written ~680k feed rows, the trim deleted them in one statement and held
the write lock for seconds, while other processes' claims and heartbeats waited (issue 34).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

from ...errors import ConnectionError
from .journal import Journal
from .url import SqliteSettings

#: Seconds between checks that the path still names the opened file, for a process that
#: neither reads nor writes (one stat each; busy processes check on every operation).
IDENTITY_CHECK_INTERVAL = 1.0
#: Rows one upkeep transaction deletes at most (feed rows, emptied error groups' counts): a
#: few ms of the write lock here, what another process's claim or heartbeat waits for at most.
TRIM_CHUNK = 2000
#: The pause after each chunk: as long as the chunk took, within these bounds, so the other
#: processes' writers (whose busy handlers sleep between tries) get the lock in between.
TRIM_PAUSE_MIN = 0.005
TRIM_PAUSE_MAX = 0.1

Write = Callable[[Callable[[sqlite3.Connection], Any]], Awaitable[Any]]


async def prune(write: Write, journal: Journal, keep: int) -> int:
    """The journal's housekeeping, a bounded chunk per transaction: the error counts of
    emptied groups dropped, then the feed trimmed to its last ``keep`` rows (how many went).
    The trim's end is fixed by its first transaction, so it ends while writers keep adding."""
    loop = asyncio.get_running_loop()

    async def pause(began: float) -> None:
        await asyncio.sleep(min(max(loop.time() - began, TRIM_PAUSE_MIN), TRIM_PAUSE_MAX))

    while True:
        began = loop.time()
        if await write(lambda conn: journal.prune_error_counts(conn, TRIM_CHUNK)) < TRIM_CHUNK:
            break
        await pause(began)
    through: int | None = await write(lambda conn: journal.feed_trim_target(conn, keep))
    removed = 0
    while through is not None:
        began = loop.time()
        chunk: int = await write(lambda conn: journal.trim_feed_chunk(conn, through, TRIM_CHUNK))
        if chunk == 0:
            break
        removed += chunk
        await pause(began)
    return removed


async def maintain(
    settings: SqliteSettings,
    health_error: Callable[[], ConnectionError | None],
    prune: Callable[[], Awaitable[int]],
) -> None:
    """Run until the file is found lost (reported once through ``on_fatal``; every later
    operation raises): check its identity every second, and trim the feed every
    ``maintenance_interval`` on a writable store (a locked file is not fatal here: the next
    round tries again)."""
    loop = asyncio.get_running_loop()
    prune_at = loop.time() + settings.maintenance_interval
    while True:
        await asyncio.sleep(min(IDENTITY_CHECK_INTERVAL, settings.maintenance_interval))
        if health_error() is not None:
            return
        if settings.read_only or loop.time() < prune_at:
            continue
        prune_at = loop.time() + settings.maintenance_interval
        try:
            await prune()
        except ConnectionError:
            continue

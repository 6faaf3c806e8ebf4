"""The store's background upkeep: the change table kept a window (not a history), and a
deleted or replaced file noticed even while the process neither reads nor writes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ...errors import ConnectionError
from .url import SqliteSettings

#: Seconds between checks that the path still names the opened file, for a process that
#: neither reads nor writes (one stat each; busy processes check on every operation).
IDENTITY_CHECK_INTERVAL = 1.0


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

"""The console's SQLite settings (issue 10 soak): a small page cache (RSS grew with the engine's
64 MB cache per connection) and a feed that looks for commits every 50 ms, not every 2 ms.

``cache_mb`` is a SQLite URL parameter; the console opens its store with 8 MB per connection
unless the URL names its own. Checked on real files, by asking each connection's PRAGMA.
"""

from __future__ import annotations

from typing import Any

import pytest

from monque_engine import Monque
from monque_engine.store import InvalidStoreUrlError
from monque_engine.store.sqlite import parse_sqlite_url
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.session import ConsoleSession
from monque_tui.console.session.core import CONSOLE_CACHE_MB


async def _cache_kib(monque: Monque) -> int:
    store: Any = monque.store
    return -int(await store._reader.run(lambda conn: conn.execute("PRAGMA cache_size").fetchone()[0]))


async def _console_cache_kib(url: str, **config: Any) -> int:
    session = ConsoleSession(ConsoleConfig(url=url, **config), live=False)
    await session.open()
    try:
        assert session.monque is not None
        return await _cache_kib(session.monque)
    finally:
        await session.close()


async def test_the_console_reads_with_a_small_cache_and_the_engine_keeps_its_default(store_url: str) -> None:
    engine = Monque(store_url, recover_stale_jobs=False)
    await engine.initialize()
    try:
        assert await _cache_kib(engine) == 64 * 1024
    finally:
        await engine.close()
    assert await _console_cache_kib(store_url) == CONSOLE_CACHE_MB * 1024
    assert await _console_cache_kib(store_url, read_only=True) == CONSOLE_CACHE_MB * 1024
    assert await _console_cache_kib(store_url + "?cache_mb=16") == 16 * 1024  # the URL's own wins


def test_cache_mb_is_a_url_parameter_with_a_clear_error() -> None:
    assert parse_sqlite_url("sqlite:///x.db?cache_mb=8").cache_mb == 8
    assert parse_sqlite_url("sqlite:///x.db").cache_mb == 64
    for bad in ("0", "nan", "9999", "lots"):
        with pytest.raises(InvalidStoreUrlError, match="cache_mb"):
            parse_sqlite_url(f"sqlite:///x.db?cache_mb={bad}")


def test_console_header_url_is_the_one_typed(store_url: str) -> None:
    """The small cache and the calmer feed are overrides, not URL changes: the header shows what was typed."""
    from monque_tui.console.session.core import CONSOLE_FEED_INTERVAL_S, console_store

    store: Any = console_store(store_url)
    assert store.display_url == store_url and store.settings.cache_mb == CONSOLE_CACHE_MB
    # The feed looks for other processes' commits every 50 ms, not the workers' 2 ms.
    assert store.settings.feed_interval == CONSOLE_FEED_INTERVAL_S
    assert console_store(store_url + "?feed_interval_ms=5").settings.feed_interval == 0.005  # type: ignore[union-attr]
    assert console_store("mongodb://h/db") == "mongodb://h/db"


def test_console_leaves_the_feed_trim_to_the_workers(store_url: str) -> None:
    """Every process that opens a file trims its feed, whoever comes first doing the deletes:
    beside a drain the console did about half of them (its writer and checkpointer a third of
    its CPU). It trims once a minute, the workers every 10 s."""
    from monque_engine.store import open_store
    from monque_tui.console.session.core import CONSOLE_MAINTENANCE_INTERVAL_S, console_store

    engine_default: Any = open_store(store_url)
    console: Any = console_store(store_url)
    assert console.settings.maintenance_interval == CONSOLE_MAINTENANCE_INTERVAL_S
    assert console.settings.maintenance_interval >= 6 * engine_default.settings.maintenance_interval

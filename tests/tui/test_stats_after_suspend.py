"""Counts resume after the console was stopped in the middle of one (probe 6).

The stats timer backs off on big stores: after a count that took t it waits 30 t. The cost is
wall time, so a console stopped mid-count (ctrl+z, SIGSTOP, a paused VM) for 60 s measured a
60 s count and then kept its counts for 30 minutes under "● live", while a busy queue moved
thousands of jobs a second. The wait is now capped. A real session on a real SQLite file;
the stop is a count that returns 60 s (of a stand-in monotonic clock) after it began.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from monque_engine import Monque
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.session import ConsoleSession, core


async def test_a_count_spanning_a_long_stop_does_not_freeze_the_counts(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    producer = Monque(store_url, recover_stale_jobs=False)
    await producer.initialize()
    await producer.enqueue_many([{"name": "task", "data": {"n": n}} for n in range(3)])
    now = [1_000.0]
    monkeypatch.setattr(core, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    # No engine-side stats cache: each refresh reads the store.
    session = ConsoleSession(ConsoleConfig(url=store_url, monque_options={"stats_cache_ttl": 0}))
    await session.open()
    try:
        real = session.monque.get_queue_stats  # type: ignore[union-attr]

        async def stopped_midway(*args: Any, **kwargs: Any) -> Any:
            stats = await real(*args, **kwargs)
            now[0] += 60.0  # the process was stopped for a minute during the count
            return stats

        session.monque.get_queue_stats = stopped_midway  # type: ignore[union-attr,method-assign]
        await session.refresh_stats()
        assert session.stats is not None and session.stats.total == 3
        session.monque.get_queue_stats = real  # type: ignore[union-attr,method-assign]

        await producer.enqueue_many([{"name": "task", "data": {"n": n}} for n in range(4)])
        now[0] += 31.0  # half a minute later (it was 30 minutes)
        await session.refresh_stats_if_due()
        assert session.stats.total == 7
    finally:
        await session.close()
        await producer.close()

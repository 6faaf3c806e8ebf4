"""Queues screen cells are never cut when their values grow ("10400." for 10,400 done/min).

DataTable sizes a column by the rows it first holds; the screen updates cells in place, and a
value that outgrew its column was cut at the right edge. Real console, real store, Pilot.
"""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable

from monque_engine import Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.clock import frozen_clock
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.formatting import per_minute
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import wait_for
from .test_fleet_queues import queues_screen


async def test_a_count_that_outgrows_its_column_widens_it(seeded_url: str) -> None:
    config = ConsoleConfig(url=seeded_url, monque_options={"stats_cache_ttl": 0})  # each load counts afresh
    app = MonqueConsole(config, clock=frozen_clock(SEED_NOW_MS))
    async with app.run_test(size=(200, 40)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        screen = await queues_screen(app, pilot)
        table = screen.query_one(DataTable)
        name = "send-email"
        before = str(table.get_cell(name, "due"))
        assert len(before) <= 2  # a few seeded jobs: the column was sized for a short number
        other = Monque(seeded_url, recover_stale_jobs=False)
        await other.initialize()
        try:
            await other.enqueue_many([{"name": name, "data": {"i": i}} for i in range(12_000)])
        finally:
            await other.close()
        loads = screen.loads
        screen.load()
        await wait_for(lambda: screen.loads > loads)
        await pilot.pause()
        shown = str(table.get_cell(name, "due"))
        assert shown.startswith("12,0")
        column = next(c for c in table.columns.values() if c.key.value == "due")
        assert column.content_width >= len(shown)  # the whole number fits: not "12,00"


def test_rates_per_minute_stay_short_and_whole() -> None:
    assert per_minute(0.4) == "0.4" and per_minute(12.25) == "12.2" and per_minute(99.9) == "99.9"
    assert per_minute(10_400.0) == "10,400" and per_minute(150.6) == "151"

"""The Queues screen's SCHEDULE is shown whole at 160 columns (issue 40: "SCHEDULE is cut even at
160 columns"; after columns were dropped whole, it was the first to go, being last by priority).
At 80 columns whole columns are still dropped, never cut. Real store, real console, Pilot."""

from __future__ import annotations

import asyncio

from monque_engine import Monque
from monque_engine.cron import describe
from monque_tui.console.app import MonqueConsole
from monque_tui.console.clock import frozen_clock
from monque_tui.console.config import ConsoleConfig
from monque_tui.demo.seed import SEED_NOW_MS

from .test_confirm_width import screen_text
from .test_fleet_queues import queues_screen

#: Not put in words by ``describe``: the whole cron text is the cell.
CRON = "*/5 9-17 * * 1-5"
NAME = "payment.capture"


async def _with_cron_job(url: str) -> None:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        await monque.schedule(CRON, NAME, {"batch": 1})
    finally:
        await monque.close()


async def _queues_text(url: str, size: tuple[int, int]) -> tuple[tuple[str, ...], str]:
    app = MonqueConsole(ConsoleConfig(url=url), clock=frozen_clock(SEED_NOW_MS))
    async with app.run_test(size=size) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        screen = await queues_screen(app, pilot)
        await pilot.pause()
        return screen.shown_columns, screen_text(app)


async def test_schedule_is_whole_at_160_columns_and_dropped_whole_at_80(seeded_url: str) -> None:
    await _with_cron_job(seeded_url)
    cell = describe(CRON)
    assert CRON in cell  # the cron text itself, not words for it

    columns, text = await _queues_text(seeded_url, (160, 30))
    assert "schedule" in columns
    assert "SCHEDULE" in text
    row = next(line for line in text.splitlines() if NAME in line)
    assert cell in row, row  # whole: "cron */5 9-17 * * 1-5 (UTC)", not "cron */5 9-1…"
    assert describe("0 0 * * *") in text  # the seed's nightly-report schedule, whole too

    columns, text = await _queues_text(seeded_url, (80, 24))
    assert "schedule" not in columns and "SCHEDULE" not in text
    header = next(line for line in text.splitlines() if line.lstrip().startswith("NAME"))
    # Every column on screen has its whole heading; the ones that did not fit are not there at all.
    assert header.split() == " ".join(c.upper() for c in columns).split(), header
    assert CRON not in text and "cron */5" not in text

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

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text
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


LONG_NAME = "billing.invoices.generate-monthly-statement-pdf-for-enterprise-customers"


async def test_a_long_name_is_cut_in_its_middle_not_the_health_columns(seeded_url: str) -> None:
    """At 80 columns a 72-character job name left Queues with its NAME column alone, and its
    title wrapped over three lines listing the names with no consumer (review). Now the name
    is cut in its middle so DUE, OLDEST DUE and CONSUMERS stay beside it, the title is one
    line, and ``z`` shows the name whole."""
    producer = Monque(seeded_url, recover_stale_jobs=False)
    await producer.initialize()
    try:
        await producer.enqueue_many([{"name": LONG_NAME, "data": {"i": i}} for i in range(1_234)])
    finally:
        await producer.close()
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        await queues_screen(app, pilot)
        await wait_for(lambda: any("enterprise-customers" in line for line in screen_text(app).splitlines()))
        lines = screen_text(app).splitlines()
        header = next(line for line in lines if line.strip().startswith("NAME"))
        for column in ("DUE", "OLDEST DUE", "CONSUMERS"):
            assert column in header, "\n".join(lines)
        row = next(line for line in lines if "enterprise-customers" in line)
        assert row.strip().startswith("billing.invoice") and "…" in row and "1,234" in row, row
        title = lines[0]
        assert "Queues" in title and "due, no live consumer" in title and LONG_NAME not in title, title
        assert "NAME" not in lines[0] and lines.index(header) <= 2, "\n".join(lines)  # a one-line title
        await pilot.press("z")
        await wait_for(lambda: any(LONG_NAME in line for line in screen_text(app).splitlines()))


def test_a_name_of_wide_characters_is_cut_to_the_columns_width() -> None:
    """A middle cut by characters left a name of CJK characters twice as wide as its column
    (a review): such a name is cut by cells, at its end."""
    from rich.text import Text

    from monque_tui.console.formatting import middle_cut_text

    for name in ("请求发送电子邮件给客户然后等待回应的作业名称很长", "billing.invoices.generate-monthly-statement"):
        cut = middle_cut_text(Text(name), 20)
        assert cut.cell_len <= 20 and "…" in cut.plain, cut.plain

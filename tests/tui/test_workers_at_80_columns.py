"""Issue 40, friction 3: at 80 columns the Workers table hid the heartbeat age and HELD behind
a 220-column NAMES cell, and ``z`` did nothing there. What decides a release (state, id,
heartbeat, held) now comes first, a column that does not fit is dropped whole, NAMES shows
whole names that fit and "+N more", and ``z`` shows every column and every name, the table
scrolling sideways. Pilot on a real SQLite file.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable

from monque_engine.job import InstanceRecord
from monque_tui.console.screens.workers import NAMES_WIDTH, WorkersScreen, names_text
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import running_console, wait_for

NAMES = {f"billing.invoice-step-{n:02d}": 4 for n in range(15)}


def _record() -> InstanceRecord:
    return InstanceRecord(
        id="wide-worker",
        host="h",
        pid=1,
        version="monque_engine",
        started_at_ms=SEED_NOW_MS,
        heartbeat_interval_ms=30_000,
        workers=NAMES,
        running=0,
        processed=0,
        failed=0,
        last_heartbeat_ms=SEED_NOW_MS,
    )


async def _workers_with_a_wide_worker(app: Any, pilot: Any) -> WorkersScreen:
    """Register an instance consuming 15 names, then open the Workers screen on it."""
    monque = app.session.monque
    assert monque is not None
    await monque.store.upsert_instance(_record())
    await pilot.press("W")
    await wait_for(lambda: isinstance(app.screen, WorkersScreen) and "wide-worker" in app.screen.rows)
    screen = app.screen
    assert isinstance(screen, WorkersScreen)
    return screen


def test_names_text_keeps_whole_names_and_says_how_many_more() -> None:
    short = names_text(NAMES, NAMES_WIDTH)
    assert short == "billing.invoice-step-00×4 +14 more"
    assert names_text(NAMES, None).count("×4") == 15
    assert names_text({"a": 1, "b": 2}, NAMES_WIDTH) == "a×1, b×2"
    assert names_text({"x" * 40: 1}, NAMES_WIDTH) == "x" * 40 + "×1"  # one name is never cut


async def test_at_80_columns_the_heartbeat_and_held_show_and_z_shows_every_name(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        screen = await _workers_with_a_wide_worker(app, pilot)
        table = screen.query_one(DataTable)

        def widths() -> dict[str, int]:
            return {column.key.value: column.get_render_width(table) for column in table.columns.values()}

        # What decides a release comes first and is on screen; a column that does not fit whole
        # is dropped whole (NAMES here), never cut at the edge.
        shown = list(widths())
        assert shown[:5] == ["state", "id", "heartbeat", "held", "running"]
        assert sum(widths().values()) <= 80 - 2
        assert "names" not in shown
        await pilot.press("z")  # every column, every name whole: the table scrolls sideways
        await wait_for(lambda: "names" in widths() and str(table.get_cell("wide-worker", "names")).count("×4") == 15)
        assert list(widths()) == list(screen.COLUMNS)
        # Failed attempts since the instance started, named apart from the failed jobs (issue 40).
        assert "FAILED ATTEMPTS" in [str(column.label) for column in table.columns.values()]
        assert screen.cursor_key is not None
        await pilot.press("z")  # back to what fits
        await wait_for(lambda: "names" not in widths())
        assert sum(widths().values()) <= 80 - 2
    # At a width where it fits, NAMES shows whole names and how many more.
    async with running_console(seeded_url, size=(120, 30)) as (app, pilot):
        table = (await _workers_with_a_wide_worker(app, pilot)).query_one(DataTable)
        assert str(table.get_cell("wide-worker", "names")).endswith("+14 more")

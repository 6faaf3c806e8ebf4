"""Issue 40, friction 3: at 80 columns the Workers table hid the heartbeat age and HELD behind
a 220-column NAMES cell, and ``z`` did nothing there. What decides a release (state, id,
heartbeat, held) now comes first, NAMES shows whole names that fit and "+N more", and ``z``
shows every name, the table scrolling sideways. Pilot on a real SQLite file.
"""

from __future__ import annotations

from textual.widgets import DataTable

from monque_engine.job import InstanceRecord
from monque_tui.console.screens.workers import NAMES_WIDTH, WorkersScreen, names_text
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import running_console, wait_for

NAMES = {f"billing.invoice-step-{n:02d}": 4 for n in range(15)}


def test_names_text_keeps_whole_names_and_says_how_many_more() -> None:
    short = names_text(NAMES, NAMES_WIDTH)
    assert short == "billing.invoice-step-00×4 +14 more"
    assert names_text(NAMES, None).count("×4") == 15
    assert names_text({"a": 1, "b": 2}, NAMES_WIDTH) == "a×1, b×2"
    assert names_text({"x" * 40: 1}, NAMES_WIDTH) == "x" * 40 + "×1"  # one name is never cut


async def test_at_80_columns_the_heartbeat_and_held_show_and_z_shows_every_name(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        monque = app.session.monque
        assert monque is not None
        await monque.store.upsert_instance(
            InstanceRecord(
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
        )
        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and "wide-worker" in app.screen.rows)
        screen = app.screen
        assert isinstance(screen, WorkersScreen)
        table = screen.query_one(DataTable)
        widths = {column.key.value: column.get_render_width(table) for column in table.columns.values()}
        order = [column.key.value for column in table.columns.values()]
        # Everything up to HELD fits in 80 columns, before NAMES.
        assert order.index("held") < order.index("names")
        assert sum(widths[key] for key in order[: order.index("held") + 1]) <= 80
        names_cell = str(table.get_cell("wide-worker", "names"))
        assert names_cell.endswith("+14 more")
        await pilot.press("z")
        await wait_for(lambda: str(table.get_cell("wide-worker", "names")).count("×4") == 15)
        assert screen.cursor_key is not None

        def names_width() -> int:
            return next(c for c in table.columns.values() if c.key.value == "names").get_render_width(table)

        wide = names_width()
        assert wide > len(names_cell) + 2
        await pilot.press("z")  # back to what fits: the column narrows again
        await wait_for(lambda: str(table.get_cell("wide-worker", "names")).endswith("+14 more"))
        assert names_width() == len(names_cell) + 2

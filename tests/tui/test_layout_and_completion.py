"""Small layout faults and Tab completion (issue 10, defects 11 and 12)."""

from __future__ import annotations

from textual.widgets import Input

from monque_tui.demo.seed import SEED_JOBS

from .conftest import running_console, table_ids, wait_for
from .test_confirm_width import screen_text


async def test_tab_completes_the_name_then_moves_on(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await wait_for(lambda: app.jobs_screen.query_one("#filter-name", Input).suggester is not None)
        await pilot.press("slash", *"send-e")
        field = app.jobs_screen.query_one("#filter-name", Input)
        await wait_for(lambda: field._suggestion == "send-email")
        await pilot.press("tab")
        assert field.value == "send-email" and field.has_focus  # completed, still in the field
        await wait_for(lambda: set(table_ids(app)) == {j.id for j in SEED_JOBS if j.name == "send-email"})
        await pilot.press("tab")
        assert app.jobs_screen.query_one("#filter-search", Input).has_focus  # nothing to complete: moves on


async def test_the_footer_shows_help_and_the_palette_once_at_160_columns(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 45)) as (app, _pilot):
        # The footer draws its bindings on a later refresh than the first paint (blank under load).
        await wait_for(lambda: screen_text(app).splitlines()[-1].strip() != "")
        footer = screen_text(app).splitlines()[-1]
        assert "Help" in footer and "Quit" in footer, footer
        assert footer.count("Commands") == 1 and "palette" not in footer, footer


async def test_a_long_filter_keeps_the_tabs_on_one_line_with_the_sort_arrow(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(100, 30)) as (app, pilot):
        await pilot.press(
            "5", "slash", *"webhook-deliver-with-a-long-name", "tab", *"abc", "tab", *"created -2h..", "enter"
        )
        await wait_for(lambda: app.jobs_screen.window.query.ranges != ())
        await pilot.pause()
        tabs = app.jobs_screen.query_one("StatusTabs")
        assert tabs.size.height == 1
        lines = screen_text(app).splitlines()
        line = next(line for line in lines if "│ failed" in line)
        # The view's description before the sort text (the sorted column's header keeps its
        # arrow), and cut only between whole filter parts, never inside the name (probe 5).
        assert "named 'webhook-deliver-with-a-long-name'" in line, line
        assert line.rstrip().endswith(("…", "matching", "↓", "UTC")), line  # UTC: the filter whole
        assert any("ID ↓" in row for row in lines), lines[:6]


async def test_the_status_word_survives_big_counts_at_80_columns(seeded_url: str) -> None:
    from monque_engine import QueueStats

    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        await pilot.press("4")
        await wait_for(lambda: app.jobs_screen.window.query.status is not None)
        tabs = app.jobs_screen.query_one("StatusTabs")
        tabs.stats = QueueStats(pending=0, processing=0, completed=182_100, failed=0, cancelled=0)
        tabs.matching = 182_100
        await pilot.pause()
        lines = screen_text(app).splitlines()
        line = next(line for line in lines if "│ completed" in line)
        # Labels say what each count is; at 80 columns they shorten to three letters and the
        # sort text gives way (the sorted column's header keeps its arrow).
        assert "1 All " in line and "4 Com 182,100" in line and "2 Pen 0" in line, line
        assert any("ID ↓" in row for row in lines), lines[:6]

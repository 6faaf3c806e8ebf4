"""``?`` at 80 columns: descriptions get the width, the group titles their own lines (probe finding).

The group titles sat in the never-wrapping keys column ("Act on everything matching", 26
cells) so at 80 columns each description had ~20 cells and wrapped over two to five lines.
Real app driven by Pilot at 80x24, the help scrolled through.
"""

from __future__ import annotations

from monque_tui.console.screens.help import HelpScreen

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text


async def test_help_descriptions_are_readable_at_80_columns(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        await pilot.press("question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        text = screen_text(app)
        lines = text.splitlines()
        first = next(line for line in lines if " g " in line)
        assert "Jump to the first job of the listing" in first, first  # one line, not wrapped
        key_cells = first.index("Jump") - first.index(" g ")
        assert key_cells <= 16, first  # the keys column is as wide as the keys, not the group titles
        assert "Every key of the console. The footer shows those" in text  # where the footer's dropped keys are


async def test_help_names_payload_terms_and_says_the_move_keys_work_on_every_table(seeded_url: str) -> None:
    """``?`` said the move keys apply to "jobs" (they move on Queues, Errors and Workers too) and
    its ``/`` line never mentioned the payload terms the bar's when field takes (console probe)."""
    async with running_console(seeded_url, size=(160, 60)) as (app, pilot):
        await pilot.press("question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        text = " ".join(screen_text(app).split())
        assert "data.customer_id missing" in text, text
        first = next(line for line in screen_text(app).splitlines() if " g " in line)
        assert "every table" in first, first


async def test_the_tables_move_keys_scroll_the_help(seeded_url: str) -> None:
    """``j`` / ``k`` / ``G`` / ``g`` scroll ``?`` as the arrows do (they did nothing there)."""
    from textual.containers import VerticalScroll

    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        await pilot.press("question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen))
        scroll = app.screen.query_one(VerticalScroll)
        await wait_for(lambda: scroll.max_scroll_y > 0)
        await pilot.press("j")
        await wait_for(lambda: scroll.scroll_y > 0)
        await pilot.press("G")
        await wait_for(lambda: scroll.scroll_y == scroll.max_scroll_y)
        await pilot.press("k")
        await wait_for(lambda: scroll.scroll_y < scroll.max_scroll_y)
        await pilot.press("g")
        await wait_for(lambda: scroll.scroll_y == 0)

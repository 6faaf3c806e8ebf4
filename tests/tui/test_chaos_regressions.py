"""Crashes the chaos monkey (tests/tui/test_chaos.py) and the tmux drive found, each replayed
with a short fixed key sequence."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette

from .conftest import running_console, wait_for


async def test_page_keys_in_a_palette_too_small_to_show_its_list_do_not_crash(seeded_url: str) -> None:
    """Found by the tmux drive: PgUp in the command palette of a 40x10 terminal raised
    ``KeyError: 0`` from Textual's OptionList._move_page (its list had options and a highlight
    but no laid-out lines, its height being zero)."""
    async with running_console(seeded_url, size=(40, 10)) as (app, pilot):
        await pilot.press("ctrl+p")
        await wait_for(lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("r", "e")
        command_list = app.screen.query_one(CommandList)
        await wait_for(lambda: command_list.option_count > 0)
        await pilot.press("down")  # opens the list and highlights an option
        await pilot.pause()
        command_list.styles.height = 0  # as on the frame before its first layout
        await pilot.pause()
        await pilot.press("pageup", "pagedown", "pageup")
        await pilot.pause()
        assert app.is_running and app._exception is None
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)

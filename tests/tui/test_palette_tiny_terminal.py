"""The command palette opens in a terminal a few columns wide. In a 4x2 terminal it crashed the
console (found by the acceptance probe) with Rich's ``ValueError: range() arg 3 must not be zero`` (options wrapped to width zero)."""

from __future__ import annotations

import pytest
from textual.command import CommandList, CommandPalette

from .conftest import running_console, wait_for


@pytest.mark.parametrize("size", [(4, 2), (5, 2), (3, 3)], ids=lambda size: f"{size[0]}x{size[1]}")
async def test_the_palette_opens_in_a_terminal_a_few_columns_wide(seeded_url: str, size: tuple[int, int]) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await pilot.resize_terminal(*size)
        await pilot.pause()
        await pilot.press("ctrl+p")
        await wait_for(lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("r", "e")
        command_list = app.screen.query_one(CommandList)
        await wait_for(lambda: command_list.option_count > 0)  # the results that wrapped to width zero
        await pilot.pause()
        await pilot.press("down", "escape")
        await pilot.pause()
        assert app.is_running and app._exception is None

"""Crashes the chaos monkey (tests/tui/test_chaos.py) and the tmux drive found, each replayed
with a short fixed key sequence."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable, Input

from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.screens.export import ExportScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.screens.workers import WorkersScreen

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


async def _close_while_loading(app, pilot, key: str, method: str, screen_type: type) -> None:  # type: ignore[no-untyped-def]
    """Open a screen whose store read waits on an event, close it with Esc, then let the read
    finish into a screen whose widgets are being (or have been) removed."""
    monque = app.session.monque
    release = asyncio.Event()
    entered = asyncio.Event()
    original = getattr(monque, method)

    async def held(*args, **kwargs):  # type: ignore[no-untyped-def]
        entered.set()
        await release.wait()
        return await original(*args, **kwargs)

    setattr(monque, method, held)
    try:
        await pilot.press(key)
        await wait_for(lambda: isinstance(app.screen, screen_type) and entered.is_set())
        screen = app.screen
        await screen.query_one(DataTable).remove()  # the prune's first step, as during Esc
        release.set()
        await wait_for(lambda: not any(w.is_running for w in screen.workers._workers))
        await pilot.pause()
        assert app.is_running and app._exception is None
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        await pilot.pause()
        assert app.is_running and app._exception is None
    finally:
        setattr(monque, method, original)


async def test_queues_closed_while_loading_does_not_crash(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await _close_while_loading(app, pilot, "w", "get_queue_view_summaries", QueuesScreen)


async def test_workers_closed_while_loading_does_not_crash(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await _close_while_loading(app, pilot, "W", "instances", WorkersScreen)


async def test_errors_closed_while_loading_does_not_crash(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await _close_while_loading(app, pilot, "e", "error_groups", ErrorsScreen)


async def test_export_to_a_path_the_os_refuses_is_a_one_line_error(
    seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the chaos monkey (seed 103): a pasted path too long for the file system raised
    ``OSError: File name too long`` from the export's existence check and took the console down."""
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("E")
        await wait_for(lambda: isinstance(app.screen, ExportScreen))
        app.screen.query_one(Input).value = "x" * 300 + ".csv"
        await pilot.press("enter")
        # Said under the input, the dialog open for another path (probe 7; it was a notification).
        dialog = app.screen
        await wait_for(lambda: "cannot use that path" in str(dialog.query_one("#export-error").content))
        await pilot.pause()
        assert app.is_running and app._exception is None and app.screen is dialog
        assert list(out.iterdir()) == []

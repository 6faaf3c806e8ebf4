"""The command palette: opens with ctrl+p and `:`, lists every command, and runs each one.

Titles like "Filter [/]" once crashed the palette (read as markup: ``[/]`` is a closing tag).
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.command import CommandList, CommandPalette

from monque_engine import JobStatus
from monque_tui.console.app import MonqueConsole
from monque_tui.console.palette import palette_commands
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.screens.export import ExportScreen
from monque_tui.console.screens.help import HelpScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.screens.when import WhenScreen
from monque_tui.console.screens.workers import WorkersScreen
from monque_tui.demo.seed import seed_id

from .conftest import move_to, running_console, wait_for

PENDING_EMAIL = seed_id(1)


def shown_titles(app: MonqueConsole) -> list[str]:
    commands = app.screen.query_one(CommandList)
    return [str(commands.get_option_at_index(i).hit.text) for i in range(commands.option_count)]


async def open_palette(app: MonqueConsole, pilot: Any, key: str = "ctrl+p") -> list[str]:
    await pilot.press(key)
    await wait_for(lambda: isinstance(app.screen, CommandPalette))
    palette = app.screen
    await pilot.press("down")  # show the discovery list
    await wait_for(lambda: palette.query_one(CommandList).option_count > 0)
    await pilot.pause()
    return shown_titles(app)


async def run_from_palette(app: MonqueConsole, pilot: Any, title: str) -> None:
    titles = await open_palette(app, pilot)
    assert title in titles, f"{title!r} not offered; offered: {titles}"
    commands = app.screen.query_one(CommandList)
    commands.highlighted = titles.index(title)
    await pilot.press("enter")
    await wait_for(lambda: not isinstance(app.screen, CommandPalette))
    await pilot.pause()


async def test_the_palette_opens_with_ctrl_p_and_colon_and_lists_every_command(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, PENDING_EMAIL)
        expected = [command.title for command in palette_commands(app, app.jobs_screen)]
        assert "Filter [/]" in expected and "Cancel [c]" in expected
        for key in ("ctrl+p", "colon"):
            titles = await open_palette(app, pilot, key)
            assert set(expected) <= set(titles), set(expected) - set(titles)
            await pilot.press("escape")
            await wait_for(lambda: app.screen is app.jobs_screen)
        # Searching highlights within the literal title (brackets included) without crashing.
        await pilot.press("ctrl+p", *"filt")
        await wait_for(
            lambda: isinstance(app.screen, CommandPalette) and app.screen.query_one(CommandList).option_count > 0
        )
        assert "Filter [/]" in shown_titles(app)
        await pilot.press("escape")
        assert app.is_running


def _back_to_jobs(app: MonqueConsole) -> list[Any]:
    """Close whatever a command opened, returning to the jobs screen."""
    closed = []
    while app.screen is not app.jobs_screen:
        closed.append(type(app.screen))
        app.pop_screen()
    return closed


def _effects(app: MonqueConsole) -> dict[str, Any]:
    """What each jobs-screen command visibly does; every command offered must be in this table."""
    screen = app.jobs_screen
    return {
        "Detail [⏎]": lambda: isinstance(app.screen, JobDetailScreen),
        "First job [g]": lambda: screen.table.cursor_row == 0,
        "Last job [G]": lambda: screen.table.cursor_row == len(screen.window) - 1,
        "Pending [2]": lambda: screen.query_state.status is JobStatus.PENDING,
        "Processing [3]": lambda: screen.query_state.status is JobStatus.PROCESSING,
        "Completed [4]": lambda: screen.query_state.status is JobStatus.COMPLETED,
        "Failed [5]": lambda: screen.query_state.status is JobStatus.FAILED,
        "Cancelled [6]": lambda: screen.query_state.status is JobStatus.CANCELLED,
        "All [1]": lambda: screen.query_state.status is None,
        "Sort [s]": lambda: screen.query_state.sort_by == "updated_at",
        "Reverse [S]": lambda: not screen.query_state.descending,
        "Filter [/]": lambda: app.screen.focused is not None and app.screen.focused.id == "filter-name",
        "Pause [p]": lambda: app.paused,
        "Wide [z]": lambda: screen.table.wide,
        "Mark [␣]": lambda: PENDING_EMAIL in screen.marks,
        "Mark loaded [a]": lambda: len(screen.marks) == len(screen.window.rows),
        "Mark all matching [A]": lambda: app.session.marked_view is not None,
        "Unmark all [u]": lambda: not screen.marks and app.session.marked_view is None,
        "Cancel [c]": lambda: isinstance(app.screen, ConfirmScreen),
        "Reschedule [t]": lambda: isinstance(app.screen, WhenScreen),
        "Delete [d]": lambda: isinstance(app.screen, ConfirmScreen),
        "Cancel all [C]": lambda: isinstance(app.screen, ConfirmScreen),
        "Retry all [R]": lambda: isinstance(app.screen, ConfirmScreen),
        "Delete all [D]": lambda: isinstance(app.screen, ConfirmScreen),
        "Queues [w]": lambda: isinstance(app.screen, QueuesScreen),
        "Errors [e]": lambda: type(app.screen).__name__ == "ErrorsScreen",
        "Workers [W]": lambda: isinstance(app.screen, WorkersScreen),
        "Export [E]": lambda: isinstance(app.screen, ExportScreen),
        "Help [?]": lambda: isinstance(app.screen, HelpScreen),
    }


#: Each palette run costs about a second (Textual gathers hits in 0.25 s batches), so the
#: table is run in slices, one app each, that can run side by side under pytest-xdist.
SLICES = 4


@pytest.mark.parametrize("part", range(SLICES))
async def test_every_jobs_screen_command_runs_from_the_palette(seeded_url: str, part: int) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        effects = _effects(app)
        offered_somewhere = {c.title for c in palette_commands(app, screen)}
        # Commands that need another state (a filter to clear, a failed job to retry) are covered below.
        assert offered_somewhere - set(effects) <= {"Quit [q]", "Retry [r]", "Clear filter [Esc]"}
        # Slice i runs the i-th run of consecutive commands, in table order (a command can
        # depend on the state the one before left, e.g. a status tab).
        size = -(-len(effects) // SLICES)
        for title, effect in list(effects.items())[part * size : (part + 1) * size]:
            await move_to(app, pilot, PENDING_EMAIL) if screen.window.position(PENDING_EMAIL) is not None else None
            await run_from_palette(app, pilot, title)
            try:
                await wait_for(effect)
            except AssertionError:
                raise AssertionError(f"{title}: no effect (screen {app.screen})") from None
            _back_to_jobs(app)
            if app.paused:
                app.set_paused(False)
            screen.query_one("#filter-name").blur()
            screen.table.focus()
            await pilot.pause()


async def test_retry_clear_filter_and_quit_run_from_the_palette(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        # Retry: on a failed job.  Clear filter: with a filter set.
        await move_to(app, pilot, seed_id(2))
        await run_from_palette(app, pilot, "Retry [r]")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        _back_to_jobs(app)
        screen.table.focus()
        await pilot.press("slash", *"send-email", "enter")
        await wait_for(lambda: screen.query_state.name == "send-email")
        screen.table.focus()
        await run_from_palette(app, pilot, "Clear filter [Esc]")
        await wait_for(lambda: screen.query_state.name is None)
        await run_from_palette(app, pilot, "Quit [q]")
        await wait_for(lambda: not app.is_running)


async def test_detail_and_queues_commands_run_from_the_palette(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, PENDING_EMAIL)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
        detail = app.screen
        titles = [c.title for c in palette_commands(app, detail)]
        assert {"Cancel [c]", "Reschedule [t]", "Delete [d]", "Back [Esc]"} <= set(titles)
        await run_from_palette(app, pilot, "Cancel [c]")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        app.pop_screen()
        await run_from_palette(app, pilot, "Back [Esc]")
        await wait_for(lambda: app.screen is app.jobs_screen)
        await pilot.press("w")
        await wait_for(lambda: isinstance(app.screen, QueuesScreen))
        await run_from_palette(app, pilot, "Show jobs [⏎]")
        await wait_for(lambda: app.screen is app.jobs_screen and app.jobs_screen.query_state.name is not None)


async def test_names_that_look_like_markup_are_shown_literally(seeded_url: str) -> None:
    from monque_engine import Monque

    other = Monque(seeded_url, recover_stale_jobs=False)
    await other.initialize()
    job = await other.enqueue("[/]odd[b]name", {"x": "[/]"})
    await other.close()
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, job.id)
        await pilot.press("d")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert "[/]odd[b]name" in app.screen.plan.question  # type: ignore[attr-defined]
        await pilot.press("n")
        await wait_for(lambda: app.screen is app.jobs_screen)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
        await run_from_palette(app, pilot, "Back [Esc]")
        assert app.is_running

"""The console acts on every job only with a dialog that names "every job" (issue 34, section 1),
and a time typed with an offset past the years 1-9999 is an error in the bar (section 4).

An emptied filter field means no filter on that field, as before; a bulk key on such a view
reaches every job, so its confirmation says "every job" in words. A name glob every name
matches (``*``) is no filter either: deleting with it asks for the count typed back, as an
empty view does. Pilot on a real SQLite file; the store is checked after each refusal.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, Label, Static

from monque_tui.console.app import MonqueConsole
from monque_tui.console.query import WhenError, parse_when
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.demo.seed import SEED_JOBS, SEED_NOW_MS

from .conftest import running_console, store_jobs, table_ids, wait_for

EMAIL = {job.id for job in SEED_JOBS if job.name == "send-email"}


def dialog_shown(app: MonqueConsole) -> bool:
    """The confirmation is on top and composed: its question is mounted (right after the
    push its widgets may not be yet, and a query then raises NoMatches under load)."""
    screen = app.screen
    return isinstance(screen, ConfirmScreen) and bool(screen.query("#confirm-question"))


def dialog_text(app: MonqueConsole) -> str:
    """What the confirmation shows: its question and every detail line, as rendered."""
    screen = app.screen
    assert isinstance(screen, ConfirmScreen)
    parts = [str(screen.query_one("#confirm-question", Label).render())]
    parts += [str(line.render()) for line in screen.query(".confirm-detail").results(Static)]
    return " ".join(parts)


async def test_an_emptied_filter_then_a_bulk_key_names_every_job(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("slash", *"send-email", "enter")
        await wait_for(lambda: set(table_ids(app)) == EMAIL)
        name = app.jobs_screen.query_one("#filter-name", Input)
        name.value = ""  # the field emptied: no filter on the name, as before
        await pilot.press("enter", "escape")
        await wait_for(lambda: app.jobs_screen.window.query.name is None and len(table_ids(app)) == len(SEED_JOBS))
        for key in ("C", "R"):
            await pilot.press(key)
            await wait_for(lambda: dialog_shown(app))
            shown = dialog_text(app)
            assert "every job in the store" in shown, shown
            await pilot.press("n")
            if key == "C":  # the seed holds running jobs: stopping them is asked apart (issue 37)
                await wait_for(lambda: dialog_shown(app) and "Stop" in dialog_text(app))
                shown = dialog_text(app)
                assert "every processing job" in shown and "every job in the store" in shown, shown
                await pilot.press("n")
            await wait_for(lambda: not isinstance(app.screen, ConfirmScreen))
    assert await store_jobs(seeded_url) == before


async def test_a_glob_every_name_matches_is_no_filter_and_delete_asks_for_the_count(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("slash", "asterisk", "enter", "escape")
        await wait_for(lambda: app.jobs_screen.window.query.name == "*")
        await pilot.press("D")
        await wait_for(lambda: dialog_shown(app))
        shown = dialog_text(app)
        assert "every job in the store" in shown and f"Type {len(SEED_JOBS)} to confirm" in shown, shown
        await pilot.press("y", "enter")  # "y" is text in the count field: nothing happens
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await wait_for(lambda: not isinstance(app.screen, ConfirmScreen))
    assert await store_jobs(seeded_url) == before


async def test_an_offset_instant_past_the_calendar_is_an_error_in_the_bar(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        bar = app.jobs_screen.query_one(FilterBar)
        for typed in ("created 0001-01-01T00:00:00+05:00..", "next ..9999-12-31T23:59:59-05:00"):
            await pilot.press("slash", "tab", "tab")
            when = app.jobs_screen.query_one("#filter-when", Input)
            when.value = typed
            await pilot.press("enter")
            await wait_for(lambda: bar.error is not None)
            assert bar.error is not None and "out of range" in bar.error and "9999-12-31" in bar.error, bar.error
            assert app.jobs_screen.query_state.ranges == ()  # nothing applied
            when.value = ""
            await pilot.press("escape")
        assert len(table_ids(app)) == len(SEED_JOBS)
        assert app.is_running


def test_a_reschedule_time_past_the_calendar_is_an_error() -> None:
    """The reschedule prompt's parser (``t``): an offset time past 9999 in UTC was taken, and
    the engine's refusal came only after the confirmation was built from it."""
    for typed in ("9999-12-31T23:59:59-05:00", "9999-12-31T23:30-01:00"):
        with pytest.raises(WhenError, match="out of range"):
            parse_when(typed, SEED_NOW_MS)
    assert parse_when("9999-12-31T23:59:59+05:00", SEED_NOW_MS).year == 9999  # within the calendar in UTC

"""Text entry and actions stay apart in the filter bar (issue 28).

Enter applies and keeps the focus in the bar; only Esc (the filter kept; Esc again clears it)
or Tab past the last field hands the keys to the table. A range error under the bar goes
once its field is emptied. Real app driven by Pilot over a seeded SQLite file.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.console.widgets.job_table import JobTable

from .conftest import running_console, store_jobs, table_ids, wait_for


async def test_enter_keeps_the_focus_in_the_bar_and_letters_stay_text(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("5", "slash", *"send-email", "enter")
        await wait_for(lambda: screen.window.query.name == "send-email" and len(table_ids(app)) == 1)
        name = screen.query_one("#filter-name", Input)
        assert name.has_focus
        await pilot.press("r", "y", "D")
        await pilot.pause()
        assert name.value == "send-emailryD"
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")  # leaves the bar; the filter typed stays applied
        await wait_for(lambda: screen.query_one(JobTable).has_focus)
        assert screen.query_one(FilterBar).has_class("-open")
        await wait_for(lambda: screen.window.query.name == "send-emailryD")
        await pilot.press("escape")  # on the table: clears it
        await wait_for(lambda: screen.window.query.name is None and not screen.query_one(FilterBar).has_class("-open"))
    assert await store_jobs(seeded_url) == before


async def test_tab_past_the_last_field_reaches_the_table(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("slash", "tab", "tab", "tab", *"timed out", "enter")
        await wait_for(lambda: screen.window.query.text == "timed out")
        assert screen.query_one("#filter-text", Input).has_focus
        await pilot.press("tab")
        await wait_for(lambda: screen.query_one(JobTable).has_focus)
        assert screen.window.query.text == "timed out"


async def test_esc_in_an_empty_bar_closes_it(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("slash")
        bar = screen.query_one(FilterBar)
        assert bar.has_class("-open")
        await pilot.press("escape")
        await wait_for(lambda: screen.query_one(JobTable).has_focus and not bar.has_class("-open"))


async def test_a_range_error_goes_when_its_field_is_emptied(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("slash", "tab", "tab", *"created yesterday..", "enter")
        bar = screen.query_one(FilterBar)
        await wait_for(lambda: bar.error is not None and "yesterday" in bar.error)
        await pilot.press("ctrl+u")  # empty the field (the cursor is at its end)
        await wait_for(lambda: screen.query_one("#filter-when", Input).value == "")
        await wait_for(lambda: bar.error is None and not bar.has_class("-error"))


async def test_keys_that_arrive_with_the_slash_in_one_burst_go_to_the_name_field(seeded_url: str) -> None:
    """Over a slow ssh link (or a paste) ``/email`` arrives as one burst: every key is queued
    before the first is handled. The focus moved by a queued callback, behind the keys, so
    ``e`` reached the table and opened the errors view."""
    async with running_console(seeded_url) as (app, _pilot):
        screen = app.jobs_screen
        bar = screen.query_one(FilterBar)
        await wait_for(lambda: len(bar.query(Input)) == 4)
        driver = app._driver
        assert driver is not None
        for key in ("slash", *"email"):  # as Pilot sends keys, but with no wait between them
            driver.send_message(events.Key(key, "/" if key == "slash" else key))
        await wait_for(lambda: bar.values == ("email", None))
        assert app.screen is screen
        assert bar.query_one("#filter-name", Input).has_focus

"""Text search from the filter bar ("contains": payload or error text): applied as typed
(debounced), honoured by listing, counts and bulk actions; a store timeout is shown inline.
Real app driven by Pilot over a seeded SQLite file."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input, Static

from monque_engine import AggregationTimeoutError, JobStatus
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets import filter_bar
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.console.widgets.status_tabs import StatusTabs
from monque_tui.demo.seed import SEED_JOBS, seed_id

from .conftest import running_console, store_jobs, table_ids, wait_for
from .toasts import said_first

TIMED_OUT = {seed_id(12), seed_id(13)}  # "timed out" is in their failReason only


async def test_contains_filters_the_listing_and_the_counts_as_typed(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("slash", "tab", "tab", "tab", *"TIMED OUT")  # ASCII case is ignored
        bar = screen.query_one(FilterBar)
        assert bar.query_one("#filter-text", Input).has_focus
        await wait_for(lambda: screen.window.query.text == "TIMED OUT")
        assert set(table_ids(app)) == TIMED_OUT
        await wait_for(lambda: screen.query_one(StatusTabs).matching == 2)
        assert "containing 'TIMED OUT'" in screen.query_one(StatusTabs).describe
        # The payload is searched too (the whole JSON text on SQLite), and the error type.
        field = bar.query_one("#filter-text", Input)
        field.value = "refunded"
        await wait_for(lambda: set(table_ids(app)) == {seed_id(12)})
        field.value = "ConnectTimeout"
        await wait_for(lambda: screen.window.query.text == "ConnectTimeout" and set(table_ids(app)) == {seed_id(12)})
        await pilot.press("escape", "escape")  # leave the bar, then clear the filter
        await wait_for(lambda: screen.window.query.text is None and len(table_ids(app)) == len(SEED_JOBS))


async def test_typing_waits_for_a_pause_before_searching(seeded_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keystrokes re-arm one timer (a long one here, so the test does not race it); Enter applies at once."""
    monkeypatch.setattr(filter_bar, "TEXT_DEBOUNCE", 3600.0)
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        applied: list[str | None] = []
        original = screen.apply_query

        def record(query: Any) -> None:
            applied.append(query.text)
            original(query)

        screen.apply_query = record  # type: ignore[method-assign]
        await pilot.press("slash", "tab", "tab", "tab", *"hooks")
        await pilot.pause()
        bar = screen.query_one(FilterBar)
        assert [text for text in applied if text] == [] and screen.window.query.text is None
        assert bar.unapplied is not None and "still being applied" in bar.unapplied  # bulk keys refuse meanwhile
        await pilot.press("enter")
        await wait_for(lambda: screen.window.query.text == "hooks")
        assert [text for text in applied if text] == ["hooks"]  # one search, not one per keystroke
        assert bar.unapplied is None


async def test_bulk_actions_act_on_the_text_search(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("slash", "tab", "tab", "tab", *"timed out", "enter", "escape")
        await wait_for(lambda: screen.window.query.text == "timed out" and set(table_ids(app)) == TIMED_OUT)
        assert screen.check_action("act_all", ("delete",)) is True
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.count == 2
        assert "containing 'timed out'" in app.screen.plan.question
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Deleted 2 jobs"))
    after = await store_jobs(seeded_url)
    assert set(before) - set(after) == TIMED_OUT


async def test_retry_all_with_text_and_status_reaches_only_the_failed_match(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("5", "slash", "tab", "tab", "tab", *"hooks.example", "enter", "escape")
        await wait_for(lambda: screen.window.query.text == "hooks.example" and table_ids(app) == [seed_id(12)])
        await pilot.press("R")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.count == 1
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Retried 1 job"))
    jobs = await store_jobs(seeded_url)
    assert jobs[seed_id(12)].status is JobStatus.PENDING and jobs[seed_id(6)].status is JobStatus.FAILED


async def test_a_search_timeout_is_shown_inline_and_the_console_stays_up(
    seeded_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FAKE of the MongoDB store's answer to a text search over its maxTimeMS: the engine
    raises ``AggregationTimeoutError`` with this message (monque_engine/store/mongo/errors.py);
    there is no MongoDB server here, so the listing and count calls raise it directly."""
    message = (
        "the text search read too many jobs; narrow it with a job name, a status or a time range, "
        "or search for a longer string"
    )
    async with running_console(seeded_url) as (app, pilot):
        monque = app.session.monque
        listing, count = monque.get_jobs_with_cursor, monque.count_jobs

        async def slow_listing(*args: Any, **kwargs: Any) -> Any:
            flt = args[3] if len(args) > 3 else kwargs.get("filter")
            if flt is not None and flt.text:
                raise AggregationTimeoutError(message)
            return await listing(*args, **kwargs)

        async def slow_count(flt: Any = None) -> int:
            if flt is not None and flt.text:
                raise AggregationTimeoutError(message)
            return await count(flt)

        def slow_steps(*args: Any, **kwargs: Any) -> Any:
            """A "contains" view is read in steps (ADR 0008): on MongoDB, one aggregation."""

            async def steps() -> Any:
                raise AggregationTimeoutError(message)
                yield  # an async generator, as the engine's

            return steps()

        monkeypatch.setattr(monque, "get_jobs_with_cursor", slow_listing)
        monkeypatch.setattr(monque, "count_jobs", slow_count)
        monkeypatch.setattr(monque, "get_jobs_in_steps", slow_steps)
        monkeypatch.setattr(monque, "count_jobs_in_steps", slow_steps)
        screen = app.jobs_screen
        await pilot.press("slash", "tab", "tab", "tab", *"x", "enter")
        bar = screen.query_one(FilterBar)
        await wait_for(lambda: bar.error is not None and "narrow it" in bar.error)
        hint = str(bar.query_one("#filter-hint", Static).content)
        assert hint.startswith("✗ the text search read too many jobs")
        assert table_ids(app) == [] and screen.table.placeholder.startswith("✗ the text search read too many")
        # Clearing the text clears the message and brings the rows back (Esc leaves the bar, Esc clears).
        await pilot.press("escape", "escape")
        await wait_for(lambda: len(table_ids(app)) == len(SEED_JOBS) and bar.error is None)
        assert app.is_running


async def test_a_contains_text_the_engine_refuses_is_shown_inline(seeded_url: str) -> None:
    """Over 500 characters the engine raises InvalidJobQueryError: one line in the bar, no crash."""
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("slash")
        bar = screen.query_one(FilterBar)
        bar.query_one("#filter-text", Input).value = "x" * 501
        await pilot.press("tab", "tab", "tab", "enter")
        await wait_for(lambda: bar.error is not None and "500" in bar.error)
        assert table_ids(app) == [] and app.is_running
        bar.query_one("#filter-text", Input).value = "timed out"
        await wait_for(lambda: set(table_ids(app)) == TIMED_OUT and bar.error is None)

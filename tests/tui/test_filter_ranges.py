"""Time ranges in the filter bar: created / updated / next run, on a real SQLite file.

The seeded jobs have known instants around the frozen clock (SEED_NOW_MS = 2026-01-15 12:00 UTC):
created ``age_min`` minutes before, updated ``updated_min`` before, next run ``due_min`` after.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import cast

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from monque_engine import JobStatus, Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.query import DAY_MS, RangeError, TimeRange, ms_datetime, parse_ranges
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.console.widgets.status_tabs import StatusTabs
from monque_tui.demo.seed import MINUTE, SEED_JOBS, SEED_NOW_MS, SeedJob, seed_id

from .conftest import running_console, store_jobs, table_ids, wait_for
from .toasts import said_first

NOW = SEED_NOW_MS
HOUR = 60 * MINUTE


@asynccontextmanager
async def console(url: str) -> AsyncIterator[tuple[MonqueConsole, Pilot[int]]]:
    async with running_console(url, notifications=True) as (app, pilot):
        yield app, cast("Pilot[int]", pilot)


def ids(predicate: Callable[[SeedJob], bool]) -> set[str]:
    return {job.id for job in SEED_JOBS if predicate(job)}


def when_field(app: MonqueConsole) -> Input:
    return app.jobs_screen.query_one("#filter-when", Input)


async def apply_range(app: MonqueConsole, pilot: Pilot[int], text: str, *, typed: bool = False) -> None:
    """Open the bar with `/`, tab to the time field, enter the range and press Enter.

    Typing key by key costs a screen update per key, so most tests set the field's value.
    """
    await pilot.press("slash", "tab", "tab")
    when = when_field(app)
    assert when.has_focus
    if typed:
        when.value = ""
        await pilot.press(*text, "enter")
    else:
        when.value = text
        await pilot.press("enter")
    await pilot.pause()
    if app.jobs_screen.query_one(FilterBar).error is None:
        await pilot.press("escape")  # Enter stays in the bar; Esc leaves it, the range kept


def view_settled(app: MonqueConsole, ranges: tuple[TimeRange, ...]) -> bool:
    screen = app.jobs_screen
    return screen.query_state.ranges == ranges and screen.window.query.ranges == ranges


def status_line(app: MonqueConsole) -> str:
    return str(app.jobs_screen.query_one(StatusTabs).render())


# -- parsing ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("created 2026-01-15 10:00..2026-01-15T11:30Z", (TimeRange("created_at", NOW - 2 * HOUR, NOW - 30 * MINUTE),)),
        ("created 2026-01-15T10:00:00+01:00..", (TimeRange("created_at", NOW - 3 * HOUR, None),)),
        ("updated -2h..now", (TimeRange("updated_at", NOW - 2 * HOUR, NOW),)),
        ("updated -30m", (TimeRange("updated_at", NOW - 30 * MINUTE, NOW),)),
        ("next +1h", (TimeRange("next_run_at", NOW, NOW + HOUR),)),
        ("next run ..-7d", (TimeRange("next_run_at", None, NOW - 7 * DAY_MS),)),
        # A date alone is that day; a date as the end of a range includes that whole day.
        ("created today", (TimeRange("created_at", NOW - 12 * HOUR, NOW + 12 * HOUR - 1),)),
        ("created 2026-01-14..2026-01-15", (TimeRange("created_at", NOW - 36 * HOUR, NOW + 12 * HOUR - 1),)),
        # Several at once, in any order, come out in field order.
        (
            "next ..+1h, created -1d..",
            (TimeRange("created_at", NOW - DAY_MS, None), TimeRange("next_run_at", None, NOW + HOUR)),
        ),
        ("", ()),
    ],
)
def test_range_syntax(text: str, expected: tuple[TimeRange, ...]) -> None:
    assert parse_ranges(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("-2h..", "Start with created, updated or next"),
        ("created yesterday..", "cannot read 'yesterday'"),
        ("created now", "one instant"),
        ("created ..", "needs a start, an end or both"),
        ("updated +1h..-1h", "ends before it starts"),
        ("created -1h.. created -2h..", "given twice"),
    ],
)
def test_bad_ranges_say_what_is_wrong_and_what_is_accepted(text: str, says: str) -> None:
    with pytest.raises(RangeError, match=says):
        parse_ranges(text, NOW)


# -- the console -------------------------------------------------------------------------------------------
async def test_a_created_range_shows_exactly_the_jobs_inside_it(seeded_url: str) -> None:
    # 11:05..11:25 UTC: created 35 to 55 minutes before the frozen now, both ends included.
    expected = ids(lambda j: 35 <= j.age_min <= 55)
    assert seed_id(2) in expected and seed_id(12) in expected  # jobs exactly on both ends
    async with console(seeded_url) as (app, pilot):
        await apply_range(app, pilot, "created 2026-01-15 11:05..2026-01-15T11:25Z")
        wanted = (TimeRange("created_at", NOW - 55 * MINUTE, NOW - 35 * MINUTE),)
        await wait_for(lambda: view_settled(app, wanted))
        assert set(table_ids(app)) == expected
        await wait_for(lambda: f"— {len(expected)} matching" in status_line(app))
        assert "created 11:05..11:25 UTC" in status_line(app)
        assert app.jobs_screen.table.has_focus  # Enter hands the keys back to the table


async def test_an_updated_range_relative_to_the_frozen_clock(seeded_url: str) -> None:
    expected = ids(lambda j: j.updated_min <= 10)
    async with console(seeded_url) as (app, pilot):
        await apply_range(app, pilot, "updated -10m..now", typed=True)
        await wait_for(lambda: view_settled(app, (TimeRange("updated_at", NOW - 10 * MINUTE, NOW),)))
        assert set(table_ids(app)) == expected
        assert "updated 11:50..12:00 UTC" in status_line(app)
        await wait_for(lambda: f"— {len(expected)} matching" in status_line(app))


async def test_a_next_run_range_and_the_bulk_keys_work_on_it(seeded_url: str) -> None:
    """Issue 13: C, R and D work with every range (one store operation on the view's filter)."""
    expected = ids(lambda j: 0 <= j.due_min <= 60)
    before = await store_jobs(seeded_url)
    async with console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("2")
        await wait_for(lambda: screen.window.query.status is JobStatus.PENDING)
        await apply_range(app, pilot, "next now..+1h")
        await wait_for(lambda: view_settled(app, (TimeRange("next_run_at", NOW, NOW + HOUR),)))
        shown = set(table_ids(app))
        assert shown == {i for i in expected if before[i].status is JobStatus.PENDING}
        assert screen.check_action("act_all", ("cancel",)) is True
        assert screen.check_action("act_all", ("retry",)) is None  # pending view: nothing to retry
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.count == len(shown)
        assert "next run" in app.screen.plan.question
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Cancelled"))
    after = await store_jobs(seeded_url)
    for job_id, job in before.items():
        if job_id in shown:
            assert after[job_id].status is JobStatus.CANCELLED
        else:
            assert after[job_id].status is job.status


async def test_a_bad_value_shows_the_error_and_changes_nothing(seeded_url: str) -> None:
    async with console(seeded_url) as (app, pilot):
        await apply_range(app, pilot, "created -30m..")
        good = (TimeRange("created_at", NOW - 30 * MINUTE, None),)
        await wait_for(lambda: view_settled(app, good))
        rows = table_ids(app)
        assert set(rows) == ids(lambda j: j.age_min <= 30)
        await apply_range(app, pilot, "created yesterday..")
        bar = app.jobs_screen.query_one(FilterBar)
        assert bar.error is not None and "cannot read 'yesterday'" in bar.error and "-2h" in bar.error
        assert bar.has_class("-error")
        assert when_field(app).has_focus  # stays in the field to fix it
        await pilot.pause(0.1)
        assert app.jobs_screen.query_state.ranges == good and table_ids(app) == rows
        # Fixing it clears the error.
        when_field(app).value = "created -20m.."
        await pilot.press("enter")
        await wait_for(lambda: view_settled(app, (TimeRange("created_at", NOW - 20 * MINUTE, None),)))
        assert bar.error is None and not bar.has_class("-error")


async def test_escape_clears_the_ranges_too(seeded_url: str) -> None:
    async with console(seeded_url) as (app, pilot):
        await apply_range(app, pilot, "updated -10m.. next ..+1h")
        await wait_for(lambda: len(app.jobs_screen.window.query.ranges) == 2)
        assert len(table_ids(app)) < len(SEED_JOBS)
        await pilot.press("escape")
        await wait_for(lambda: view_settled(app, ()) and len(table_ids(app)) == len(SEED_JOBS))
        bar = app.jobs_screen.query_one(FilterBar)
        assert not bar.has_class("-open") and bar.ranges == ()
        assert when_field(app).value == ""
        assert "UTC" not in status_line(app)


async def test_retry_all_inside_a_created_range_changes_exactly_those_jobs(seeded_url: str) -> None:
    # Failed jobs created 11:05..11:15: seeds 2 (11:05) and 6 (11:15) on the ends; 12 (11:25) outside.
    before = await store_jobs(seeded_url)
    async with console(seeded_url) as (app, pilot):
        await pilot.press("5")
        await wait_for(lambda: app.jobs_screen.window.query.status is JobStatus.FAILED)
        await apply_range(app, pilot, "created 2026-01-15 11:05..2026-01-15 11:15")
        await wait_for(lambda: set(table_ids(app)) == {seed_id(2), seed_id(6)})
        assert app.jobs_screen.check_action("act_all", ("retry",)) is True
        await pilot.press("R")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        plan = app.screen.plan
        assert plan.count == 2 and "created 2026-01-15 11:05..2026-01-15 11:15 UTC" in plan.question
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Retried 2 jobs"))
    after = await store_jobs(seeded_url)
    changed = {job_id for job_id in before if before[job_id] != after[job_id]}
    assert changed == {seed_id(2), seed_id(6)}


async def test_a_live_change_moves_a_job_out_of_and_into_the_range(seeded_url: str) -> None:
    async with console(seeded_url) as (app, pilot):
        await apply_range(app, pilot, "next now..+1h")
        await wait_for(lambda: view_settled(app, (TimeRange("next_run_at", NOW, NOW + HOUR),)))
        leaving, arriving = seed_id(1), seed_id(7)  # due in 5 minutes / in 12 hours
        assert leaving in table_ids(app) and arriving not in table_ids(app)
        other = Monque(seeded_url, recover_stale_jobs=False)
        await other.initialize()
        try:
            await other.reschedule_job(leaving, ms_datetime(NOW) + timedelta(hours=2))
            await other.reschedule_job(arriving, ms_datetime(NOW) + timedelta(minutes=30))
            await wait_for(lambda: leaving not in table_ids(app) and arriving in table_ids(app))
        finally:
            await other.close()


def test_seed_instants_are_what_these_tests_assume() -> None:
    job: SeedJob = next(j for j in SEED_JOBS if j.index == 2)
    assert (job.age_min, job.status) == (55, JobStatus.FAILED)

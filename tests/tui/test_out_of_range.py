"""Out-of-range times give an inline error, never a crash (issue 10, defect 9)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import Static

from monque_engine import Monque
from monque_tui.console.formatting import absolute, relative
from monque_tui.console.query import RangeError, WhenError, parse_ranges, parse_when
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.screens.when import WhenScreen
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.demo.seed import SEED_NOW_MS, seed_id

from .conftest import move_to, running_console, store_jobs, table_ids, wait_for

FAR_FUTURE_MS = 10**15  # the year 33658: past what a datetime can hold


@pytest.mark.parametrize(
    "text", ["created +999999999w..", "created ..-999999999999d", "next now.." + "+9" * 1 + "9" * 400 + "s"]
)
def test_ranges_out_of_the_calendar_are_a_range_error(text: str) -> None:
    with pytest.raises(RangeError, match="out of range"):
        parse_ranges(text, SEED_NOW_MS)


@pytest.mark.parametrize("text", ["+3000000d", "+99999999999w", "+" + "9" * 400 + "s"])
def test_reschedule_out_of_the_calendar_is_a_when_error(text: str) -> None:
    with pytest.raises(WhenError, match="out of range"):
        parse_when(text, SEED_NOW_MS)


@pytest.mark.parametrize(
    ("at", "said"),
    [
        (SEED_NOW_MS + 999 * 86_400_000, "in 999d"),
        (SEED_NOW_MS + 1000 * 86_400_000, "in 2y"),
        (int(datetime(9999, 12, 31, tzinfo=UTC).timestamp() * 1000), "in 7973y"),
        (2**63 - 1, "in >10ky"),
        (int(datetime(1, 1, 1, tzinfo=UTC).timestamp() * 1000), "2025y ago"),
        (-(2**63), ">10ky ago"),
    ],
)
def test_a_far_instant_fits_a_time_cell_whole(at: int, said: str) -> None:
    """NEXT RUN (9 columns) showed a job due in 9999 as "in 29121…": days, cut mid-number."""
    assert relative(at, SEED_NOW_MS) == said
    assert len(said) <= 9


def test_far_future_instants_format_without_raising() -> None:
    assert "9999" in absolute(FAR_FUTURE_MS) or "beyond" in absolute(FAR_FUTURE_MS)
    assert relative(FAR_FUTURE_MS, SEED_NOW_MS).startswith("in ")


async def test_far_future_next_run_opens_in_the_detail_screen(seeded_url: str) -> None:
    path = Path(seeded_url.removeprefix("sqlite:///"))
    monque = Monque(seeded_url, recover_stale_jobs=False)
    await monque.initialize()
    job = await monque.enqueue("far-future", {"n": 1})
    await monque.close()
    with sqlite3.connect(path) as db:
        table = next(
            row[0]
            for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if "job" in row[0] and "change" not in row[0] and "feed" not in row[0]
        )
        db.execute(f"UPDATE {table} SET next_run_at = ? WHERE id = ?", (FAR_FUTURE_MS, job.id))
    async with running_console(seeded_url) as (app, pilot):
        await wait_for(lambda: job.id in table_ids(app))
        await move_to(app, pilot, job.id)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
        await pilot.pause()
        assert app.is_running
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)


async def test_out_of_range_filter_and_reschedule_show_inline_errors(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("slash", "tab", "tab", *"created +999999999w..", "enter")
        bar = app.jobs_screen.query_one(FilterBar)
        await wait_for(lambda: bar.error is not None)
        assert "out of range" in bar.error  # type: ignore[operator]
        assert app.jobs_screen.query_state.ranges == ()
        await pilot.press("escape")
        app.jobs_screen.table.focus()
        await move_to(app, pilot, seed_id(1))
        await pilot.press("t")
        await wait_for(lambda: isinstance(app.screen, WhenScreen))
        await pilot.press(*"+3000000d", "enter")
        error = app.screen.query_one("#when-error", Static)
        await wait_for(lambda: "out of range" in str(error.render()))
        assert isinstance(app.screen, WhenScreen) and app.is_running
        await pilot.press("escape")
    assert await store_jobs(seeded_url) == before


def test_a_past_reschedule_time_is_refused_and_the_current_minute_is_now() -> None:
    """A past ISO time was taken in silence and the jobs ran at once (a slip in the year or day)."""
    now = datetime.fromtimestamp(SEED_NOW_MS / 1000, UTC)
    with pytest.raises(WhenError, match=r"is in the past .*type now to run at once"):
        parse_when((now - timedelta(days=365)).strftime("%Y-%m-%dT%H:%M"), SEED_NOW_MS)
    this_minute = now.replace(second=0, microsecond=0)
    assert parse_when(this_minute.isoformat(), SEED_NOW_MS) == this_minute
    assert parse_when("now", SEED_NOW_MS) == now


async def test_a_past_reschedule_time_keeps_the_prompt_and_the_jobs(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, seed_id(1))
        await pilot.press("t")
        await wait_for(lambda: isinstance(app.screen, WhenScreen))
        await pilot.press(*"2001-01-01T00:00", "enter")
        error = app.screen.query_one("#when-error", Static)
        await wait_for(lambda: "in the past" in str(error.render()))
        assert isinstance(app.screen, WhenScreen)
        await pilot.press("escape")
    assert await store_jobs(seeded_url) == before

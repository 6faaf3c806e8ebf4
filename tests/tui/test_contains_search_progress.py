"""A "contains" view shows how far its search got, keeps every key working, and stops at once
(issue 26, ADR 0008).

A text filter has no index: at 10M jobs its counts read the whole store for seconds, and so
does the page of a rare string. The console reads such a view in steps: the tabs line says
"searching… 60 of 300 jobs read" in place of the count, rows appear as they are found, and
Esc (or another filter) stops the reading, including the statement running on the store's
reader thread. A bulk key on such a view counts in steps too, and still confirms the exact
number. Real app under Pilot, a real SQLite file; a small step size makes a small store take
many steps, and a gate holds the engine's steps where the test wants to look.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from monque_engine import JobListFilter, Monque
from monque_engine.store.sqlite import scan
from monque_tui.console.app import MonqueConsole
from monque_tui.console.clock import frozen_clock
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.console.widgets.status_tabs import StatusTabs
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import store_jobs, table_ids, wait_for
from .toasts import said

JOBS = 300
STEP = 20
HOLD_AFTER = 3  # steps: the gate holds each read here, at 60 of 300 jobs read


class Gate:
    """Holds every read in steps after ``HOLD_AFTER`` steps until released; records which
    reads were closed (stopped or ended) and every stop flag the store's steps got."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.holding: set[str] = set()
        self.started: list[str] = []
        self.closed: list[str] = []
        self.stops: list[threading.Event] = []

    def wrap(self, original: Callable[..., AsyncIterator[Any]], what: str) -> Callable[..., AsyncIterator[Any]]:
        gate = self

        def call(monque: Monque, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            gate.started.append(what)
            steps = original(monque, *args, **kwargs)

            async def held() -> AsyncIterator[Any]:
                try:
                    seen = 0
                    async for progress in steps:
                        yield progress
                        seen += 1
                        if seen == HOLD_AFTER and not progress.done and not gate.release.is_set():
                            gate.holding.add(what)
                            try:
                                await gate.release.wait()
                            finally:
                                gate.holding.discard(what)
                finally:
                    await steps.aclose()  # type: ignore[attr-defined]
                    gate.closed.append(what)

            return held()

        return call


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Gate:
    gate = Gate()
    for name in ("count_jobs_in_steps", "get_jobs_in_steps", "count_bulk_in_steps"):
        monkeypatch.setattr(Monque, name, gate.wrap(getattr(Monque, name), name))
    real = scan.stoppable

    def recorded(op: Any, stop: threading.Event) -> Any:
        gate.stops.append(stop)
        return real(op, stop)

    monkeypatch.setattr(scan, "stoppable", recorded)
    return gate


@pytest.fixture
async def url(tmp_path: Path) -> str:
    """300 jobs; one in 50 holds "needle" (6), all of them "hay" or "needle"."""
    url = f"sqlite:///{tmp_path / 'search.db'}"
    m = Monque(url, recover_stale_jobs=False)
    await m.initialize()
    await m.enqueue_many(
        [{"name": "mail", "data": {"n": n, "tag": "needle" if n % 50 == 0 else "hay"}} for n in range(JOBS)]
    )
    await m.close()
    return url


@asynccontextmanager
async def console(url: str) -> AsyncIterator[tuple[MonqueConsole, Any]]:
    config = ConsoleConfig(url=url, scan_step=STEP)
    app = MonqueConsole(config, clock=frozen_clock(SEED_NOW_MS), live=True)
    async with app.run_test(size=(160, 36), notifications=True) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await pilot.pause()
        yield app, pilot


def tabs_text(app: MonqueConsole) -> str:
    return str(app.jobs_screen.query_one(StatusTabs).render())


async def contains(app: MonqueConsole, pilot: Any, text: str) -> None:
    """Type ``text`` in the filter bar's "contains" field, apply it, and leave the bar."""
    await pilot.press("slash")
    bar = app.jobs_screen.query_one(FilterBar)
    bar.query_one("#filter-text", Input).value = text
    await pilot.press("enter", "escape")  # applied at once; Esc leaves the bar (the search goes on)


async def test_the_tabs_say_how_far_the_search_got_and_esc_stops_it_at_once(url: str, gate: Gate) -> None:
    async with console(url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) > 0)
        await contains(app, pilot, "needle")
        await wait_for(lambda: {"count_jobs_in_steps", "get_jobs_in_steps"} <= gate.holding)
        await wait_for(lambda: "searching… 60 of 300 jobs read (Esc stops)" in tabs_text(app))
        # Every key works meanwhile: the table moves, the view can be made wide and back.
        table = app.jobs_screen.table
        for wide in (True, False):
            await pilot.press("z")
            await wait_for(lambda wide=wide: table.wide is wide)
        await pilot.press("escape")  # the table has the focus: Esc stops the search, keeps the filter
        await wait_for(lambda: sorted(gate.closed) == ["count_jobs_in_steps", "get_jobs_in_steps"])
        assert gate.stops and all(stop.is_set() for stop in gate.stops)  # no step reads on
        await wait_for(lambda: "searching" not in tabs_text(app))
        await wait_for(lambda: said(app, "Search stopped after 60 of 300 jobs read"))
        assert app.jobs_screen.session.query.text == "needle" and app.is_running
        await pilot.press("escape")  # nothing is being read now: Esc clears the filter, as always
        await wait_for(lambda: app.jobs_screen.session.query.text is None)


async def test_a_refresh_asked_during_the_search_does_not_read_it_again_after_esc(url: str, gate: Gate) -> None:
    """Seen as a flaky Esc test: the counts timer asked for a refresh while the view's count
    was being read (one more is queued when one runs); Esc stopped the count, and the queued
    refresh started the same count again at once, reading the whole store for a view the
    operator had stopped (the tabs said "searching…" again)."""
    async with console(url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) > 0)
        await contains(app, pilot, "needle")
        await wait_for(lambda: {"count_jobs_in_steps", "get_jobs_in_steps"} <= gate.holding)
        session = app.jobs_screen.session
        await session.refresh_stats()  # as the counts timer or a closing palette asks: queued behind the count
        await pilot.press("escape")
        await wait_for(lambda: sorted(gate.closed) == ["count_jobs_in_steps", "get_jobs_in_steps"])
        # The refresh that was running ends (held by the gate forever if it read again).
        await wait_for(lambda: not any(w.group == "stats" and w.is_running for w in app.workers))
        assert sorted(gate.started) == ["count_jobs_in_steps", "get_jobs_in_steps"]
        assert all(stop.is_set() for stop in gate.stops) and "searching" not in tabs_text(app)
        await session.refresh_stats()  # asked again later (polling, a resume): the stopped view is not read
        assert sorted(gate.started) == ["count_jobs_in_steps", "get_jobs_in_steps"]


async def test_a_new_filter_stops_the_old_search_and_the_new_one_ends_exact(url: str, gate: Gate) -> None:
    async with console(url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) > 0)
        await contains(app, pilot, "hay")
        await wait_for(lambda: {"count_jobs_in_steps"} <= gate.holding)
        await contains(app, pilot, "needle")  # the old search stops now; the new one starts
        await wait_for(lambda: gate.closed.count("count_jobs_in_steps") >= 1)
        gate.release.set()
        expected = 6
        await wait_for(lambda: f"— {expected:,} matching" in tabs_text(app))
        await wait_for(lambda: len(table_ids(app)) == expected)
        assert "searching" not in tabs_text(app)
        jobs = await store_jobs(url)
        assert set(table_ids(app)) == {job.id for job in jobs.values() if job.data["tag"] == "needle"}


async def test_clearing_the_contains_field_stops_the_search_and_its_progress_line(url: str, gate: Gate) -> None:
    async with console(url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) > 0)
        await contains(app, pilot, "needle")
        await wait_for(lambda: {"count_jobs_in_steps", "get_jobs_in_steps"} <= gate.holding)
        await wait_for(lambda: "searching…" in tabs_text(app))
        await contains(app, pilot, "")  # every job again: no text, nothing read in steps
        await wait_for(lambda: sorted(gate.closed) == ["count_jobs_in_steps", "get_jobs_in_steps"])
        await wait_for(lambda: f"1 All {JOBS}" in tabs_text(app) and len(table_ids(app)) > 6)
        assert "searching" not in tabs_text(app) and all(stop.is_set() for stop in gate.stops)


async def test_a_bulk_key_counts_in_steps_esc_stops_it_and_the_confirmed_count_is_exact(url: str, gate: Gate) -> None:
    async with console(url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) > 0)
        gate.release.set()
        await contains(app, pilot, "needle")
        await wait_for(lambda: "— 6 matching" in tabs_text(app) and len(table_ids(app)) == 6)
        gate.release.clear()
        await pilot.press("D")
        await wait_for(lambda: "count_bulk_in_steps" in gate.holding)
        await wait_for(lambda: "counting the jobs to delete… 60 of 300 jobs read (Esc stops)" in tabs_text(app))
        await pilot.press("escape")
        await wait_for(lambda: said(app, "Nothing to delete: the count was stopped"))
        assert not isinstance(app.screen, ConfirmScreen)
        gate.release.set()
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(lambda: said(app, "Deleted 6 jobs"))
    left = await store_jobs(url)
    assert len(left) == JOBS - 6 and all(job.data["tag"] == "hay" for job in left.values())


async def test_a_search_that_finds_nothing_says_how_far_it_got_until_it_ends(url: str, gate: Gate) -> None:
    async with console(url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) > 0)
        await contains(app, pilot, "no such text")
        await wait_for(lambda: "get_jobs_in_steps" in gate.holding)
        table = app.jobs_screen.table
        # The last view's rows leave the table; it says how far the search got instead.
        await wait_for(lambda: table.window is not None and not table.window.rows)
        await wait_for(lambda: table.placeholder == "Searching… 60 of 300 jobs read (Esc stops)")
        gate.release.set()
        await wait_for(lambda: table.placeholder == "No jobs match this view.")
        await wait_for(lambda: "— 0 matching" in tabs_text(app))
        m = Monque(url, recover_stale_jobs=False)
        await m.initialize()
        try:
            assert await m.count_jobs(JobListFilter(text="no such text")) == 0
        finally:
            await m.close()


async def test_a_search_stopped_before_any_row_says_so_not_that_no_job_matches(url: str, gate: Gate) -> None:
    """Seen in a real terminal on 1M jobs: Esc stopped the search, then the empty window that
    follows the stop drew "No jobs match this view." over the "stopped" line, and the tabs
    said "counts 28s old" beside counts they no longer showed."""
    async with console(url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) > 0)
        await contains(app, pilot, "no such text")
        await wait_for(lambda: {"count_jobs_in_steps", "get_jobs_in_steps"} <= gate.holding)
        table = app.jobs_screen.table
        await pilot.press("escape")  # the table has the focus: the search stops
        await wait_for(lambda: sorted(gate.closed) == ["count_jobs_in_steps", "get_jobs_in_steps"])
        await wait_for(lambda: table.window is not None and table.window.query.text == "no such text")
        await pilot.pause()
        assert table.placeholder == (
            "Search stopped after 60 of 300 jobs read: nothing found so far (Esc again clears the filter)."
        )
        app.jobs_screen.show_counts_age()
        assert "old" not in tabs_text(app)


def test_the_progress_line_follows_the_read_furthest_behind_so_it_never_goes_back() -> None:
    """On 1M jobs the line read "900k of 1M" (the count) then "800k of 1M" (the page, once
    the count had finished): it now reports the view's read furthest behind."""
    from monque_tui.console.screens.jobs import search_to_show
    from monque_tui.console.session.events import SearchProgressed

    query = JobListFilter()
    count, page = (
        SearchProgressed("count", query, 900_000, 1_000_000),
        SearchProgressed("page", query, 800_000, 1_000_000),
    )
    shown = [search_to_show({"count": count, "page": page}), search_to_show({"page": page})]
    assert [event.read for event in shown if event is not None] == [800_000, 800_000]
    bulk = SearchProgressed("delete", query, 10, 1_000_000)
    assert search_to_show({"delete": bulk, "count": count}) is bulk  # a bulk key's count comes first

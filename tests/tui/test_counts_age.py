"""The tabs say how old their counts are once that matters (a paused view, a big store).

Counts are re-read every second when cheap, but at most every 30 s on a big store and never while
the view is paused; "● live" beside 30-second-old counts said nothing of it. The session's
clock is moved here instead of waiting.
"""

from __future__ import annotations

import time

import pytest

from monque_tui.console.widgets.status_tabs import StatusTabs

from .conftest import running_console, wait_for


async def test_old_counts_say_their_age_and_fresh_ones_do_not(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        tabs = app.jobs_screen.query_one(StatusTabs)
        await wait_for(lambda: tabs.stats is not None and app.session.counts_age is not None)
        assert "counts" not in tabs.render().plain

        await pilot.press("p")  # paused: the counts are kept, and get older
        await wait_for(lambda: app.session.paused)
        # 25 s after whichever count is shown (one in flight at the pause may still land): the
        # clock is pinned to it, so a slow machine cannot make it "26s" (CI-class flake).
        session = app.session
        session.monotonic = lambda: (session.stats_counted_at or 0.0) + 25.0
        await wait_for(lambda: "· counts 25s old" in tabs.render().plain)
        assert "sorted by" in tabs.render().plain  # the view's own words stay

        session.monotonic = time.monotonic
        await pilot.press("p")  # resumed: counted again, the age goes
        await wait_for(lambda: tabs.counts_age is None)
        assert "counts" not in tabs.render().plain
        assert app.session.counts_age is not None and app.session.counts_age < 10


async def test_at_80_columns_the_age_gives_way_before_the_count(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 30)) as (app, pilot):
        tabs = app.jobs_screen.query_one(StatusTabs)
        await wait_for(lambda: tabs.stats is not None)
        tabs.counts_age = 3600
        await pilot.pause()
        line = tabs.render().plain
        assert "counts 1h00m old" not in line
        assert f"{tabs.stats.total:,}" in line  # type: ignore[union-attr]


async def test_fresh_counts_drop_the_age_as_they_land(seeded_url: str) -> None:
    """The age was only redrawn on the 1 s throughput tick: new counts landed beside
    "counts 30s old" for up to a second. Without timers (``live=False``) nothing else can
    clear it, so the counts' own arrival must."""
    async with running_console(seeded_url, live=False) as (app, _pilot):
        tabs = app.jobs_screen.query_one(StatusTabs)
        session = app.session
        await wait_for(lambda: tabs.stats is not None and session.counts_age is not None)
        session.monotonic = lambda: (session.stats_counted_at or 0.0) + 30.0
        app.jobs_screen.show_counts_age()
        await wait_for(lambda: "· counts 30s old" in tabs.render().plain)

        session.monotonic = time.monotonic
        counted = session.stats_counted_at
        await session.refresh_stats()
        assert session.stats_counted_at != counted
        await wait_for(lambda: "counts" not in tabs.render().plain)
        assert tabs.counts_age is None


@pytest.mark.parametrize("width", [86, 110])
async def test_the_age_never_shortens_the_tab_labels(seeded_url: str, width: int) -> None:
    """The age was counted in the room the labels must leave: when counts grew old the tabs
    went from "Pending" to "Pend" (110 columns) or "Pend" to "Pen" (86, where the age did
    not fit even then), the age pushing out what matters more instead of giving way."""
    async with running_console(seeded_url, size=(width, 30), live=False) as (app, _pilot):
        tabs = app.jobs_screen.query_one(StatusTabs)
        await wait_for(lambda: tabs.stats is not None)
        tabs.counts_age = None
        fresh = tabs.render().plain
        tabs.counts_age = 25
        old = tabs.render().plain
        assert old.split("│")[0] == fresh.split("│")[0], (fresh, old)

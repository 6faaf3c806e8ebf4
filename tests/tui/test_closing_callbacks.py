"""Callbacks that land while the console closes (CI failure, round 7).

The detail's once-a-second age redraw fired after the user quit, when Textual had already
emptied the screen stack, and ``app.screen`` raised ``ScreenStackError`` into the exit. Feed
flushes, the paused-names poll and finished actions can land in the same moment. Each is
called here after the app has closed, which is the state they meet then.
"""

from __future__ import annotations

from monque_tui.console.messages import SessionMessage
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.session.events import JobsChanged

from .conftest import running_console, table_ids, wait_for


async def _closed_console_with_detail(url: str):  # type: ignore[no-untyped-def]
    async with running_console(url) as (app, pilot):
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
        detail = app.screen
        shown = table_ids(app)[0]
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
    assert not app.screen_stack
    return app, detail, shown


async def test_the_detail_age_redraw_after_close_does_nothing(seeded_url: str) -> None:
    _, detail, _ = await _closed_console_with_detail(seeded_url)
    assert detail.job is not None and not detail.is_active
    detail._refresh_times()  # raised ScreenStackError: No screens on stack


async def test_feed_events_after_close_are_dropped(seeded_url: str) -> None:
    app, _, shown = await _closed_console_with_detail(seeded_url)
    assert app.top_screen is None
    app._session_event(JobsChanged(frozenset({shown})))
    app._tell_top_screen(SessionMessage(JobsChanged(frozenset({shown}))))


async def test_the_throughput_tick_while_the_jobs_screen_empties_does_nothing(seeded_url: str) -> None:
    """CI failure, round 8: the once-a-second graph tick met a JobsScreen whose children
    Textual had already removed, and ``query_one(ThroughputGraph)`` raised into the exit."""
    app, _, _ = await _closed_console_with_detail(seeded_url)
    assert not app.jobs_screen.children and app.closing
    app._throughput_tick()
    app.jobs_screen.show_throughput()
    app.jobs_screen.show_counts_age()

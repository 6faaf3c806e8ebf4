"""While a new view loads, the previous view's rows are not this view's (probe 5).

In tmux on a busy 140k-job store, the pending tab with the name glob `b*flaky` (no such
name) took seconds to load; meanwhile the table kept the previous view's `gamma` rows under
"pending names 'b*flaky' → 0 names … 0 matching", and `c` offered "Cancel job … (gamma)?".
Now no key takes the cursor row as a target until the new view's first page is in, those
keys say why, and the old rows leave the table after a moment.
"""

from __future__ import annotations

import asyncio
from typing import Any

from monque_engine import JobStatus
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.detail import JobDetailScreen

from .conftest import running_console, wait_for
from .toasts import toast_lines


def _messages(app: object) -> list[str]:
    return toast_lines(app)  # type: ignore[arg-type]


def _slow_failed_view(app: Any) -> asyncio.Event:
    """The failed view's first page waits for the returned event (a slow view on a busy store)."""
    monque = app.session.monque
    real_page = monque.get_jobs_with_cursor
    release = asyncio.Event()

    async def slow_for_failed(*args: Any, **kwargs: Any) -> Any:
        listing = kwargs.get("filter") if "filter" in kwargs else args[3]
        if listing is not None and listing.status == JobStatus.FAILED:
            await release.wait()
        return await real_page(*args, **kwargs)

    monque.get_jobs_with_cursor = slow_for_failed
    return release


async def test_keys_do_not_act_on_the_previous_views_rows_while_a_view_loads(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = app.jobs_screen
        release = _slow_failed_view(app)  # the failed view's first page takes its time
        assert screen.window.rows and screen.session.cursor is not None
        await pilot.press("5")
        await wait_for(lambda: screen.session.query.status is JobStatus.FAILED)
        assert screen.window.query != screen.session.query  # still loading
        await wait_for(lambda: not screen.table.rows)  # the old rows left the table
        assert screen.table.placeholder == "Loading…"
        for key in ("c", "d", "space"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, key  # no confirmation, no detail
        assert any(m.startswith("The view is still loading") for m in _messages(app))
        assert not screen.session.marks
        release.set()
        await wait_for(lambda: screen.window.query == screen.session.query and len(screen.table.rows) > 0)
        assert all(job.status is JobStatus.FAILED for job in screen.window.rows)
        await pilot.press("d")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.plan.job_ids == (screen.session.cursor.id,)
        await pilot.press("n")


async def _page_arrives_before_the_keys_frame(app: Any, pilot: Any, key: str) -> None:
    """Press ``key`` (a tab) on a slow view; let its page arrive while a key's frame is pending.

    Between the page's arrival (the session stops "loading") and its rows reaching the table
    (after the pending frame, up to 0.25 s), the table held the previous view's rows, or none
    once they had left (probe 6: the soak's ``1`` then Enter under load did nothing, silently).
    The frame is held back here by not running the app's after-frame hook until the next key.
    """
    screen = app.jobs_screen
    release = _slow_failed_view(app)
    await pilot.press(key)
    await wait_for(lambda: not screen.table.rows)  # the previous view's rows left the table
    hook = app.post_display_hook
    app.post_display_hook = lambda: None  # the next frame is not written yet
    app._key_since_frame = True
    release.set()
    await wait_for(lambda: not app.session.loading and bool(app._after_key_frame))
    assert not screen.table.rows  # the page is in the session, not yet on screen
    app.post_display_hook = hook


async def test_enter_right_after_a_views_page_arrives_opens_that_views_job(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await _page_arrives_before_the_keys_frame(app, pilot, "5")
        await pilot.press("enter")
        await wait_for(lambda: app.screen is not app.jobs_screen)
        detail = app.screen
        await wait_for(lambda: detail.job is not None)
        assert detail.job.status is JobStatus.FAILED  # the failed view's first row
        assert detail.job.id == app.jobs_screen.window.rows[0].id


async def test_cancel_right_after_a_views_page_arrives_targets_that_views_job(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await _page_arrives_before_the_keys_frame(app, pilot, "5")
        await pilot.press("r")  # retry: failed jobs only
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.job_ids == (app.jobs_screen.window.rows[0].id,)
        assert app.jobs_screen.window.rows[0].status is JobStatus.FAILED
        await pilot.press("n")


async def test_enter_while_a_view_loads_opens_its_first_job_once_it_has_loaded(seeded_url: str) -> None:
    """Tab then Enter at once (the soak's ``1`` then Enter on a busy store): Enter said "still
    loading" and did nothing. It now waits for the view and opens its job under the cursor."""
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        release = _slow_failed_view(app)
        await pilot.press("5")
        await wait_for(lambda: screen.session.query.status is JobStatus.FAILED)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen  # nothing to open yet, and not the previous view's job
        release.set()
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen))
        assert isinstance(app.screen, JobDetailScreen)
        assert app.screen.job_id == screen.window.rows[0].id
        assert screen.window.rows[0].status is JobStatus.FAILED


async def test_an_enter_waiting_for_a_view_is_dropped_when_another_view_is_chosen(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        release = _slow_failed_view(app)
        await pilot.press("5", "enter", "2")  # Enter on the failed view, then the pending tab
        await wait_for(lambda: screen.session.query.status is JobStatus.PENDING)
        await wait_for(lambda: screen.window.query == screen.session.query and len(screen.table.rows) > 0)
        release.set()
        await pilot.pause()
        await pilot.pause()
        assert app.screen is screen  # the Enter was for the failed view: nothing opened

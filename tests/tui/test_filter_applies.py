"""What the filter bar shows is what the actions apply (issue 10, defects 3 and 4)."""

from __future__ import annotations

from monque_engine import JobStatus
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.export import ExportScreen
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.demo.seed import SEED_JOBS

from .conftest import running_console, store_jobs, table_ids, wait_for
from .toasts import said, said_first

EMAIL = {job.id for job in SEED_JOBS if job.name == "send-email"}


async def test_a_typed_name_applies_without_enter_and_bulk_uses_it(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("slash", *"send-email", "tab")
        await wait_for(lambda: set(table_ids(app)) == EMAIL)
        assert app.jobs_screen.query_state.name == "send-email"
        app.jobs_screen.table.focus()
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        plan = app.screen.plan  # type: ignore[attr-defined]
        assert plan.query.name == "send-email" and plan.count == len(EMAIL)
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Deleted"))
    after = await store_jobs(seeded_url)
    assert set(before) - set(after) == EMAIL


async def test_an_unapplied_time_range_blocks_bulk_actions(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("slash", "tab", "tab", *"created -1h..")
        bar = app.jobs_screen.query_one(FilterBar)
        assert bar.unapplied is not None
        app.jobs_screen.table.focus()
        await pilot.press("D")
        await wait_for(lambda: said(app, "not applied yet"))
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("slash", "tab", "tab", "enter", "escape")  # apply it
        await wait_for(lambda: bar.unapplied is None and app.jobs_screen.query_state.ranges != ())
    assert await store_jobs(seeded_url) == before


async def test_the_table_refills_after_a_bulk_action(seeded_url: str) -> None:
    """Reproduction from the issue: 2, / name Enter, a, c, y left "No jobs match" over a non-empty view."""
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("2")
        await wait_for(lambda: app.jobs_screen.window.query.status is JobStatus.PENDING)
        await pilot.press("slash", *"send-email", "enter", "escape")
        await wait_for(lambda: app.jobs_screen.window.query.name == "send-email")
        pending_email = [j.id for j in SEED_JOBS if j.name == "send-email" and j.status is JobStatus.PENDING]
        assert set(table_ids(app)) == set(pending_email)
        await pilot.press("a", "c")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Cancelled"))
        await wait_for(lambda: table_ids(app) == [] and app.jobs_screen.table.placeholder != "")
        # The view is empty now; the header must agree (0 matching), and going back shows rows.
        await wait_for(lambda: app.jobs_screen.query_one("StatusTabs").matching in (0, None))
        await pilot.press("1")
        await wait_for(lambda: set(pending_email) <= set(table_ids(app)))
        await pilot.press("j", "pagedown", "g")
        assert table_ids(app)


async def test_cancelling_every_loaded_row_of_a_long_view_loads_the_next_rows(seeded_url: str) -> None:
    from monque_engine import Monque

    other = Monque(seeded_url, recover_stale_jobs=False)
    await other.initialize()
    await other.enqueue_many([{"name": "bulk-x", "data": {"i": i}} for i in range(450)])
    await other.close()
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("2", "slash", *"bulk-x", "enter", "escape")
        await wait_for(lambda: app.jobs_screen.window.query.name == "bulk-x" and len(table_ids(app)) > 0)
        loaded = len(table_ids(app))
        assert loaded < 450 and app.jobs_screen.window.has_after
        await pilot.press("a", "c")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Cancelled"))
        # The rows that remain pending fill the table again, and the header agrees.
        await wait_for(
            lambda: len(table_ids(app)) > 0 and all(j.status is JobStatus.PENDING for j in app.jobs_screen.window.rows),
            10,
        )
        await wait_for(lambda: app.jobs_screen.query_one("StatusTabs").matching == 450 - loaded)


async def test_the_id_shown_in_the_table_can_be_searched(seeded_url: str) -> None:
    from monque_tui.console.formatting import short_id
    from monque_tui.demo.seed import seed_id

    target = seed_id(7)
    shown = short_id(target)
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("slash", "tab", *shown)
        await wait_for(lambda: table_ids(app) == [target])


async def test_a_refused_payload_term_blocks_mark_all_export_and_the_marked_view(seeded_url: str) -> None:
    """``data.n > 5`` is refused and the view stays every job; ``A`` then ``d`` offered to delete them all.

    C R D refused already (the bar is not what the view applies); ``A``, ``E`` and the keys that
    act on a view marked with ``A`` before the term was typed did not (probe finding).
    """
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = app.jobs_screen
        bar = screen.query_one(FilterBar)
        await pilot.press("slash", "tab", "tab", *"data.n > 5", "enter")
        await wait_for(lambda: bar.error is not None)
        assert bar.unapplied is not None and screen.query_state.data == ()
        screen.table.focus()
        await pilot.press("A")
        await wait_for(lambda: said(app, "is not applied"))
        assert app.session.marked_view is None
        await pilot.press("E")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen)
        # A view marked whole before the term was typed: its c/r/d refuse too while the bar disagrees.
        await pilot.press("slash", "tab", "tab", "ctrl+u", "enter", "escape")
        await wait_for(lambda: bar.unapplied is None)
        await pilot.press("A")
        await wait_for(lambda: app.session.marked_view is not None)
        await pilot.press("slash", "tab", "tab", *"data.n > 5", "enter", "escape")
        await wait_for(lambda: bar.unapplied is not None)
        app.clear_notifications()
        await pilot.press("d")
        await wait_for(lambda: said(app, "is not applied"))
        assert not isinstance(app.screen, ConfirmScreen)
    assert await store_jobs(seeded_url) == before

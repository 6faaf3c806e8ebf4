"""Bulk on any filter and "mark all matching" (issue 13 item 5), on real SQLite files with Pilot.

C / R / D act with every filter the bar offers through the engine's ``JobListFilter`` bulk
calls (one store operation), still bounded to what was counted and confirmed. ``A`` marks
every job of the view (a view-level mark counted in the store, not the loaded rows).
"""

from __future__ import annotations

from monque_engine import JobStatus, Monque
from monque_tui.console.actions import ActionKind, wall_clock_ms
from monque_tui.console.query import JobQuery, TimeRange
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets.console_header import ConsoleHeader
from monque_tui.console.window import PAGE_SIZE
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import running_console, store_jobs, wait_for
from .toasts import said_first

MANY = PAGE_SIZE + 50


async def enqueue(url: str, name: str, count: int) -> list[str]:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        jobs = await monque.enqueue_many([{"name": name, "data": {"n": n}} for n in range(count)])
        return [job.id for job in jobs]
    finally:
        await monque.close()


async def test_mark_all_matching_marks_every_job_of_the_view_and_d_deletes_them(seeded_url: str) -> None:
    many = set(await enqueue(seeded_url, "bulk", MANY))
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = app.jobs_screen
        screen.apply_query(JobQuery(name="bulk"))
        await wait_for(lambda: screen.window.query.name == "bulk" and len(screen.window) > 0)
        assert len(screen.window) < MANY  # the loaded rows are fewer than the view
        screen.table.focus()
        await pilot.press("A")
        header = screen.query_one(ConsoleHeader)
        await wait_for(lambda: header.marked_all and header.marked == MANY)
        assert f"all {MANY:,} matching marked" in str(header.render())
        assert screen.table.all_marked  # every row of the view draws as marked
        assert screen.check_action("act", ("reschedule",)) is None  # no bulk form
        await pilot.press("d")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.plan.count == MANY and app.screen.plan.is_bulk
        await pilot.press("y")
        await wait_for(lambda: said_first(app, f"Deleted {MANY} jobs"))
        await wait_for(lambda: not header.marked_all and header.marked == 0)
        assert not screen.table.all_marked
    after = await store_jobs(seeded_url)
    assert set(after) == set(before) - many


async def test_a_new_view_drops_the_view_mark(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.press("A")
        await wait_for(lambda: app.session.marked_view is not None)
        await pilot.press("5")
        await wait_for(lambda: app.session.marked_view is None)
        header = screen.query_one(ConsoleHeader)
        await wait_for(lambda: not header.marked_all)


async def test_delete_all_with_a_text_filter_reaches_only_the_matching_jobs(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    key = next(job.unique_key for job in before.values() if job.unique_key)
    assert key is not None
    query = JobQuery(search=key[:6])
    matching = {job_id for job_id, job in before.items() if query.matches(job)}
    assert matching
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = app.jobs_screen
        screen.apply_query(query)
        await wait_for(lambda: screen.window.query == query)
        assert screen.check_action("act_all", ("delete",)) is True
        screen.table.focus()
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.count == len(matching)
        assert repr(key[:6]) in app.screen.plan.question
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Deleted"))
    after = await store_jobs(seeded_url)
    assert set(after) == set(before) - matching


async def test_an_updated_range_bulk_never_reaches_more_than_was_confirmed(seeded_url: str) -> None:
    """Counted, then a job that matches the view appears: the act stops at the count instant."""
    old = set(await enqueue(seeded_url, "late", 3))
    query = JobQuery(name="late", ranges=(TimeRange("updated_at", SEED_NOW_MS, None),))
    async with running_console(seeded_url) as (app, _pilot):
        session = app.session
        plan = await session.plan_bulk(ActionKind.DELETE, query)
        assert plan is not None and plan.count == 3
        await wait_for(lambda: wall_clock_ms() > (plan.as_of_ms or 0))  # the next job is stamped after it
        newer = set(await enqueue(seeded_url, "late", 1))
        assert await session.run_plan(plan) is None
    after = await store_jobs(seeded_url)
    assert not (old & set(after)) and newer <= set(after)
    assert all(job.status is JobStatus.PENDING for job_id, job in after.items() if job_id in newer)

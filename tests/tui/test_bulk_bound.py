"""A bulk action never affects more jobs than the operator confirmed (issue 10, defect 2).

The count is taken when the dialog asks; jobs added (or changed) while it is open are left
alone, because the action carries the count's instant as an ``updated_before`` bound.
"""

from __future__ import annotations

from dataclasses import replace

from monque_engine import JobStatus, Monque
from monque_tui.console.actions import ActionKind, plan_bulk, recount
from monque_tui.console.query import JobQuery
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.demo.seed import SEED_JOBS

from .conftest import running_console, store_jobs, wait_for
from .toasts import said_first, toast_lines


async def test_jobs_added_while_the_dialog_is_open_are_not_deleted(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.count == len(SEED_JOBS)  # type: ignore[attr-defined]
        other = Monque(seeded_url, recover_stale_jobs=False)
        await other.initialize()
        try:
            added = await other.enqueue_many([{"name": "meanwhile", "data": {"i": i}} for i in range(20)])
            # and one counted job changes meanwhile: it is no longer what was confirmed either
            changed = next(job for job in SEED_JOBS if job.status is JobStatus.PENDING)
            await other.cancel_job(changed.id)
        finally:
            await other.close()
        await pilot.press(*str(len(SEED_JOBS)), "enter")
        await wait_for(lambda: said_first(app, "Deleted"))
        message = next(line for line in toast_lines(app) if line.startswith("Deleted"))
        assert message.startswith(f"Deleted {len(SEED_JOBS) - 1:,} jobs")
    left = await store_jobs(seeded_url)
    assert set(left) == {job.id for job in added} | {changed.id}


async def test_recount_asks_again_only_when_more_match(seeded_url: str) -> None:
    monque = Monque(seeded_url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        plan = await plan_bulk(monque, ActionKind.DELETE, JobQuery())
        assert plan.count == len(SEED_JOBS) and plan.as_of_ms is not None
        await monque.enqueue("later")
        assert await recount(monque, plan) is None  # the new job is after the bound
        # a plan that under-counted (as if the count had been taken earlier) is asked again
        grown = await recount(monque, replace(plan, count=plan.count - 3))
        assert grown is not None and grown.count == len(SEED_JOBS)
        assert f"({len(SEED_JOBS)} jobs)" in grown.subject
    finally:
        await monque.close()

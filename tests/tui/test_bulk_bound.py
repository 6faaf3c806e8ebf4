"""A bulk action never affects more jobs than the operator confirmed (issue 10, defect 2).

The count is taken when the dialog asks; jobs added (or changed) while it is open are left
alone, because the action carries the count's place in commit order as its bound. Here:
the recount before acting; the whole path on the session core is in test_session_actions.py.
"""

from __future__ import annotations

from dataclasses import replace

from monque_engine import Monque
from monque_tui.console.actions import ActionKind, plan_bulk, recount
from monque_tui.console.query import JobQuery
from monque_tui.demo.seed import SEED_JOBS


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

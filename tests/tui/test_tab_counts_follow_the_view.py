"""Every count on the tabs line describes the view beside it (issue 28).

The tabs followed the name filter only: with an id, a time range or "contains" text they
still counted every job of the store. Real app driven by Pilot over a seeded SQLite file.
"""

from __future__ import annotations

from monque_engine import JobStatus
from monque_tui.console.widgets.status_tabs import StatusTabs
from monque_tui.demo.seed import SEED_JOBS, seed_id

from .conftest import running_console, table_ids, wait_for


def _counts(app: object) -> dict[JobStatus | None, int] | None:
    stats = app.jobs_screen.query_one(StatusTabs).stats  # type: ignore[attr-defined]
    if stats is None:
        return None
    return {None: stats.total, **{status: stats.count(status) for status in JobStatus}}


async def test_contains_text_counts_each_status_of_the_view(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await wait_for(lambda: len(table_ids(app)) == len(SEED_JOBS))
        await pilot.press("slash", "tab", "tab", "tab", *"timed out", "enter")
        await wait_for(lambda: set(table_ids(app)) == {seed_id(12), seed_id(13)})
        # seed 12 failed, seed 13 pending (retrying): the tabs say so, not the store's totals.
        await wait_for(lambda: _counts(app) is not None and _counts(app)[None] == 2)
        counts = _counts(app)
        assert counts is not None
        assert counts[JobStatus.FAILED] == 1 and counts[JobStatus.PENDING] == 1 and counts[JobStatus.COMPLETED] == 0
        assert screen.query_one(StatusTabs).matching == 2


async def test_an_id_filter_counts_its_one_job(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) == len(SEED_JOBS))
        await pilot.press("slash", "tab", *seed_id(2)[-8:])
        await wait_for(lambda: table_ids(app) == [seed_id(2)])
        await wait_for(lambda: _counts(app) is not None and _counts(app)[None] == 1)
        assert _counts(app)[JobStatus.FAILED] == 1  # type: ignore[index]

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
from monque_tui.screens.confirm import ConfirmScreen

from .conftest import running_console, wait_for


def _messages(app: object) -> list[str]:
    return [str(n.message) for n in app._notifications]  # type: ignore[attr-defined]


async def test_keys_do_not_act_on_the_previous_views_rows_while_a_view_loads(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        monque = app.session.monque
        real_page = monque.get_jobs_with_cursor
        release = asyncio.Event()

        async def slow_for_failed(*args: Any, **kwargs: Any) -> Any:
            listing = kwargs.get("filter") if "filter" in kwargs else args[3]
            if listing is not None and listing.status == JobStatus.FAILED:
                await release.wait()  # the failed view's first page takes its time
            return await real_page(*args, **kwargs)

        monque.get_jobs_with_cursor = slow_for_failed
        assert screen.window.rows and screen.session.cursor is not None
        await pilot.press("5")
        await wait_for(lambda: screen.session.query.status is JobStatus.FAILED)
        assert screen.window.query != screen.session.query  # still loading
        await wait_for(lambda: not screen.table.rows)  # the old rows left the table
        assert screen.table.placeholder == "Loading…"
        for key in ("c", "d", "space", "enter"):
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

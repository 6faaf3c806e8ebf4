"""Rows deleted behind the feed's back (the ``sqlite3`` shell) leave the view (probe finding).

Hand edits are not in the SQLite change feed (ADR 0001). The tabs' counts, read every two
seconds, dropped to "All 0" while the table still listed the deleted job and its open detail
showed it as existing. Now a view loaded whole whose count disagrees with its rows on two
refreshes running is reloaded once, and an open detail reads its job again. (That it is
reloaded once, not once per refresh: test_session_feed.py.) Real app driven
by Pilot over a real SQLite file; the rows are deleted with plain ``sqlite3``; the console's
own stats timer drives the refreshes.

Counts come from what the store keeps with every change (journal.py), which a hand edit
bypasses: the operator runs ``monque-tui repair-counts`` after it (``_repair``), and from
then on the count disagrees with the rows on screen as it did before.
"""

from __future__ import annotations

import sqlite3

from textual.widgets import Static

from monque_engine import Monque
from monque_tui.demo.seed import SEED_JOBS, seed_id

from .conftest import open_detail, running_console, table_ids, wait_for

GONE = seed_id(1)
ALSO_GONE = seed_id(3)


async def _repair(url: str) -> None:
    """What ``monque-tui repair-counts`` does, from another connection as the command would."""
    async with Monque(url, recover_stale_jobs=False) as other:
        assert await other.repair_counts()


async def test_hand_deleted_rows_leave_the_table_and_the_detail(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        assert len(table_ids(app)) == len(SEED_JOBS)  # the whole view is loaded
        detail = await open_detail(app, pilot, GONE)
        conn = sqlite3.connect(seeded_url.removeprefix("sqlite:///"))
        conn.execute("DELETE FROM monque_jobs WHERE id IN (?, ?)", (GONE, ALSO_GONE))
        conn.commit()
        conn.close()
        await _repair(seeded_url)
        body = lambda: str(detail.query_one("#detail-body", Static).render())  # noqa: E731
        await wait_for(lambda: "no longer exists" in body(), timeout=20)
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        await wait_for(lambda: GONE not in table_ids(app) and ALSO_GONE not in table_ids(app), timeout=20)
        stats = app.session.stats
        assert stats is not None and stats.total == len(table_ids(app)) == len(SEED_JOBS) - 2

"""Rows deleted behind the feed's back (the ``sqlite3`` shell) leave the view (probe finding).

Hand edits are not in the SQLite change feed (ADR 0001). The tabs' counts, read every two
seconds, dropped to "All 0" while the table still listed the deleted job and its open detail
showed it as existing. Now a view loaded whole whose count disagrees with its rows on two
refreshes running is reloaded once, and an open detail reads its job again. Real app driven
by Pilot over a real SQLite file; the rows are deleted with plain ``sqlite3``; the console's
own stats timer drives the refreshes.

Counts come from what the store keeps with every change (journal.py), which a hand edit
bypasses: the operator runs ``monque-tui repair-counts`` after it (``_repair``), and from
then on the count disagrees with the rows on screen as it did before.
"""

from __future__ import annotations

import asyncio
import sqlite3

from textual.widgets import Static

from monque_engine import Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.clock import frozen_clock
from monque_tui.console.config import ConsoleConfig
from monque_tui.demo.seed import SEED_JOBS, SEED_NOW_MS, seed_id

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


async def test_a_lasting_disagreement_is_reloaded_once(seeded_url: str) -> None:
    """Should a reload not settle it (rows the listing skips), one reload, not one per refresh."""
    config = ConsoleConfig(url=seeded_url, monque_options={"stats_cache_ttl": 0})  # each refresh counts afresh
    app = MonqueConsole(config, clock=frozen_clock(SEED_NOW_MS), live=False)
    async with app.run_test(size=(140, 36)):
        await asyncio.wait_for(app.ready.wait(), 10)
        session = app.session
        reloads = 0

        async def counted() -> bool:
            nonlocal reloads
            reloads += 1
            return True  # a reload that leaves the rows as they were

        session.reload_around_cursor = counted  # type: ignore[method-assign]
        # The app's own first count, done: a refresh asked while one runs only asks for another
        # (under load the first one was still running, and the six below returned at once).
        await wait_for(lambda: session.stats is not None and not session._stats_busy)
        conn = sqlite3.connect(seeded_url.removeprefix("sqlite:///"))
        conn.execute("DELETE FROM monque_jobs WHERE id = ?", (GONE,))
        conn.commit()
        conn.close()
        await _repair(seeded_url)
        for _ in range(6):  # what six stats ticks do
            await session.refresh_stats()
        assert session.stats is not None and session.stats.total == len(SEED_JOBS) - 1
        assert reloads == 1

"""A bounded soak: thousands of live changes must leave every console structure bounded.

No timing thresholds: the console once grew its window by every job a producer added (and its
flash table by every row it ever highlighted), which is what made RSS climb 2.3 MB/s. The
long, timed variant is ``python -m bench.tui_bench --soak`` (figures in the README).
"""

from __future__ import annotations

from monque_engine import JobSelector, Monque
from monque_tui.console.session.feed import HISTORY_SECONDS, MAX_CLAIMED, MAX_PENDING
from monque_tui.console.window import CAPACITY

from .conftest import running_console, wait_for

BATCHES = 12
PER_BATCH = 200  # 2,400 new jobs, all sorting at the top of the newest-first view


async def test_live_changes_keep_every_structure_bounded(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 45)) as (app, pilot):
        session = app.session
        await wait_for(lambda: session.feed_state == "live")
        other = Monque(seeded_url, recover_stale_jobs=False)
        await other.initialize()
        try:
            for batch in range(BATCHES):
                jobs = await other.enqueue_many(
                    [{"name": f"soak-{batch % 3}", "data": {"i": i}} for i in range(PER_BATCH)]
                )
                await wait_for(
                    lambda last=jobs[-1].id: session.window.get(last) is not None or session.window.has_before, 20
                )
                await other.cancel_jobs(JobSelector(name=f"soak-{batch % 3}"))
            await other.delete_jobs(JobSelector(name="soak-0"))
        finally:
            await other.close()
        await wait_for(lambda: session.buffer.pending == 0, 20)
        await pilot.pause()
        table = app.jobs_screen.table
        assert len(session.window) <= CAPACITY
        assert len(table._flash) <= CAPACITY
        assert session.buffer.pending <= MAX_PENDING
        assert session.throughput.bucket_count <= HISTORY_SECONDS
        assert len(session.throughput._claimed) <= MAX_CLAIMED
        assert table.cursor_job is not None  # the cursor stayed on a job
        # still answering keys
        await pilot.press("g", "4", "1")
        await wait_for(lambda: session.window.query.status is None and len(session.window) > 0)

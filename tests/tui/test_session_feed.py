"""Live changes on the console's session core alone (no Textual, no Pilot): another
instance's writes reach the view through the feed at each flush (which the app's timer
calls a few times a second; here the test calls it), a pause holds them, and the counts
follow. Real SQLite files, real ``Monque`` writers."""

from __future__ import annotations

import sqlite3

from monque_engine import JobStatus, Monque
from monque_tui.console.query import JobQuery
from monque_tui.console.session.events import MarksChanged, WindowChanged
from monque_tui.demo.seed import SEED_JOBS, seed_id

from .conftest import console_session, flush_until, wait_for


async def _enqueue(url: str, name: str, count: int) -> None:
    async with Monque(url, recover_stale_jobs=False) as other:
        await other.enqueue_many([{"name": name, "data": {"i": i}} for i in range(count)])


async def test_another_instance_s_job_enters_changes_and_leaves_the_view(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, events):
        await session.load_top()
        await wait_for(lambda: session.feed_state == "live")
        async with Monque(seeded_url, recover_stale_jobs=False) as other:
            job = await other.enqueue("from-elsewhere", {"n": 1})
            await flush_until(session, lambda: session.window.get(job.id) is not None)
            assert session.window.rows[0].id == job.id  # newest first
            await other.cancel_job(job.id)
            await flush_until(session, lambda: session.window.get(job.id).status is JobStatus.CANCELLED)  # type: ignore[union-attr]
            await other.delete_job(job.id)
            await flush_until(session, lambda: session.window.get(job.id) is None)
        diffs = [e.diff for e in events if isinstance(e, WindowChanged)]
        assert any(job.id in d.inserted for d in diffs) and any(job.id in d.updated for d in diffs)
        assert any(job.id in d.removed for d in diffs)
        await session.refresh_stats()
        assert session.stats is not None and session.stats.total == len(SEED_JOBS)


async def test_a_paused_view_holds_changes_until_resumed(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, _):
        await session.load_top()
        await wait_for(lambda: session.feed_state == "live")
        session.set_paused(True)
        async with Monque(seeded_url, recover_stale_jobs=False) as other:
            job = await other.enqueue("while-paused")
        await wait_for(lambda: session.buffer.events >= 1)  # the feed has it ...
        await session.flush()
        assert session.window.get(job.id) is None  # ... and the paused view does not show it
        session.set_paused(False)
        await session.flush()
        assert session.window.get(job.id) is not None


async def test_live_jobs_are_placed_by_the_name_glob(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, _):
        session.set_query(JobQuery(name="s*"))
        await session.load_top()
        await wait_for(lambda: session.feed_state == "live")
        async with Monque(seeded_url, recover_stale_jobs=False) as other:
            inside = await other.enqueue("sms-out", {})
            outside = await other.enqueue("webhook", {})
        await wait_for(lambda: session.buffer.events >= 2)
        await session.flush()
        assert session.window.get(inside.id) is not None and session.window.get(outside.id) is None


async def test_the_mark_of_a_whole_view_follows_its_count(seeded_url: str) -> None:
    """After ``A`` the header kept the count taken when the key was pressed while the tab
    beside it moved on (probe 5): each count of the view now moves the mark's count too."""
    await _enqueue(seeded_url, "bulk", 30)
    async with console_session(seeded_url, monque_options={"stats_cache_ttl": 0}) as (session, events):
        session.set_query(JobQuery(name="bulk"))
        await session.load_top()
        assert await session.mark_matching() == 30
        assert events[-1] == MarksChanged(30, everything=True) and session.marked_view == session.query
        await _enqueue(seeded_url, "bulk", 7)  # another process adds to the marked view
        await session.refresh_stats()
        assert [e for e in events if isinstance(e, MarksChanged)][-1] == MarksChanged(37, everything=True)


async def test_a_lasting_disagreement_of_count_and_rows_is_reloaded_once(seeded_url: str) -> None:
    """Rows deleted behind the feed's back (the ``sqlite3`` shell, then ``repair-counts``)
    leave a wholly loaded view reloaded; should a reload not settle it (rows the listing
    skips), one reload, not one per refresh (test_hand_edits_heal.py shows the whole path)."""
    async with console_session(seeded_url, live=False, monque_options={"stats_cache_ttl": 0}) as (session, _):
        await session.load_top()
        await session.refresh_stats()  # count and rows agree
        reloads = 0

        async def counted() -> bool:
            nonlocal reloads
            reloads += 1
            return True  # a reload that leaves the rows as they were

        session.reload_around_cursor = counted  # type: ignore[method-assign]
        conn = sqlite3.connect(seeded_url.removeprefix("sqlite:///"))
        conn.execute("DELETE FROM monque_jobs WHERE id = ?", (seed_id(1),))
        conn.commit()
        conn.close()
        async with Monque(seeded_url, recover_stale_jobs=False) as other:
            assert await other.repair_counts()  # what ``monque-tui repair-counts`` does
        for _ in range(6):  # what six stats ticks do
            await session.refresh_stats()
        assert session.stats is not None and session.stats.total == len(SEED_JOBS) - 1
        assert reloads == 1

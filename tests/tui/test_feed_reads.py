"""The console reads each changed job once per flush, and only the jobs its view can show.

The feed carries no documents (``watch(full_document=False)``): reading and decoding the job
with each of its ~3 changes on a busy queue (insert, claim, completion) was most of the
console's CPU there. These tests drive a bare ``ConsoleSession`` (no app, so no flush timer:
each flush is the test's) against another process-like ``Monque`` on the same file.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from monque_engine import JobSelector, JobStatus, Monque
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.session import ConsoleSession
from monque_tui.console.session.events import JobsChanged

from .conftest import wait_for


async def _open(url: str) -> tuple[ConsoleSession, list[object], list[list[str]]]:
    events: list[object] = []
    session = ConsoleSession(ConsoleConfig(url=url), emit=events.append)
    await session.open()
    monque = session.monque
    assert monque is not None
    reads: list[list[str]] = []
    real = monque.get_jobs_by_id

    async def spy(job_ids: Any) -> Any:
        asked = list(job_ids)
        reads.append(asked)
        return await real(asked)

    monque.get_jobs_by_id = spy  # type: ignore[method-assign]
    await wait_for(lambda: session.feed_state == "live")
    return session, events, reads


async def test_a_job_changed_twice_between_flushes_is_read_once_in_its_latest_state(store_url: str) -> None:
    session, events, reads = await _open(store_url)
    other = Monque(store_url, recover_stale_jobs=False)
    await other.initialize()
    try:
        await session.load_top()  # "all", newest first: every new job enters at the top
        jobs = await other.enqueue_many([{"name": "twice", "data": {"i": i}} for i in range(20)])
        for job in jobs:
            await other.reschedule_job(job.id, timedelta(hours=2))
        await wait_for(lambda: session.buffer.events == 40)
        await session.flush()
        assert len(reads) == 1 and sorted(reads[0]) == sorted(job.id for job in jobs)
        for job in jobs:
            shown = session.window.get(job.id)
            assert shown is not None and shown.next_run_at_ms == (await other.get_job(job.id)).next_run_at_ms
        assert any(isinstance(e, JobsChanged) and len(e.job_ids) == 20 for e in events)
    finally:
        await other.close()
        await session.close()


async def test_changes_the_view_cannot_show_are_not_read(store_url: str) -> None:
    """On the pending tab, jobs whose last change left them cancelled, or deleted them, are
    never read: their status (carried by the feed) already rules them out."""
    session, _, reads = await _open(store_url)
    other = Monque(store_url, recover_stale_jobs=False)
    await other.initialize()
    try:
        session.set_query(session.query.with_status(JobStatus.PENDING))
        await session.load_top()
        jobs = await other.enqueue_many([{"name": "ruled-out", "data": {"i": i}} for i in range(30)])
        await other.cancel_jobs(JobSelector(name="ruled-out"))
        for job in jobs[:10]:
            assert await other.delete_job(job.id)
        await wait_for(lambda: session.buffer.events == 70)
        await session.flush()
        assert reads == [] and len(session.window) == 0
        # A shown job is read whatever its change says: it must leave the view.
        kept = await other.enqueue("ruled-out", {"kept": True})
        await wait_for(lambda: session.buffer.events == 1)
        await session.flush()
        assert session.window.get(kept.id) is not None and reads == [[kept.id]]
        await other.cancel_job(kept.id)
        await wait_for(lambda: session.buffer.events == 1)
        await session.flush()
        assert reads[-1] == [kept.id] and session.window.get(kept.id) is None
    finally:
        await other.close()
        await session.close()


async def test_more_changed_jobs_than_a_reload_reads_reload_the_rows_around_the_cursor(store_url: str) -> None:
    """Past ``MAX_READ`` jobs to read, a flush reloads the rows around the cursor instead of
    reading every changed job whole (issue 40: beside a drain of 5,000 jobs/s an early flush
    read ~1,800 jobs to place none). Every row shown is still the store's, as it is now."""
    from monque_tui.console.session.core import MAX_READ

    session, events, reads = await _open(store_url)
    other = Monque(store_url, recover_stale_jobs=False)
    await other.initialize()
    try:
        jobs = await other.enqueue_many([{"name": "many", "data": {"i": i}} for i in range(MAX_READ + 100)])
        await wait_for(lambda: session.buffer.events == len(jobs))
        await session.flush()
        await session.load_top()
        assert len(session.window) > 100
        shown = [job.id for job in session.window.rows[:100]]
        reads.clear()
        events.clear()
        # Every job changes (more than MAX_READ), among them the hundred on top of the view.
        cancelled = await other.cancel_jobs(JobSelector(name="many"))
        assert cancelled.count == len(jobs)
        await wait_for(lambda: session.buffer.events == len(jobs))
        await session.flush()
        assert all(len(asked) <= MAX_READ for asked in reads), [len(asked) for asked in reads]
        assert any(isinstance(e, JobsChanged) and e.reload for e in events)
        for job_id in shown:
            row = session.window.get(job_id)
            assert row is not None and row.status is JobStatus.CANCELLED, (job_id, row)
    finally:
        await other.close()
        await session.close()

"""Engine promises that need a particular store set-up (SQLite, real files): local wake-ups
without a change feed, bounded shutdown, safe failure recording, cron schedules."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from monque_engine import ConnectionError, JobStatus, Monque
from monque_engine.store.sqlite.store import SqliteStore

from tests.conftest import SHORT_INTERVALS, EventRecorder, poll_until


class NoFeedStore(SqliteStore):
    """A SQLite store whose change feed never opens: the engine has only its poll and its
    own local wake-ups (what MongoDB fallback mode, or a standalone server, looks like)."""

    async def open_watch(self, resume_after: Any = None, **kwargs: Any) -> Any:
        raise ConnectionError("change feed disabled for this test")


async def _no_feed_monque(tmp_path: Any, **options: Any) -> Monque:
    store = NoFeedStore.from_url(f"sqlite:///{tmp_path}/jobs.db")
    m = Monque(store, **{**SHORT_INTERVALS, **options})
    await m.initialize()
    return m


async def test_local_enqueue_retry_and_reschedule_wake_the_processor_without_a_feed(tmp_path: Any) -> None:
    # Poll far away and no feed: only the local wake-ups can run these jobs in time.
    m = await _no_feed_monque(tmp_path, poll_interval=120, safety_poll_interval=120)
    try:
        rec = EventRecorder().attach(m, "job:complete")
        m.register("n", lambda job: None)
        later = await m.enqueue("n", "later", run_at=timedelta(hours=1))
        failed = await m.enqueue("other", "failed")
        await m.store.execute_write(  # type: ignore[attr-defined]
            lambda c: c.execute(f"UPDATE {m.options.collection_name} SET name = 'n', status = 'failed' WHERE id = ?",
                                (failed.id,))
        )
        await m.start()
        # The first poll round has run once it armed the timer for the job due in an hour.
        await poll_until(lambda: m._processor._timer_due.get("n") == later.next_run_at_ms, message="first poll")

        enqueued = await m.enqueue("n", "now")
        await rec.wait_for("job:complete", where=lambda e: e.job.id == enqueued.id)
        soon = await m.enqueue("n", "in 50 ms", run_at=timedelta(milliseconds=50))
        await rec.wait_for("job:complete", where=lambda e: e.job.id == soon.id)
        await m.reschedule_job(later.id, timedelta(0))
        await rec.wait_for("job:complete", where=lambda e: e.job.id == later.id)
        await m.retry_job(failed.id)
        await rec.wait_for("job:complete", where=lambda e: e.job.id == failed.id)
        assert m.feed_state != "live"
        assert (await m.get_job(failed.id)).status is JobStatus.COMPLETED
    finally:
        await m.close()

"""A worker's change stream carries no deletes on SQLite (issue 34, part 5).

A retention purge of 683k jobs wrote 683k delete rows to the feed, and every worker's stream
(filtered to ``pending``) read and dropped each one, on the reader its due-time look-ups
share. Status-filtered streams now skip deletes, as MongoDB's do; a console's unfiltered
stream still sees every one (it drops the rows from its screen).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monque_engine import JobRetention, JobSelector, JobStatus, Monque

JOBS = 2_500  # more than one pull's page (feed.PULL_LIMIT) of deletes


async def test_a_status_filtered_stream_skips_deletes_and_an_unfiltered_one_keeps_them(tmp_path) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        await m.enqueue_many([{"name": "doomed", "data": i} for i in range(JOBS)])
        worker = await m.store.open_watch(statuses=(JobStatus.PENDING,), full_document=False)
        console = await m.store.open_watch(full_document=False)
        # Pending jobs deleted: their delete rows keep the status they had ('pending').
        assert (await m.delete_jobs(JobSelector(name="doomed"))).count == JOBS
        late = await m.enqueue("late", {"n": 1})
        first = await anext(worker)
        assert (first.operation, first.job_id) == ("insert", late.id)
        seen = [await anext(console) for _ in range(JOBS + 1)]
        assert [c.operation for c in seen] == ["delete"] * JOBS + ["insert"]
        assert seen[-1].job_id == late.id
        await worker.aclose()  # type: ignore[attr-defined]
        await console.aclose()  # type: ignore[attr-defined]
    finally:
        await m.close()


async def test_a_retention_purge_reaches_no_worker_stream(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/jobs.db"
    m = Monque(url, job_retention=JobRetention(completed=60.0))
    await m.initialize()
    try:
        jobs = await m.enqueue_many([{"name": "done", "data": i} for i in range(JOBS)])
        assert len(await m.store.claim("done", "w1", jobs[-1].next_run_at_ms, JOBS, 30_000)) == JOBS
        for job in jobs:  # completed long ago (1970): past any retention age
            assert await m.store.complete(job.id, "w1", 1, None) is not None
        worker = await m.store.open_watch(statuses=(JobStatus.PENDING,), full_document=False)
        console = await m.store.open_watch(full_document=False)
        assert await m.purge_expired_jobs() == JOBS
        later = await m.enqueue("later", {"n": 2}, run_at=datetime.now(UTC) + timedelta(hours=1))
        first = await anext(worker)
        assert (first.operation, first.job_id, first.next_run_at_ms) == ("insert", later.id, later.next_run_at_ms)
        seen = [await anext(console) for _ in range(JOBS + 1)]
        assert sum(c.operation == "delete" for c in seen) == JOBS
        await worker.aclose()  # type: ignore[attr-defined]
        await console.aclose()  # type: ignore[attr-defined]
    finally:
        await m.close()

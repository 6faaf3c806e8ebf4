"""Bulk management: cancel_jobs, retry_jobs, delete_jobs with selectors."""

from __future__ import annotations

from datetime import timedelta

import pytest

from monque_engine import BulkOperationResult, InvalidJobQueryError, JobSelector, JobStatus
from monque_engine.timeutil import ms_to_datetime, now_ms

STATUSES = ["pending", "processing", "completed", "failed", "cancelled"]


async def _seed(m, raw, names=("a", "b")):
    """Two jobs of every status for each name; failed/cancelled ones carry failure and claim fields."""
    jobs = {}
    for name in names:
        for status in STATUSES:
            for i in range(2):
                job = await m.enqueue(name, {"status": status, "i": i})
                fields = {}
                if status != "pending":
                    fields["status"] = status
                if status in ("processing", "failed", "cancelled"):
                    fields.update(
                        failCount=3,
                        failReason="bad",
                        claimedBy="someone",
                        lockedAt=now_ms(),
                        lastHeartbeat=now_ms(),
                        heartbeatInterval=1000,
                    )
                if fields:
                    await raw(m).set(job.id, **fields)
                jobs[job.id] = (name, status)
    return jobs


async def _statuses(m):
    return {j.id: j.status.value for j in await m.get_jobs(limit=1000)}


# -- cancel_jobs ------------------------------------------------------------------------------------


async def test_cancel_jobs_only_touches_pending(monque, raw, recorder):
    m = await monque()
    jobs = await _seed(m, raw)
    rec = recorder(m)
    result = await m.cancel_jobs(JobSelector())
    assert isinstance(result, BulkOperationResult)
    assert result.count == 4 and result.errors == []
    after = await _statuses(m)
    for job_id, (_, status) in jobs.items():
        assert after[job_id] == ("cancelled" if status == "pending" else status)
    assert [e.count for e in rec.of("jobs:cancelled")] == [4]
    assert rec.names() == ["jobs:cancelled"]


async def test_cancel_jobs_none_selector_means_all_pending(monque, raw):
    m = await monque()
    await _seed(m, raw, names=("a",))
    assert (await m.cancel_jobs()).count == 2


async def test_cancel_jobs_with_selector_including_other_statuses_still_only_pending(monque, raw):
    m = await monque()
    jobs = await _seed(m, raw)
    result = await m.cancel_jobs(JobSelector(name="a", status=["pending", "processing", "failed"]))
    assert result.count == 2
    after = await _statuses(m)
    for job_id, (name, status) in jobs.items():
        expected = "cancelled" if (name, status) == ("a", "pending") else status
        assert after[job_id] == expected


@pytest.mark.parametrize("status", ["processing", "completed", ["failed", "cancelled"], JobStatus.FAILED])
async def test_cancel_jobs_selector_without_pending_changes_nothing(monque, raw, recorder, status):
    m = await monque()
    jobs = await _seed(m, raw)
    rec = recorder(m)
    result = await m.cancel_jobs(JobSelector(status=status))
    assert result.count == 0
    assert await _statuses(m) == {job_id: s for job_id, (_, s) in jobs.items()}
    assert rec.records == []


async def test_bulk_calls_with_no_match_emit_nothing(monque, raw, recorder):
    m = await monque()
    await _seed(m, raw)
    rec = recorder(m)
    assert (await m.cancel_jobs(JobSelector(name="nope"))).count == 0
    assert (await m.retry_jobs(JobSelector(name="nope"))).count == 0
    assert (await m.delete_jobs(JobSelector(name="nope"))).count == 0
    assert rec.records == []


# -- retry_jobs -------------------------------------------------------------------------------------


async def test_retry_jobs_only_failed_and_cancelled(monque, raw, recorder):
    m = await monque()
    jobs = await _seed(m, raw)
    rec = recorder(m)
    before = now_ms()
    result = await m.retry_jobs()
    after_ms = now_ms()
    assert result.count == 8 and result.errors == []
    assert [e.count for e in rec.of("jobs:retried")] == [8]
    stored = {j.id: j for j in await m.get_jobs(limit=1000)}
    for job_id, (_, status) in jobs.items():
        job = stored[job_id]
        if status in ("failed", "cancelled"):
            assert job.status is JobStatus.PENDING
            assert job.fail_count == 0
            assert job.fail_reason is None
            assert job.claimed_by is None and job.locked_at is None and job.last_heartbeat is None
            assert before <= job.next_run_at_ms <= after_ms + 30_000
            assert before <= job.updated_at_ms <= after_ms
        else:
            assert job.status.value == status
            if status == "processing":
                assert job.claimed_by == "someone" and job.fail_count == 3


async def test_retry_jobs_spreads_next_run_at_over_thirty_seconds(monque, raw):
    m = await monque()
    jobs = await m.enqueue_many([{"name": "mass", "data": i} for i in range(200)])
    for job in jobs:
        await raw(m).set(job.id, status="failed", failCount=10)
    before = now_ms()
    assert (await m.retry_jobs(JobSelector(name="mass"))).count == 200
    after = now_ms()
    runs = [j.next_run_at_ms for j in await m.get_jobs(name="mass", limit=1000)]
    assert all(before <= r <= after + 30_000 for r in runs)
    # a uniform spread, not a stampede: many distinct instants across the window
    assert len(set(runs)) > 150
    assert max(runs) - min(runs) > 20_000
    assert sum(1 for r in runs if r - before < 15_000) > 50
    assert sum(1 for r in runs if r - before >= 15_000) > 50


@pytest.mark.parametrize(
    "status,expected",
    [
        ("failed", 4),
        ("cancelled", 4),
        (["failed", "pending", "completed"], 4),
        (["pending", "completed", "processing"], 0),
        ("pending", 0),
    ],
)
async def test_retry_jobs_intersects_selector_status_with_retryable(monque, raw, recorder, status, expected):
    m = await monque()
    jobs = await _seed(m, raw)
    rec = recorder(m)
    result = await m.retry_jobs(JobSelector(status=status))
    assert result.count == expected
    after = await _statuses(m)
    wanted = {status} if isinstance(status, str) else set(status)
    for job_id, (_, s) in jobs.items():
        changed = s in wanted and s in ("failed", "cancelled")
        assert after[job_id] == ("pending" if changed else s)
    assert [e.count for e in rec.of("jobs:retried")] == ([expected] if expected else [])


async def test_retry_jobs_by_name(monque, raw):
    m = await monque()
    jobs = await _seed(m, raw)
    assert (await m.retry_jobs(JobSelector(name="b"))).count == 4
    after = await _statuses(m)
    for job_id, (name, s) in jobs.items():
        assert after[job_id] == ("pending" if name == "b" and s in ("failed", "cancelled") else s)


# -- delete_jobs ------------------------------------------------------------------------------------


async def test_delete_jobs_by_status_and_name(monque, raw, recorder):
    m = await monque()
    jobs = await _seed(m, raw)
    rec = recorder(m)
    result = await m.delete_jobs(JobSelector(name="a", status=["completed", "processing"]))
    assert result.count == 4
    after = await _statuses(m)
    for job_id, (name, s) in jobs.items():
        assert (job_id in after) == (not (name == "a" and s in ("completed", "processing")))
    assert [e.count for e in rec.of("jobs:deleted")] == [4]
    assert rec.of("job:deleted") == []


async def test_delete_jobs_empty_selector_deletes_everything(monque, raw):
    m = await monque()
    await _seed(m, raw)
    assert (await m.delete_jobs(JobSelector())).count == 20
    assert await m.get_jobs() == []
    assert (await m.delete_jobs()).count == 0


# -- older_than / newer_than ------------------------------------------------------------------------


async def test_older_than_and_newer_than_select_by_created_at(monque, raw):
    m = await monque()
    base = now_ms() - 100_000
    jobs = await m.enqueue_many([{"name": "t", "data": i} for i in range(5)])
    for i, job in enumerate(jobs):
        await raw(m).set(job.id, createdAt=base + i * 10_000)
    cut = ms_to_datetime(base + 20_000)  # job 2 sits exactly on the cut: excluded both ways
    older = await m.cancel_jobs(JobSelector(older_than=cut))
    assert older.count == 2
    after = await _statuses(m)
    assert [after[j.id] for j in jobs] == ["cancelled", "cancelled", "pending", "pending", "pending"]
    newer = await m.delete_jobs(JobSelector(newer_than=cut))
    assert newer.count == 2
    assert sorted(await _statuses(m)) == sorted([jobs[0].id, jobs[1].id, jobs[2].id])
    window = await m.retry_jobs(JobSelector(newer_than=ms_to_datetime(base - 1), older_than=ms_to_datetime(base + 1)))
    assert window.count == 1
    assert (await m.get_job(jobs[0].id)).status is JobStatus.PENDING
    assert (await m.get_job(jobs[1].id)).status is JobStatus.CANCELLED


async def test_selector_validation(monque):
    from datetime import datetime

    m = await monque()
    with pytest.raises(InvalidJobQueryError):
        await m.delete_jobs(JobSelector(status="bogus"))
    with pytest.raises(InvalidJobQueryError):
        await m.cancel_jobs(JobSelector(older_than=datetime(2030, 1, 1)))  # naive
    with pytest.raises(InvalidJobQueryError):
        await m.retry_jobs(JobSelector(newer_than="yesterday"))  # type: ignore[arg-type]
    with pytest.raises(InvalidJobQueryError):
        await m.delete_jobs({"name": "x"})  # type: ignore[arg-type]
    with pytest.raises(InvalidJobQueryError):
        await m.delete_jobs(JobSelector(name=5))  # type: ignore[arg-type]


async def test_retry_jobs_then_processed(monque, raw, recorder):
    m = await monque()
    rec = recorder(m, "job:complete")
    job = await m.enqueue("redo", 1)
    await raw(m).set(job.id, status="cancelled")
    m.register("redo", lambda j: None)
    await m.start()
    await m.retry_jobs(JobSelector(name="redo"))
    # spread over up to 30 s: pull it forward to run now
    await m.reschedule_job(job.id, timedelta(0))
    (complete,) = await rec.wait_for("job:complete")
    assert complete.job.id == job.id


async def test_database_errors_surface_as_connection_error_with_cause(tmp_path):
    import sqlite3

    from monque_engine import ConnectionError, Monque

    path = tmp_path / "locked.db"
    m = Monque(f"sqlite:///{path}?busy_timeout=0.1")
    blocker = None
    try:
        await m.initialize()
        job = await m.enqueue("x", 1)
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another process holding the write lock
        for call in (m.cancel_jobs, m.retry_jobs, m.delete_jobs):
            with pytest.raises(ConnectionError) as info:
                await call(JobSelector())
            assert isinstance(info.value.__cause__, sqlite3.OperationalError)
            assert "busy_timeout" in str(info.value)
        with pytest.raises(ConnectionError):
            await m.cancel_job(job.id)
        blocker.execute("ROLLBACK")
        assert (await m.cancel_jobs()).count == 1  # works again once the lock is gone
    finally:
        if blocker is not None:
            blocker.close()
        await m.close()

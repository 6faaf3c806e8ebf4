"""Upstream parity: retention (``retention.test.ts``; its heartbeat twin is
``contract/liveness/test_claim_heartbeats.py``).

Jobs are aged by writing ``updatedAt`` directly (as upstream's factories insert old
documents); retention judges completed and failed jobs by ``updatedAt`` only.
"""

from __future__ import annotations

from monque_engine import JobSelector, JobStatus
from monque_engine.timeutil import now_ms


async def _seed(m, raw, name: str, status: str, age_ms: int) -> str:
    job = await m.enqueue(name, {})
    await raw(m).set(job.id, status=status, updatedAt=now_ms() - age_ms)
    return job.id


async def test_only_the_configured_status_is_purged(monque, raw, wait_until):
    """'should delete completed jobs older than specified retention' (failed ones, with no
    failed age configured, stay)."""
    m = await monque(job_retention={"completed": 5, "interval": 0.05})
    old = await _seed(m, raw, "old-job", "completed", 6000)
    recent = await _seed(m, raw, "recent-job", "completed", 100)
    old_failed = await _seed(m, raw, "old-failed", "failed", 6000)
    await m.start()

    async def old_gone():
        return await m.get_job(old) is None

    await wait_until(old_gone)
    assert (await m.get_job(recent)).status is JobStatus.COMPLETED
    assert (await m.get_job(old_failed)).status is JobStatus.FAILED


async def test_two_instances_purging_together_delete_exactly_the_old_jobs(monque, raw, wait_until):
    """'should handle concurrent cleanup from two instances without data corruption'."""
    retention = {"completed": 5, "failed": 5, "interval": 0.05}
    first = await monque(job_retention=retention)
    second = await monque(job_retention=retention)
    for i in range(3):
        await _seed(first, raw, f"old-completed-{i}", "completed", 6000)
        await _seed(first, raw, f"old-failed-{i}", "failed", 6000)
    recent = [
        await _seed(first, raw, f"recent-{status}-{i}", status, 100)
        for status in ("completed", "failed")
        for i in range(2)
    ]
    await first.start()
    await second.start()

    async def only_recent_left():
        return sorted(j.id for j in await first.get_jobs()) == sorted(recent)

    await wait_until(only_recent_left)
    assert await first.count_jobs() == 4
    assert (await second.delete_jobs(JobSelector(status=[]))).count == 0  # nothing else to find


async def test_without_retention_nothing_is_purged(monque, raw, recorder):
    """'should not delete jobs if retention is not configured': a started instance with no
    retention keeps an old completed job (checked after a full processing round, not a sleep)."""
    m = await monque()
    rec = recorder(m, "job:complete")
    old = await _seed(m, raw, "should-keep-job", "completed", 5000)
    m.register("tick", lambda job: None)
    await m.start()
    await m.enqueue("tick", {})
    await rec.wait_for("job:complete")
    assert (await m.purge_expired_jobs()) == 0
    assert (await m.get_job(old)).status is JobStatus.COMPLETED

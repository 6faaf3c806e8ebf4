"""Upstream parity: retention and heartbeats (``retention.test.ts``, ``heartbeat.test.ts``).

Jobs are aged by writing ``updatedAt`` directly (as upstream's factories insert old
documents); retention judges completed and failed jobs by ``updatedAt`` only.
"""

from __future__ import annotations

import asyncio

import pytest

from monque_engine import JobSelector, JobStatus, Monque
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


# -- heartbeat.test.ts ---------------------------------------------------------------------------


async def _claimed(m, wait_until):
    entered = asyncio.Event()
    release = asyncio.Event()

    async def handler(job):
        entered.set()
        await release.wait()

    m.register("beat", handler)
    job = await m.enqueue("beat", {"value": 1})
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    return job, release


@pytest.mark.parametrize(("options", "expected"), [({"heartbeat_interval": 0.2}, 0.2), ({}, 30.0)])
async def test_a_claim_records_the_heartbeat_and_its_interval(store_url, wait_until, options, expected):
    """'should set lastHeartbeat when claiming a job', 'should use custom heartbeat interval'
    and 'should use default heartbeat interval of 30000ms' (ours in seconds; the stored
    document field is milliseconds, as upstream's)."""
    m = Monque(store_url, poll_interval=0.05, **options)
    await m.initialize()
    try:
        job, release = await _claimed(m, wait_until)
        stored = await m.get_job(job.id)
        assert stored.last_heartbeat is not None and stored.claimed_by == m.instance_id
        assert stored.heartbeat_interval == expected
        if m.store.kind == "sqlite":
            table = m.options.collection_name
            raw_ms = await m.store.execute_write(
                lambda conn: conn.execute(f"SELECT heartbeat_interval FROM {table} WHERE id = ?", (job.id,)).fetchone()[
                    0
                ]
            )
            assert raw_ms == int(expected * 1000)
        release.set()
        await m.stop()
        done = await m.get_job(job.id)
        assert done.status is JobStatus.COMPLETED
        assert done.last_heartbeat is None and done.claimed_by is None and done.locked_at is None
    finally:
        await m.close()


async def test_a_job_whose_heartbeat_is_stale_is_recovered_on_initialize(monque, raw, recorder):
    """'should recover jobs with stale lastHeartbeat on startup' and 'should not recover jobs
    with recent lastHeartbeat'."""
    setup = await monque()
    stale = await setup.enqueue("beat", "stale")
    live = await setup.enqueue("beat", "live")
    old = now_ms() - 1000
    await raw(setup).set(
        stale.id, status="processing", claimedBy="dead-instance", lockedAt=old, lastHeartbeat=old, heartbeatInterval=100
    )
    fresh = now_ms()
    await raw(setup).set(
        live.id,
        status="processing",
        claimedBy="active-instance",
        lockedAt=fresh,
        lastHeartbeat=fresh,
        heartbeatInterval=100,
    )
    m = await monque(initialize=False, lock_timeout=0.5)
    rec = recorder(m, "stale:recovered")
    await m.initialize()
    (event,) = rec.of("stale:recovered")
    assert event.count == 1
    recovered = await m.get_job(stale.id)
    assert recovered.status is JobStatus.PENDING and recovered.claimed_by is None
    kept = await m.get_job(live.id)
    assert kept.status is JobStatus.PROCESSING and kept.claimed_by == "active-instance"

"""Upstream parity: heartbeats (``heartbeat.test.ts``; its retention twin is
``contract/retention/test_purge_finished.py``).

A claim records the heartbeat and its interval; a job whose heartbeat is stale is recovered
on initialize, one whose heartbeat is recent is not. Jobs are aged by writing fields
directly (as upstream's factories insert old documents).
"""

from __future__ import annotations

import asyncio

import pytest

from monque_engine import JobStatus, Monque
from monque_engine.timeutil import now_ms


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

"""Liveness: stale recovery, heartbeats, an instance id with live claims, a re-claimed job.

Initialize / start / close are in ``contract/admin/test_initialize_start_and_close.py``,
retention in ``contract/retention/test_purge_by_age.py``.
"""

from __future__ import annotations

import asyncio

import pytest

from monque_engine import ConnectionError, JobStatus
from monque_engine.timeutil import now_ms

# -- stale recovery -------------------------------------------------------------------------------


async def _make_processing(m, raw, name="s", locked_ago_ms=0, owner="crashed-worker", heartbeat_ago_ms=None):
    job = await m.enqueue(name, 1)
    locked = now_ms() - locked_ago_ms
    heartbeat = locked if heartbeat_ago_ms is None else now_ms() - heartbeat_ago_ms
    await raw(m).set(
        job.id, status="processing", claimedBy=owner, lockedAt=locked, lastHeartbeat=heartbeat, heartbeatInterval=1000
    )
    return job


async def test_stale_jobs_recovered_on_initialize(monque, raw, recorder, store_url):
    setup = await monque()
    stale = await _make_processing(setup, raw, locked_ago_ms=120_000)
    fresh = await _make_processing(setup, raw, locked_ago_ms=1_000)
    await setup.close()

    m = await monque(initialize=False, lock_timeout=60)
    rec = recorder(m, "stale:recovered")
    await m.initialize()
    assert [e.count for e in rec.of("stale:recovered")] == [1]
    s = await m.get_job(stale.id)
    assert s.status is JobStatus.PENDING
    assert s.claimed_by is None and s.locked_at is None and s.last_heartbeat is None
    assert s.updated_at_ms >= now_ms() - 5000
    f = await m.get_job(fresh.id)
    assert f.status is JobStatus.PROCESSING and f.claimed_by == "crashed-worker"


async def test_no_recovery_when_disabled(monque, raw, recorder):
    setup = await monque()
    stale = await _make_processing(setup, raw, locked_ago_ms=10_000_000)
    await setup.close()
    m = await monque(initialize=False, recover_stale_jobs=False)
    rec = recorder(m, "stale:recovered")
    await m.initialize()
    await m.start()
    assert (await m.get_job(stale.id)).status is JobStatus.PROCESSING
    assert rec.records == []


async def test_periodic_stale_recovery_while_running(monque, raw, recorder):
    m = await monque(lock_timeout=0.3, stale_recovery_interval=0.05)
    rec = recorder(m, "stale:recovered", "job:complete")
    ran = []
    m.register("crashy", lambda job: ran.append(job.id))
    await m.start()
    job = await _make_processing(m, raw, name="crashy", locked_ago_ms=0)
    started = now_ms()
    (event,) = await rec.wait_for("stale:recovered")
    assert event.count == 1
    assert now_ms() - started >= 250  # not before the lock timed out
    # the recovered job is picked up again by this instance
    (complete,) = await rec.wait_for("job:complete")
    assert complete.job.id == job.id and ran == [job.id]


async def test_recover_stale_jobs_manual_call(monque, raw, recorder):
    m = await monque(lock_timeout=60)
    rec = recorder(m, "stale:recovered")
    await _make_processing(m, raw, locked_ago_ms=61_000)
    await _make_processing(m, raw, locked_ago_ms=62_000)
    await _make_processing(m, raw, locked_ago_ms=10_000)
    assert await m.recover_stale_jobs() == 2
    assert await m.recover_stale_jobs() == 0
    assert [e.count for e in rec.of("stale:recovered")] == [2]


async def test_recovery_judges_liveness_by_heartbeat_not_lock_age(monque, raw):
    m = await monque(lock_timeout=60)
    # Locked long ago but heartbeating now: alive. Never heartbeated (no lastHeartbeat):
    # judged by lockedAt. Heartbeat older than lock_timeout: stale.
    alive = await _make_processing(m, raw, locked_ago_ms=10_000_000, heartbeat_ago_ms=1_000)
    no_heartbeat = await _make_processing(m, raw, locked_ago_ms=61_000)
    await raw(m).set(no_heartbeat.id, lastHeartbeat=None)
    fresh_lock = await _make_processing(m, raw, locked_ago_ms=1_000)
    await raw(m).set(fresh_lock.id, lastHeartbeat=None)
    silent = await _make_processing(m, raw, locked_ago_ms=10_000_000, heartbeat_ago_ms=61_000)
    assert await m.recover_stale_jobs() == 2
    status = {job.id: (await m.get_job(job.id)).status for job in (alive, no_heartbeat, fresh_lock, silent)}
    assert status == {
        alive.id: JobStatus.PROCESSING,
        no_heartbeat.id: JobStatus.PENDING,
        fresh_lock.id: JobStatus.PROCESSING,
        silent.id: JobStatus.PENDING,
    }


async def test_a_heartbeating_job_longer_than_lock_timeout_runs_exactly_once(monque, recorder, wait_until):
    """Two workers on one store, a short lock_timeout, frequent recovery on both: a handler
    that outlives lock_timeout several times over is never handed to the other worker."""
    # lock_timeout is 20 heartbeats, so a loaded machine cannot make a live job look stale.
    options = dict(lock_timeout=1.0, stale_recovery_interval=0.05, heartbeat_interval=0.05)
    a = await monque(**options)
    b = await monque(**options)
    recs = [recorder(a), recorder(b)]
    starts = []
    release = asyncio.Event()

    async def handler(job):
        starts.append(job.id)
        await release.wait()

    for m in (a, b):
        m.register("long", handler)
    job = await a.enqueue("long")
    await a.start()
    await b.start()
    await wait_until(lambda: starts, message="the job started")
    claimed = await a.get_job(job.id)
    # Both workers keep running recovery while the handler outlives its lock 3 times over.
    await wait_until(lambda: now_ms() > claimed.locked_at_ms + 3_000, timeout=10)
    release.set()
    await wait_until(lambda: any(rec.of("job:complete") for rec in recs))
    assert starts == [job.id]
    assert [r for rec in recs for r in rec.of("stale:recovered")] == []
    assert (await a.get_job(job.id)).status is JobStatus.COMPLETED


async def test_a_job_whose_owner_stops_heartbeating_is_recovered(monque, recorder, wait_until):
    options = dict(lock_timeout=0.3, stale_recovery_interval=0.05, heartbeat_interval=0.05)
    # Only B recovers, and A has no free slot to take the job back while its stalled run lasts:
    # the test is about B judging A's silence, not about which instance wins the race.
    a = await monque(**options, recover_stale_jobs=False)
    b = await monque(**options)
    rec_b = recorder(b)
    a_entered = asyncio.Event()
    release_a = asyncio.Event()
    ran_on_b = []

    async def on_a(job):
        a_entered.set()
        await release_a.wait()

    a.register("hb", on_a, concurrency=1)
    b.register("hb", lambda job: ran_on_b.append(job.id))
    job = await a.enqueue("hb")
    await a.start()
    await asyncio.wait_for(a_entered.wait(), 5)
    await b.start()
    await a._lifecycle.stop_heartbeat()  # A's process is alive but its heartbeats stop (e.g. stalled)
    (recovered,) = await rec_b.wait_for("stale:recovered")
    assert recovered.count == 1
    (complete,) = await rec_b.wait_for("job:complete")
    assert complete.job.id == job.id and ran_on_b == [job.id]
    release_a.set()  # A's late completion is refused: B completed it, and the claim is not A's
    await wait_until(lambda: a.running_job_count == 0)
    stored = await b.get_job(job.id)
    assert stored.status is JobStatus.COMPLETED and stored.claimed_by is None


# -- heartbeats -----------------------------------------------------------------------------------


async def test_heartbeats_update_last_heartbeat_but_not_the_lock(monque, wait_until):
    m = await monque(heartbeat_interval=0.05)
    entered = asyncio.Event()
    release = asyncio.Event()

    async def handler(job):
        entered.set()
        await release.wait()

    m.register("long", handler)
    job = await m.enqueue("long")
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    claimed = await m.get_job(job.id)

    async def beaten():
        current = await m.get_job(job.id)
        return current if current.last_heartbeat_ms > claimed.last_heartbeat_ms + 40 else None

    later = await wait_until(beaten)
    assert later.locked_at_ms == claimed.locked_at_ms  # heartbeats never extend the lock
    assert later.updated_at_ms >= later.last_heartbeat_ms
    assert later.heartbeat_interval_ms == 50
    assert later.status is JobStatus.PROCESSING and later.claimed_by == m.instance_id
    release.set()


async def test_heartbeat_only_touches_own_processing_jobs(monque, raw, wait_until):
    m = await monque(heartbeat_interval=0.05)
    foreign = await _make_processing(m, raw, owner="someone-else", heartbeat_ago_ms=5000)
    foreign_before = await m.get_job(foreign.id)
    entered = asyncio.Event()
    release = asyncio.Event()

    async def handler(job):
        entered.set()
        await release.wait()

    m.register("mine", handler)
    mine = await m.enqueue("mine")
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    claimed = await m.get_job(mine.id)
    await wait_until(lambda: _heartbeat_after(m, mine.id, claimed.last_heartbeat_ms))
    assert await m.get_job(foreign.id) == foreign_before
    release.set()


async def _heartbeat_after(m, job_id, ms):
    return (await m.get_job(job_id)).last_heartbeat_ms > ms


# -- instance collision ---------------------------------------------------------------------------


async def test_initialize_refuses_an_instance_id_with_live_claims(monque, raw):
    setup = await monque()
    await _make_processing(setup, raw, owner="worker-1", locked_ago_ms=0, heartbeat_ago_ms=0)
    m = await monque(initialize=False, scheduler_instance_id="worker-1", heartbeat_interval=30)
    with pytest.raises(ConnectionError, match="worker-1"):
        await m.initialize()
    with pytest.raises(ConnectionError):
        await m.enqueue("x")  # not initialised
    other = await monque(scheduler_instance_id="worker-2")
    assert other.instance_id == "worker-2"


async def test_initialize_accepts_an_instance_id_whose_claims_are_not_live(monque, raw):
    setup = await monque()
    await _make_processing(setup, raw, owner="worker-1", locked_ago_ms=0, heartbeat_ago_ms=10_000)
    m = await monque(scheduler_instance_id="worker-1", heartbeat_interval=1)  # 10 s > 2 × 1 s
    assert m.instance_id == "worker-1"
    await m.enqueue("x")


async def test_a_heartbeat_exactly_at_the_threshold_is_alive_on_every_store(monque, raw):
    """Upstream's collision check counts a heartbeat at or after the threshold as alive
    (``$gte``); the MongoDB store did, the SQLite store asked for one after it (``>``)."""
    m = await monque()
    job = await _make_processing(m, raw, owner="worker-9", heartbeat_ago_ms=5_000)
    beat = (await m.get_job(job.id)).last_heartbeat_ms
    assert beat is not None
    assert await m.store.has_live_claim("worker-9", beat)
    assert not await m.store.has_live_claim("worker-9", beat + 1)


# -- re-claim by the same instance -----------------------------------------------------------------


async def test_a_job_reclaimed_by_the_same_instance_is_not_run_twice_at_once(monque, raw, recorder):
    """Stale recovery can hand a job back to the very instance whose handler still runs it
    (the handler outlived lock_timeout). The process must not start a second copy beside the
    first (slots and shutdown track one handler per job id, and the first copy's completion
    would settle the second claim under it): the running copy settles the fresh claim."""
    m = await monque(lock_timeout=60, heartbeat_interval=30)
    rec = recorder(m, "job:start", "job:complete")
    starts = []
    gate = asyncio.Event()

    async def handler(job):
        starts.append(job.id)
        await gate.wait()

    m.register("w", handler, concurrency=2)
    job = await m.enqueue("w", 1)
    await m.start()
    await rec.wait_for("job:start")
    claimed = await m.get_job(job.id)
    # The handler has now "outlived" lock_timeout: its lock and heartbeat are two minutes old.
    await raw(m).set(job.id, lockedAt=claimed.locked_at_ms - 120_000, lastHeartbeat=claimed.last_heartbeat_ms - 120_000)
    assert await m.recover_stale_jobs() == 1
    # The re-claim comes first (earliest nextRunAt); a second job then takes the other slot.
    second = await m.enqueue("w", 2)
    await rec.wait_for("job:start", where=lambda started: started.id == second.id)
    assert starts == [job.id, second.id], "the re-claimed job was started a second time"
    reclaimed = await m.get_job(job.id)
    assert reclaimed.status is JobStatus.PROCESSING and reclaimed.claimed_by == m.instance_id
    summary = next(s for s in await m.get_queue_view_summaries() if s.name == "w")
    assert summary.worker is not None and summary.worker.active_count == 2
    gate.set()
    done = await rec.wait_for("job:complete", 2)
    assert sorted(e.job.id for e in done) == sorted([job.id, second.id])
    assert starts == [job.id, second.id]
    assert (await m.get_job(job.id)).status is JobStatus.COMPLETED

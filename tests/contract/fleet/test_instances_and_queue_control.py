"""Contract: fleet and queue control (issue 13) on a real store, in one process.

Instance registry, dead-owner release, pause / resume, queue health and its per-minute
counters. Other instances are simulated by writing their claims with ``raw`` (what a
Node worker or a killed process leaves behind); the multi-process versions of these
checks, with real processes and real signals, are in ``test_fleet_multiprocess.py``.
"""

from __future__ import annotations

import asyncio
import os
import socket
from datetime import UTC, datetime, timedelta

import pytest

from monque_engine import InvalidJobQueryError, JobStatus, Monque
from monque_engine.errors import InvalidJobIdentifierError
from monque_engine.timeutil import now_ms


async def _claim_as(
    raw,
    m: Monque,
    job_id: str,
    owner: str,
    beat_ms: int | None,
    interval_ms: int | None = 1_000,
    locked_ms: int | None = None,
) -> None:
    """Make a job look claimed by another instance whose last heartbeat was at ``beat_ms``."""
    locked = locked_ms if locked_ms is not None else (beat_ms if beat_ms is not None else now_ms())
    await raw(m).set(
        job_id,
        status="processing",
        claimedBy=owner,
        lockedAt=locked,
        lastHeartbeat=beat_ms,
        heartbeatInterval=interval_ms,
    )


# -- registry -----------------------------------------------------------------------------------------
async def test_a_started_instance_registers_itself_and_is_removed_on_a_clean_stop(monque, wait_until):
    worker = await monque(heartbeat_interval=0.05)
    worker.register("email", lambda job: None, concurrency=3)
    worker.register("sms", lambda job: None)
    viewer = await monque()
    assert await viewer.instances() == []
    await worker.start()
    (info,) = await viewer.instances()
    assert info.id == worker.instance_id and not info.inferred and info.alive
    assert (info.host, info.pid) == (socket.gethostname(), os.getpid())
    assert info.workers == {"email": 3, "sms": worker.options.worker_concurrency}
    assert info.heartbeat_interval == 0.05 and info.version and info.version.startswith("monque_engine ")
    assert info.started_at is not None and info.jobs_held == 0

    for n in range(3):
        await worker.enqueue("email", {"n": n})

    async def processed_three() -> bool:
        (current,) = await viewer.instances()
        return current.processed == 3

    await wait_until(processed_three, message="the record's processed count reaches 3 on a heartbeat tick")
    await worker.stop()
    assert await viewer.instances() == []


async def test_instances_are_judged_dead_after_two_heartbeat_intervals(monque, raw):
    m = await monque(heartbeat_interval=1.0)
    now = now_ms()
    jobs = [await m.enqueue("email", {"n": n}) for n in range(3)]
    await _claim_as(raw, m, jobs[0].id, "node-fresh", now - 500)  # interval 1 s: alive
    await _claim_as(raw, m, jobs[1].id, "node-gone", now - 5_000)  # 5 s > 2 x 1 s: dead
    await _claim_as(raw, m, jobs[2].id, "node-gone", now - 6_000)
    by_id = {info.id: info for info in await m.instances()}
    assert set(by_id) == {"node-fresh", "node-gone"}
    fresh, gone = by_id["node-fresh"], by_id["node-gone"]
    assert fresh.inferred and fresh.alive and fresh.jobs_held == 1
    assert gone.inferred and not gone.alive and gone.jobs_held == 2
    assert gone.last_heartbeat is not None and gone.host is None and gone.processed is None
    assert gone.heartbeat_age(datetime.now(UTC)) >= 4.9


# -- dead-owner release ----------------------------------------------------------------------------------
# An owner is dead when its records do not move for twice its own interval plus 1 s of this
# process's monotonic time (ADR 0007); the owners here carry a 100 ms interval, so a watch
# lasts 1.2 s. How their stamps compare with any clock does not matter.
async def test_a_dead_owners_jobs_are_counted_after_a_watch_then_released_at_once(monque, raw):
    m = await monque(heartbeat_interval=1.0, lock_timeout=3600)
    now = now_ms()
    dead = [await m.enqueue("email", {"n": n}) for n in range(3)]
    for job in dead:
        await _claim_as(raw, m, job.id, "dead-worker", now - 10_000, interval_ms=100)
    recorded = []
    m.on("stale:recovered", lambda e: recorded.append(e.count))
    check = await m.check_owner("dead-worker")
    assert (check.alive, check.releasable) == (False, 3) and check.watched >= 1.2
    assert await m.count_dead_owner_jobs("dead-worker") == 3  # continues the watch: nothing moved
    assert await m.release_dead_owner_jobs("dead-worker") == 3
    assert recorded == [3]
    for job in dead:
        stored = await m.get_job(job.id)
        assert stored.status is JobStatus.PENDING and stored.claimed_by is None and stored.last_heartbeat is None
    assert await m.release_dead_owner_jobs("dead-worker") == 0
    assert await m.count_dead_owner_jobs("nobody") == 0


async def _beat_until(m: Monque, owner: str, stop: asyncio.Event, stamp_of) -> None:
    """An owner's heartbeat loop, every 50 ms (its jobs say 100 ms), writing ``stamp_of()``."""
    while not stop.is_set():
        await m.store.heartbeat(owner, stamp_of())
        try:
            await asyncio.wait_for(stop.wait(), 0.05)
        except TimeoutError:
            pass


async def test_a_live_owners_jobs_are_never_released_however_old_its_beats_look(monque, raw):
    """Its beats are stamped 10 s in the past, as by a clock behind ours (or ours ahead of it):
    they still move, and that is what makes it alive."""
    m = await monque(heartbeat_interval=1.0)
    a, b = await m.enqueue("email"), await m.enqueue("email")
    for job in (a, b):
        await _claim_as(raw, m, job.id, "busy-worker", now_ms() - 10_000, interval_ms=100)
    stop = asyncio.Event()
    beating = asyncio.ensure_future(_beat_until(m, "busy-worker", stop, lambda: now_ms() - 10_000))
    try:
        check = await m.check_owner("busy-worker")
        assert (check.alive, check.releasable) == (True, 0)
        assert await m.count_dead_owner_jobs("busy-worker") == 0
        assert await m.release_dead_owner_jobs("busy-worker") == 0
    finally:
        stop.set()
        await beating
    assert [(await m.get_job(job.id)).status for job in (a, b)] == [JobStatus.PROCESSING] * 2


async def test_a_heartbeat_between_the_count_and_the_release_keeps_every_job(monque, raw):
    """The rescue race, first form: the operator is asked, and meanwhile the owner beats."""
    m = await monque(heartbeat_interval=1.0)
    jobs = [await m.enqueue("email", {"n": n}) for n in range(2)]
    for job in jobs:
        await _claim_as(raw, m, job.id, "slow-owner", now_ms() - 10_000, interval_ms=100)
    assert await m.count_dead_owner_jobs("slow-owner") == 2  # the operator is asked "release 2?"
    stop = asyncio.Event()  # ...and meanwhile the owner beats again (its stamps 20 s old by our clock)
    beating = asyncio.ensure_future(_beat_until(m, "slow-owner", stop, lambda: now_ms() - 20_000))
    try:
        assert await m.release_dead_owner_jobs("slow-owner") == 0
    finally:
        stop.set()
        await beating
    assert [(await m.get_job(job.id)).claimed_by for job in jobs] == ["slow-owner", "slow-owner"]


async def test_a_heartbeat_between_the_last_look_and_the_write_keeps_every_job(monque, raw, monkeypatch):
    """The rescue race, second form: the beat commits after the watch's last look, before the
    store's write. The write compares with what was looked at, so it releases nothing."""
    m = await monque(heartbeat_interval=1.0)
    jobs = [await m.enqueue("email", {"n": n}) for n in range(2)]
    for job in jobs:
        await _claim_as(raw, m, job.id, "late-beater", now_ms() - 10_000, interval_ms=100)
    store = m.store
    write = store.release_unmoved_owner

    async def beat_first(owner, expected, now):
        await store.heartbeat(owner, now_ms())
        return await write(owner, expected, now)

    monkeypatch.setattr(store, "release_unmoved_owner", beat_first)
    assert await m.release_dead_owner_jobs("late-beater") == 0
    assert [(await m.get_job(job.id)).status for job in jobs] == [JobStatus.PROCESSING] * 2


async def test_a_claim_without_a_heartbeat_interval_is_watched_for_twice_ours(monque, raw):
    m = await monque(heartbeat_interval=0.1)
    bare = await m.enqueue("email")
    # A foreign claim: no heartbeatInterval, no lastHeartbeat, only lockedAt.
    await _claim_as(raw, m, bare.id, "foreign", None, interval_ms=None, locked_ms=now_ms() - 10_000)
    check = await m.check_owner("foreign")
    assert (check.alive, check.releasable) == (False, 1) and check.watched >= 2 * 0.1 + 1.0
    assert await m.release_dead_owner_jobs("foreign") == 1


async def test_a_beating_registry_record_keeps_its_jobs(monque, raw):
    """A registered instance whose record beats is alive even if its jobs' stamps never move."""
    worker = await monque(heartbeat_interval=0.05)
    worker.register("email", lambda job: None)
    await worker.start()
    viewer = await monque(heartbeat_interval=1.0)
    job = await viewer.enqueue("later", {})
    await _claim_as(raw, viewer, job.id, worker.instance_id, now_ms() - 120_000, interval_ms=100)
    assert (await viewer.check_owner(worker.instance_id)).alive
    assert await viewer.count_dead_owner_jobs(worker.instance_id) == 0
    assert await viewer.release_dead_owner_jobs(worker.instance_id) == 0
    assert (await viewer.get_job(job.id)).status is JobStatus.PROCESSING


async def test_release_dead_owner_refuses_a_bad_instance_id(monque):
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match="instance_id must be a non-empty string"):
        await m.release_dead_owner_jobs("")


# -- pause and resume ---------------------------------------------------------------------------------------
async def test_a_paused_name_is_not_claimed_and_resume_claims_it_at_once(monque, recorder, wait_until):
    m = await monque()
    ran = []
    m.register("email", lambda job: ran.append(job.id))
    m.register("sms", lambda job: ran.append(job.id))
    rec = recorder(m, "queue:paused", "queue:resumed", "job:complete")
    await m.start()
    assert await m.pause("email") is True
    assert await m.pause("email") is False  # already paused
    assert list(await m.paused()) == ["email"]
    held = await m.enqueue("email")
    marker = await m.enqueue("sms")
    await rec.wait_for("job:complete", where=lambda e: e.job.id == marker.id)
    assert held.id not in ran and (await m.get_job(held.id)).status is JobStatus.PENDING
    assert [e.name for e in rec.of("queue:paused")] == ["email"]
    assert await m.resume("email") is True
    await rec.wait_for("job:complete", where=lambda e: e.job.id == held.id)
    assert [e.name for e in rec.of("queue:resumed")] == ["email"]
    assert await m.paused() == {}
    assert await m.resume("email") is False


async def test_a_pause_from_another_instance_is_followed_within_a_poll_interval(monque, recorder):
    worker = await monque(poll_interval=0.05)
    started = asyncio.Event()
    release = asyncio.Event()
    finished = []

    async def handler(job):
        started.set()
        await release.wait()
        finished.append(job.id)

    worker.register("email", handler)
    rec = recorder(worker, "queue:paused", "queue:resumed", "job:complete")
    await worker.start()
    running = await worker.enqueue("email")
    await asyncio.wait_for(started.wait(), 5)
    operator = await monque()
    await operator.pause("email")
    await rec.wait_for("queue:paused")
    waiting = await operator.enqueue("email")
    release.set()  # the running job finishes even though its name is paused
    await rec.wait_for("job:complete", where=lambda e: e.job.id == running.id)
    assert (await worker.get_job(waiting.id)).status is JobStatus.PENDING
    await operator.resume("email")
    await rec.wait_for("queue:resumed")
    await rec.wait_for("job:complete", where=lambda e: e.job.id == waiting.id)
    assert finished == [running.id, waiting.id]


async def test_a_name_paused_before_start_is_never_claimed(monque, recorder):
    operator = await monque()
    await operator.pause("email")
    await operator.enqueue("email")
    marker = await operator.enqueue("sms")
    worker = await monque()
    ran = []
    worker.register("email", lambda job: ran.append(job.id))
    worker.register("sms", lambda job: ran.append(job.id))
    rec = recorder(worker, "job:complete")
    await worker.start()
    await rec.wait_for("job:complete", where=lambda e: e.job.id == marker.id)
    assert ran == [marker.id]


async def test_pause_refuses_an_invalid_name(monque):
    m = await monque()
    with pytest.raises(InvalidJobIdentifierError):
        await m.pause("has space")


# -- queue health and counters ---------------------------------------------------------------------------
async def test_queue_health_reports_due_scheduled_latency_and_paused(monque, raw):
    m = await monque()
    now = datetime.now(UTC)
    overdue = await m.enqueue("email")
    await raw(m).set(overdue.id, nextRunAt=now - timedelta(seconds=90))
    await m.enqueue("email")
    await m.enqueue("email", run_at=timedelta(hours=1))
    await m.pause("reports")
    by_name = {h.name: h for h in await m.queue_health()}
    email = by_name["email"]
    assert (email.due, email.scheduled, email.processing, email.paused) == (2, 1, 0, False)
    assert email.latency is not None and email.latency >= 89
    assert by_name["reports"].paused and by_name["reports"].due == 0 and by_name["reports"].latency is None


async def test_per_minute_counters_survive_a_restart(monque, store_url, wait_until):
    worker = await monque(heartbeat_interval=0.05, max_retries=1)

    def handler(job):
        if job.data.get("fail"):
            raise RuntimeError("boom")

    worker.register("email", handler)
    await worker.start()
    for n in range(4):
        await worker.enqueue("email", {"n": n, "fail": n == 0})

    async def settled() -> bool:
        stats = await worker.get_queue_stats("email")
        return stats.completed == 3 and stats.failed == 1

    await wait_until(settled, message="3 completed and 1 failed")
    await worker.close()  # flushes what the last tick had not written
    reader = await monque()
    (email,) = await reader.queue_health()
    assert (email.completed_last_window, email.failed_last_window) == (3, 1)
    assert all(m.minute.second == 0 and m.minute.tzinfo is not None for m in email.per_minute)


async def test_queue_health_refuses_a_bad_window(monque):
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match="window_minutes must be an integer from 1 to 2880"):
        await m.queue_health(window_minutes=0)


async def test_old_records_and_counters_are_purged_by_a_running_instance(monque):
    from monque_engine.job import InstanceRecord

    m = await monque()
    store = m.store
    day_ago = now_ms() - 25 * 3600 * 1000
    await store.upsert_instance(InstanceRecord("gone", "h", 1, "v", day_ago, 1000, {}, 0, 0, 0, day_ago))
    await store.upsert_instance(InstanceRecord("recent", "h", 2, "v", now_ms(), 1000, {}, 0, 0, 0, now_ms() - 60_000))
    minute = now_ms() // 60_000
    await store.add_outcome_counts({("email", minute - 49 * 60): (5, 0), ("email", minute - 60): (7, 1)})
    m.register("email", lambda job: None)
    await m.start()  # registers, and its first tick applies retention
    assert {info.id for info in await m.instances()} == {"recent", m.instance_id}
    assert await store.outcome_counts(0) == [("email", minute - 60, 7, 1)]  # the 49 h old row is gone

"""Intake: enqueue, now, schedule, enqueue_many, unique keys."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from datetime import UTC, datetime, timedelta

import pytest

from monque_engine import ConnectionError, InvalidJobIdentifierError, InvalidJobQueryError, Job, JobStatus, Monque
from monque_engine.timeutil import now_ms


async def test_enqueue_stores_a_pending_job_with_the_schema_fields(monque):
    m = await monque()
    before = now_ms()
    job = await m.enqueue("email", {"to": "a@example.com", "n": [1, 2.5, None, True]})
    after = now_ms()
    assert isinstance(job, Job)
    assert len(job.id) == 24 and int(job.id, 16) >= 0
    assert job.status is JobStatus.PENDING
    assert job.fail_count == 0
    assert before <= job.created_at_ms <= after
    assert job.updated_at_ms == job.created_at_ms
    assert job.next_run_at_ms == job.created_at_ms
    assert job.locked_at is None and job.claimed_by is None and job.last_heartbeat is None
    assert job.fail_reason is None and job.repeat_interval is None and job.unique_key is None
    stored = await m.get_job(job.id)
    assert stored == job
    assert stored.data == {"to": "a@example.com", "n": [1, 2.5, None, True]}
    assert stored.next_run_at.tzinfo is not None


async def test_enqueue_accepts_any_json_payload_and_none(monque):
    m = await monque()
    for data in (None, 0, "text", [1, "x"], {"nested": {"deep": [{"k": "é✓"}]}}, 1.5, False):
        job = await m.enqueue("payload", data)
        assert (await m.get_job(job.id)).data == data


async def test_now_is_due_immediately(monque):
    m = await monque()
    before = now_ms()
    job = await m.now("ping", {"x": 1})
    assert before <= job.next_run_at_ms <= now_ms()
    assert job.data == {"x": 1}


async def test_enqueue_run_at_datetime_and_timedelta(monque):
    m = await monque()
    when = datetime(2031, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    job = await m.enqueue("later", run_at=when)
    assert job.next_run_at == when
    assert (await m.get_job(job.id)).next_run_at == when

    before = now_ms()
    job2 = await m.enqueue("later", run_at=timedelta(minutes=5))
    assert before + 300_000 <= job2.next_run_at_ms <= now_ms() + 300_000

    paris = datetime(2031, 5, 6, 9, 8, 9, tzinfo=UTC).astimezone()  # any aware zone is fine
    job3 = await m.enqueue("later", run_at=paris)
    assert job3.next_run_at == paris


async def test_enqueue_run_at_wrong_type_is_rejected(monque):
    m = await monque()
    with pytest.raises(InvalidJobQueryError):
        await m.enqueue("x", run_at="tomorrow")  # type: ignore[arg-type]
    assert await m.get_jobs() == []


async def test_schedule_stores_repeat_interval_and_next_cron_time(monque):
    m = await monque()
    before = now_ms()
    job = await m.schedule("*/5 * * * *", "report", {"kind": "daily"})
    assert job.repeat_interval == "*/5 * * * *"
    assert job.is_recurring
    assert job.status is JobStatus.PENDING
    next_run = job.next_run_at
    assert next_run.minute % 5 == 0 and next_run.second == 0 and next_run.microsecond == 0
    assert before < job.next_run_at_ms <= before + 5 * 60_000
    assert (await m.get_job(job.id)).repeat_interval == "*/5 * * * *"


async def test_schedule_with_unique_key_dedups(monque):
    m = await monque()
    a = await m.schedule("@hourly", "cleanup", {"v": 1}, unique_key="cleanup")
    b = await m.schedule("@hourly", "cleanup", {"v": 2}, unique_key="cleanup")
    assert a.id == b.id
    assert b.data == {"v": 1}
    assert len(await m.get_jobs(name="cleanup")) == 1


async def test_enqueue_many_inserts_all_in_order(monque):
    m = await monque()
    when = datetime.now(UTC) + timedelta(hours=1)
    jobs = await m.enqueue_many(
        [
            {"name": "a", "data": 1},
            {"name": "b", "data": {"x": 2}, "run_at": when},
            {"name": "c", "data": None, "unique_key": "k1"},
            {"name": "c"},
        ]
    )
    assert [j.name for j in jobs] == ["a", "b", "c", "c"]
    assert len({j.id for j in jobs}) == 4
    assert jobs[1].next_run_at_ms == int(when.timestamp() * 1000)
    assert jobs[2].unique_key == "k1"
    stored = {j.id: j for j in await m.get_jobs(limit=100)}
    assert set(stored) == {j.id for j in jobs}
    for job in jobs:
        assert stored[job.id] == job


async def test_enqueue_many_empty_is_a_noop(monque):
    m = await monque()
    assert await m.enqueue_many([]) == []
    assert await m.get_jobs() == []


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "bad name", "data": 1},
        {"name": "", "data": 1},
        {"name": "ok", "data": float("nan")},
        {"name": "ok", "data": 1, "unique_key": ""},
        {"name": "ok", "data": 1, "run_at": datetime(2030, 1, 1)},  # naive
        {"name": "ok", "data": 1, "colour": "red"},  # unknown key
        {"data": 1},  # no name
        "not-a-mapping",
    ],
)
async def test_enqueue_many_is_atomic_on_a_bad_item(monque, bad):
    m = await monque()
    await m.now("existing")
    items = [{"name": "good1", "data": 1}, {"name": "good2", "data": 2}, bad, {"name": "good3", "data": 3}]
    with pytest.raises(Exception) as info:
        await m.enqueue_many(items)
    assert type(info.value).__module__.startswith("monque_engine")
    remaining = await m.get_jobs(limit=100)
    assert [j.name for j in remaining] == ["existing"]


async def test_enqueue_many_dedups_unique_keys_within_and_across_batches(monque):
    m = await monque()
    existing = await m.enqueue("sync", {"v": 0}, unique_key="acct-1")
    jobs = await m.enqueue_many(
        [
            {"name": "sync", "data": {"v": 1}, "unique_key": "acct-1"},
            {"name": "sync", "data": {"v": 2}, "unique_key": "acct-2"},
            {"name": "sync", "data": {"v": 3}, "unique_key": "acct-2"},
        ]
    )
    assert jobs[0].id == existing.id and jobs[0].data == {"v": 0}
    assert jobs[1].id == jobs[2].id and jobs[2].data == {"v": 2}
    assert len(await m.get_jobs(name="sync")) == 2


async def test_unique_key_returns_existing_pending_job_unchanged(monque):
    m = await monque()
    first = await m.enqueue("sync", {"v": 1}, unique_key="acct-42")
    second = await m.enqueue("sync", {"v": 2}, unique_key="acct-42", run_at=timedelta(hours=1))
    assert second.id == first.id
    assert second == first
    assert second.data == {"v": 1}
    assert second.next_run_at_ms == first.next_run_at_ms
    assert len(await m.get_jobs(name="sync")) == 1


async def test_unique_key_is_scoped_by_name(monque):
    m = await monque()
    a = await m.enqueue("a", 1, unique_key="same")
    b = await m.enqueue("b", 1, unique_key="same")
    assert a.id != b.id


async def test_twenty_concurrent_enqueues_of_one_key_make_one_job(monque):
    m = await monque()
    results = await asyncio.gather(*(m.enqueue("dedup", {"i": i}, unique_key="one") for i in range(20)))
    ids = {job.id for job in results}
    assert len(ids) == 1
    stored = await m.get_jobs(name="dedup")
    assert len(stored) == 1 and stored[0].id in ids
    # every caller got the winner's document
    assert all(job.data == stored[0].data for job in results)


async def test_twenty_concurrent_enqueues_from_two_instances_make_one_job(monque):
    m1 = await monque()
    m2 = await monque()
    results = await asyncio.gather(
        *((m1 if i % 2 else m2).enqueue("dedup", {"i": i}, unique_key="two") for i in range(20))
    )
    assert len({job.id for job in results}) == 1
    assert len(await m1.get_jobs(name="dedup")) == 1


async def test_unique_key_reusable_after_completion(monque, wait_until):
    m = await monque()
    m.register("once", lambda job: None)
    first = await m.enqueue("once", 1, unique_key="k")
    await m.start()
    await wait_until(lambda: _status(m, first.id, JobStatus.COMPLETED))
    await m.stop()
    second = await m.enqueue("once", 2, unique_key="k")
    assert second.id != first.id
    assert second.status is JobStatus.PENDING
    assert (await m.get_job(first.id)).status is JobStatus.COMPLETED


async def test_unique_key_reusable_after_cancel_but_not_while_processing(monque, raw):
    m = await monque()
    first = await m.enqueue("k", 1, unique_key="key")
    await raw(m).set(first.id, status="processing", claimedBy="elsewhere", lockedAt=now_ms())
    dup = await m.enqueue("k", 2, unique_key="key")
    assert dup.id == first.id and dup.status is JobStatus.PROCESSING
    await raw(m).set(first.id, status="pending", claimedBy=None, lockedAt=None)
    await m.cancel_job(first.id)
    fresh = await m.enqueue("k", 3, unique_key="key")
    assert fresh.id != first.id and fresh.data == 3


async def _status(m, job_id, status):
    job = await m.get_job(job_id)
    return job is not None and job.status is status


async def test_intake_before_initialize_raises_connection_error(monque):
    from monque_engine import ConnectionError

    m = await monque(initialize=False)
    with pytest.raises(ConnectionError):
        await m.enqueue("x")
    with pytest.raises(ConnectionError):
        await m.get_jobs()


async def test_invalid_name_on_enqueue_writes_nothing(monque):
    m = await monque()
    with pytest.raises(InvalidJobIdentifierError):
        await m.enqueue("has space", 1)
    assert await m.get_jobs() == []


# -- a file locked by another process --------------------------------------------------------------


async def test_writes_against_a_locked_file_fail_together_not_one_busy_timeout_each(tmp_path):
    """While another connection holds the write lock past busy_timeout, queued writes fail
    with ConnectionError. They fail as a batch: the writer once re-ran each operation of a
    failed batch alone, each waiting busy_timeout again, so N writes took (N+1) x busy_timeout
    (up to 512 x 10 s) while every other write of the process (heartbeats, completions)
    queued behind them. The bound below (6 x busy_timeout for 20 writes) sits far from both
    the fixed cost (one or two busy_timeouts) and the old one (at least 11)."""
    path = tmp_path / "jobs.db"
    busy_timeout = 0.5
    m = Monque(f"sqlite:///{path}?busy_timeout={busy_timeout}&inline_writes=0")
    await m.initialize()
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        results = await asyncio.gather(*(m.enqueue("w", i) for i in range(20)), return_exceptions=True)
        elapsed = time.monotonic() - started
        blocker.execute("ROLLBACK")
        assert all(isinstance(r, ConnectionError) for r in results), results
        assert elapsed < 6 * busy_timeout, (
            f"20 writes against a locked file took {elapsed:.2f} s (busy_timeout {busy_timeout} s)"
        )
        assert await m.get_jobs() == []  # nothing was written
    finally:
        blocker.close()
        await m.close()

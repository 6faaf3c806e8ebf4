"""Single-job management: cancel, retry, reschedule, delete."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monque_engine import InvalidJobQueryError, JobStateError, JobStatus
from monque_engine.timeutil import now_ms

UNKNOWN_ID = "0123456789abcdef01234567"
MALFORMED_IDS = ["", "xyz", "0123456789abcdef0123456", "0123456789abcdef012345678", "g" * 24, None, 12345]


async def _in_status(m, raw, status, name="job", **fields):
    job = await m.enqueue(name, {"s": status})
    if status != "pending":
        await raw(m).set(job.id, status=status, **fields)
    return await m.get_job(job.id)


# -- cancel -----------------------------------------------------------------------------------------


async def test_cancel_pending_job(monque, recorder):
    m = await monque()
    rec = recorder(m)
    job = await m.enqueue("c", 1)
    before = now_ms()
    cancelled = await m.cancel_job(job.id)
    assert cancelled.id == job.id
    assert cancelled.status is JobStatus.CANCELLED
    assert cancelled.updated_at_ms >= before
    assert await m.get_job(job.id) == cancelled
    (event,) = rec.of("job:cancelled")
    assert event.job == cancelled
    assert rec.names() == ["job:cancelled"]


async def test_cancel_already_cancelled_returns_it_without_event(monque, recorder):
    m = await monque()
    job = await m.enqueue("c", 1)
    first = await m.cancel_job(job.id)
    rec = recorder(m)
    again = await m.cancel_job(job.id)
    assert again == first
    assert rec.records == []


@pytest.mark.parametrize("status", ["processing", "completed", "failed"])
async def test_cancel_in_other_status_raises_job_state_error(monque, raw, recorder, status):
    m = await monque()
    job = await _in_status(m, raw, status)
    rec = recorder(m)
    with pytest.raises(JobStateError) as info:
        await m.cancel_job(job.id)
    assert info.value.job_id == job.id
    assert info.value.current_status == status
    assert info.value.attempted_action == "cancel"
    assert (await m.get_job(job.id)).status.value == status
    assert rec.records == []


async def test_cancel_accepts_uppercase_and_objectid(monque):
    from bson import ObjectId

    m = await monque()
    job = await m.enqueue("c", 1)
    assert (await m.cancel_job(job.id.upper())).status is JobStatus.CANCELLED
    job2 = await m.enqueue("c", 2)
    assert (await m.cancel_job(ObjectId(job2.id))).id == job2.id


# -- retry ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["failed", "cancelled"])
async def test_retry_failed_or_cancelled(monque, raw, recorder, status):
    m = await monque()
    job = await _in_status(
        m, raw, status, failCount=4, failReason="boom", lockedAt=now_ms(), claimedBy="gone", lastHeartbeat=now_ms()
    )
    rec = recorder(m)
    before = now_ms()
    retried = await m.retry_job(job.id)
    assert retried.status is JobStatus.PENDING
    assert retried.fail_count == 0
    assert retried.fail_reason is None
    assert retried.claimed_by is None and retried.locked_at is None and retried.last_heartbeat is None
    assert before <= retried.next_run_at_ms <= now_ms()
    assert await m.get_job(job.id) == retried
    (event,) = rec.of("job:retried")
    assert event.job == retried
    assert event.previous_status == status
    assert rec.names() == ["job:retried"]


@pytest.mark.parametrize("status", ["pending", "processing", "completed"])
async def test_retry_in_other_status_raises(monque, raw, recorder, status):
    m = await monque()
    job = await _in_status(m, raw, status)
    rec = recorder(m)
    with pytest.raises(JobStateError) as info:
        await m.retry_job(job.id)
    assert (info.value.job_id, info.value.current_status, info.value.attempted_action) == (job.id, status, "retry")
    assert rec.records == []


async def test_retried_job_is_processed_again(monque, recorder, raw):
    m = await monque()
    rec = recorder(m, "job:complete")
    job = await _in_status(m, raw, "failed", name="again", failCount=10)
    m.register("again", lambda j: None)
    await m.start()
    await m.retry_job(job.id)
    (complete,) = await rec.wait_for("job:complete")
    assert complete.job.id == job.id and complete.job.status is JobStatus.COMPLETED


# -- reschedule -------------------------------------------------------------------------------------


async def test_reschedule_pending_job_without_event(monque, recorder):
    m = await monque()
    job = await m.enqueue("r", 1)
    rec = recorder(m)
    when = datetime(2035, 1, 2, 3, 4, 5, tzinfo=UTC)
    moved = await m.reschedule_job(job.id, when)
    assert moved.next_run_at == when
    assert moved.status is JobStatus.PENDING
    assert moved.updated_at_ms >= job.updated_at_ms
    assert await m.get_job(job.id) == moved
    before = now_ms()
    moved2 = await m.reschedule_job(job.id, timedelta(minutes=1))
    assert before + 60_000 <= moved2.next_run_at_ms <= now_ms() + 60_000
    assert rec.records == []


async def test_reschedule_without_a_time_is_refused_not_made_due_now(monque):
    """``reschedule_job(id, None)`` (an empty form field) moved a job due in 7 days to now."""
    m = await monque()
    job = await m.enqueue("r", 1, run_at=timedelta(days=7))
    with pytest.raises(InvalidJobQueryError, match="reschedule needs run_at"):
        await m.reschedule_job(job.id, None)
    assert (await m.get_job(job.id)).next_run_at_ms == job.next_run_at_ms


@pytest.mark.parametrize("status", ["processing", "completed", "failed", "cancelled"])
async def test_reschedule_in_other_status_raises(monque, raw, status):
    m = await monque()
    job = await _in_status(m, raw, status)
    with pytest.raises(JobStateError) as info:
        await m.reschedule_job(job.id, timedelta(minutes=1))
    assert (info.value.job_id, info.value.current_status, info.value.attempted_action) == (job.id, status, "reschedule")
    assert (await m.get_job(job.id)).next_run_at_ms == job.next_run_at_ms


# -- delete -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["pending", "processing", "completed", "failed", "cancelled"])
async def test_delete_in_any_status(monque, raw, recorder, status):
    m = await monque()
    job = await _in_status(m, raw, status)
    keep = await m.enqueue("keep", 1)
    rec = recorder(m)
    assert await m.delete_job(job.id) is True
    assert await m.get_job(job.id) is None
    assert await m.get_job(keep.id) is not None
    (event,) = rec.of("job:deleted")
    assert event.job_id == job.id
    assert await m.delete_job(job.id) is False
    assert len(rec.of("job:deleted")) == 1


# -- unknown and malformed ids ----------------------------------------------------------------------


async def test_unknown_ids_return_none_or_false(monque, recorder):
    m = await monque()
    await m.enqueue("x", 1)
    rec = recorder(m)
    assert await m.get_job(UNKNOWN_ID) is None
    assert await m.cancel_job(UNKNOWN_ID) is None
    assert await m.retry_job(UNKNOWN_ID) is None
    assert await m.reschedule_job(UNKNOWN_ID, timedelta(seconds=1)) is None
    assert await m.delete_job(UNKNOWN_ID) is False
    assert rec.records == []


@pytest.mark.parametrize("bad_id", MALFORMED_IDS)
async def test_malformed_ids_return_none_or_false(monque, recorder, bad_id):
    m = await monque()
    await m.enqueue("x", 1)
    rec = recorder(m)
    assert await m.get_job(bad_id) is None
    assert await m.cancel_job(bad_id) is None
    assert await m.retry_job(bad_id) is None
    assert await m.reschedule_job(bad_id, timedelta(seconds=1)) is None
    assert await m.delete_job(bad_id) is False
    assert rec.records == []
    assert len(await m.get_jobs()) == 1


# -- retry and unique keys ------------------------------------------------------------------------


async def test_retry_job_whose_unique_key_is_held_names_the_holder(monque, raw, recorder):
    from monque_engine import UniqueKeyConflictError

    m = await monque()
    rec = recorder(m)
    old = await m.enqueue("u", 1, unique_key="k")
    await raw(m).set(old.id, status="failed", failReason="boom", failCount=3)
    holder = await m.enqueue("u", 2, unique_key="k")
    assert holder.id != old.id
    before = await m.get_job(old.id)
    with pytest.raises(UniqueKeyConflictError) as caught:
        await m.retry_job(old.id)
    error = caught.value
    assert (error.job_id, error.holder_id, error.name, error.unique_key) == (old.id, holder.id, "u", "k")
    assert holder.id in str(error) and "unique key" in str(error)
    assert await m.get_job(old.id) == before  # untouched
    assert rec.of("job:retried") == []
    # Once the holder is finished, the retry goes through.
    await raw(m).set(holder.id, status="completed")
    retried = await m.retry_job(old.id)
    assert retried.status is JobStatus.PENDING


async def test_retry_jobs_retries_everything_else_and_lists_each_unique_key_clash(monque, raw, recorder):
    m = await monque()
    rec = recorder(m, "jobs:retried")
    plain = await m.enqueue("u", 0)
    await raw(m).set(plain.id, status="failed")
    held = await m.enqueue("u", 1, unique_key="held")
    await raw(m).set(held.id, status="cancelled")
    holder = await m.enqueue("u", 2, unique_key="held")
    free = await m.enqueue("u", 3, unique_key="free")
    await raw(m).set(free.id, status="failed")
    # Two selected jobs share a key nobody holds: the first (by id) is retried, the other clashes with it.
    twin_a = await m.enqueue("u", 4, unique_key="twin")
    await raw(m).set(twin_a.id, status="failed")
    twin_b = await m.enqueue("u", 5, unique_key="twin")
    await raw(m).set(twin_b.id, status="failed")
    first, second = sorted((twin_a.id, twin_b.id))

    result = await m.retry_jobs()
    assert result.count == 3
    assert sorted(e["jobId"] for e in result.errors) == sorted([held.id, second])
    messages = {e["jobId"]: e["error"] for e in result.errors}
    assert holder.id in messages[held.id] and first in messages[second]
    status = {j.id: j.status for j in await m.get_jobs(limit=100)}
    assert status[plain.id] is status[free.id] is status[first] is JobStatus.PENDING
    assert status[held.id] is JobStatus.CANCELLED and status[second] is JobStatus.FAILED
    assert [e.count for e in rec.of("jobs:retried")] == [3]


async def test_retry_jobs_with_only_clashes_emits_nothing(monque, raw, recorder):
    m = await monque()
    rec = recorder(m, "jobs:retried")
    held = await m.enqueue("u", 1, unique_key="held")
    await raw(m).set(held.id, status="failed")
    await m.enqueue("u", 2, unique_key="held")
    result = await m.retry_jobs()
    assert result.count == 0 and [e["jobId"] for e in result.errors] == [held.id]
    assert rec.records == []

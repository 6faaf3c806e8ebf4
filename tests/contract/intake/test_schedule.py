"""Upstream parity: schedule() and recurring jobs (``tests/integration/schedule.test.ts``).

Upstream "triggers a job immediately" by writing nextRunAt in the collection; here
``reschedule_job(id, now)`` does the same through the public API (so the running
instance is told at once instead of waiting for a poll).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monque_engine import ConnectionError, InvalidCronError, JobStatus, Monque


async def _trigger(m, job_id):
    await m.reschedule_job(job_id, datetime.now(UTC) - timedelta(milliseconds=1))


async def test_a_scheduled_job_is_pending_with_its_expression_counts_and_times(monque):
    m = await monque()
    before = datetime.now(UTC).replace(microsecond=0)
    job = await m.schedule("* * * * *", "job", {"value": 123})
    after = datetime.now(UTC)
    assert job.status is JobStatus.PENDING
    assert job.repeat_interval == "* * * * *"
    assert job.fail_count == 0 and job.data == {"value": 123}
    assert before <= job.created_at <= after and job.updated_at >= job.created_at
    assert before <= job.next_run_at <= after + timedelta(minutes=1)
    hourly = await m.schedule("0 * * * *", "job", {})
    assert (hourly.next_run_at.minute, hourly.next_run_at.second) == (0, 0)
    for expression in ["0 0 * * *", "0 0 * * 0", "0 9 * * 1-5", "*/15 * * * *", "0 0 1 * *", "0 9 * * 1"]:
        stored = await m.schedule(
            expression, "job-" + expression.replace(" ", "-").replace("*", "x").replace("/", "s"), {}
        )
        assert stored.repeat_interval == expression


@pytest.mark.parametrize("expression", ["invalid", "not-a-cron", "abc def ghi jkl mno", "60 * * * *", "0 25 * * *"])
async def test_invalid_expressions_raise_and_write_nothing(monque, expression):
    m = await monque()
    with pytest.raises(InvalidCronError) as info:
        await m.schedule(expression, "job", {})
    assert info.value.expression == expression
    assert await m.get_jobs() == []


async def test_the_cron_error_message_reads_as_upstreams(monque):
    """'should provide helpful error message with format example': the expression in double
    quotes, the field order and an example, on one line."""
    m = await monque()
    with pytest.raises(InvalidCronError) as info:
        await m.schedule("bad expression", "job", {})
    message = str(info.value)
    assert "Invalid cron expression" in message
    assert '"bad expression"' in message
    assert "minute hour day-of-month month day-of-week" in message
    assert "Example:" in message
    assert "\n" not in message


async def test_unique_keys_on_schedule(monque):
    m = await monque()
    first = await m.schedule("* * * * *", "job", {"original": True}, unique_key="k")
    again = await m.schedule("* * * * *", "job", {"original": False, "extra": "field"}, unique_key="k")
    assert again.id == first.id and again.data == {"original": True}
    assert (await m.get_job(first.id)).data == {"original": True}
    other = await m.schedule("* * * * *", "other", {}, unique_key="k")
    assert other.id != first.id and other.unique_key == "k"
    plain_one = await m.schedule("* * * * *", "job", {"v": 1})
    plain_two = await m.schedule("* * * * *", "job", {"v": 2})
    assert plain_one.id != plain_two.id
    assert len(await m.get_jobs(name="job")) == 3


async def test_after_a_failed_attempt_a_success_returns_to_cron_time_and_clears_the_failure(
    monque, recorder, wait_until
):
    """'should use cron timing for next run after successful retry (not backoff)', 'should
    reset failCount', 'should clear failReason', 'should preserve repeatInterval after retry
    failure' and 'should emit job:complete event for recurring jobs'."""
    m = await monque(base_retry_interval=1, max_retries=5)
    rec = recorder(m, "job:complete", "job:fail")
    calls: list[int] = []

    def handler(job):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("Test failure reason")

    m.register("hourly", handler)
    job = await m.schedule("0 * * * *", "hourly", {})
    await m.start()
    await _trigger(m, job.id)
    await rec.wait_for("job:fail")
    failed = await m.get_job(job.id)
    assert (failed.status, failed.fail_count, failed.fail_reason) == (JobStatus.PENDING, 1, "Test failure reason")
    assert failed.repeat_interval == "0 * * * *"
    assert failed.next_run_at < datetime.now(UTC) + timedelta(seconds=5)  # backoff, not the next hour
    await _trigger(m, job.id)
    (complete,) = await rec.wait_for("job:complete")
    assert complete.job.name == "hourly" and complete.duration >= 0
    done = await m.get_job(job.id)
    assert (done.status, done.fail_count, done.fail_reason) == (JobStatus.PENDING, 0, None)
    assert (done.next_run_at.minute, done.next_run_at.second) == (0, 0)
    assert done.next_run_at > datetime.now(UTC) + timedelta(seconds=1)


async def test_a_one_off_job_is_not_rescheduled(monque, wait_until):
    m = await monque()
    m.register("once", lambda job: None)
    job = await m.enqueue("once", {"oneTime": True})
    await m.start()

    async def completed():
        return (await m.get_job(job.id)).status is JobStatus.COMPLETED

    await wait_until(completed)
    assert (await m.get_job(job.id)).repeat_interval is None


async def test_schedule_before_initialize_says_not_initialized(store_url):
    m = Monque(store_url)
    try:
        with pytest.raises(ConnectionError, match="not initialized"):
            await m.schedule("* * * * *", "job", {})
    finally:
        await m.close()

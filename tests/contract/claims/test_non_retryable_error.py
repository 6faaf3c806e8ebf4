"""Upstream parity: ``NonRetryableError`` (``non-retryable-error.test.ts``).

A handler raising ``NonRetryableError`` fails its job at once, whatever ``max_retries``
allows: ``job:fail`` says ``will_retry=False`` and carries that very error, the claim
fields are cleared, a recurring job stops and frees its unique key, and a manual retry
still works. Only the class counts: another exception that is merely named alike is
retried as usual.

Upstream's fourth case ('does not overwrite a recovered job when its former owner fails
later') recovers a job whose owner is still running it, after a 50 ms lockTimeout; ours
judges liveness by heartbeat (ADR 0004) and would not take a live owner's job, so that case
is covered in our terms by test_processing's owned-transition tests instead.
"""

from __future__ import annotations

from monque_engine import JobStatus, MonqueError, NonRetryableError


async def _is(m, job_id, status):
    job = await m.get_job(job_id)
    return job is not None and job.status is status


async def test_fails_at_once_reports_no_retry_and_can_be_retried_by_hand(monque, recorder, wait_until):
    """'fails immediately, reports no automatic retry, and permits manual retry'."""
    m = await monque(max_retries=10, base_retry_interval=0.01)
    rec = recorder(m, "job:fail", "job:complete")
    error = NonRetryableError("Account no longer exists")
    repaired = False

    async def deliver(job):
        if not repaired:
            raise error

    m.register("deliver", deliver)
    job = await m.enqueue("deliver", {}, unique_key="account")
    await m.start()
    (event,) = await rec.wait_for("job:fail")
    assert event.will_retry is False and event.error is error
    failed = await m.get_job(job.id)
    assert (failed.status, failed.fail_count, failed.fail_reason) == (
        JobStatus.FAILED, 1, "Account no longer exists",
    )  # fmt: skip
    assert failed.claimed_by is None and failed.locked_at is None
    assert isinstance(error, MonqueError)
    repaired = True
    await m.retry_job(job.id)
    await rec.wait_for("job:complete")
    assert [e.will_retry for e in rec.of("job:fail")] == [False]


async def test_a_recurring_job_stops_and_frees_its_unique_key(monque, wait_until):
    """'stops recurring jobs and releases their unique key' (ours: the zone is ``tz=``)."""
    m = await monque()

    async def daily(job):
        raise NonRetryableError("Invalid subscription")

    m.register("daily", daily)
    job = await m.schedule("0 9 * * *", "daily", {}, unique_key="subscription", tz="Europe/Berlin")
    await m.reschedule_job(job.id, job.created_at)
    await m.start()
    await wait_until(lambda: _is(m, job.id, JobStatus.FAILED), message="the recurring job failed for good")
    await m.stop()
    failed = await m.get_job(job.id)
    assert failed.fail_count == 1 and failed.repeat_interval == job.repeat_interval
    replacement = await m.schedule("0 9 * * *", "daily", {}, unique_key="subscription", tz="Europe/Berlin")
    assert replacement.id != job.id
    duplicate = await m.schedule("0 9 * * *", "daily", {}, unique_key="subscription", tz="Europe/Berlin")
    assert duplicate.id == replacement.id


async def test_an_error_only_named_alike_is_retried(monque, recorder, wait_until):
    """'keeps retrying ordinary errors even when their name matches the special error'."""
    m = await monque(max_retries=3, base_retry_interval=0.01)
    rec = recorder(m, "job:fail")

    class NonRetryableError(Exception):  # the point is the name
        pass

    async def transient(job):
        if job.fail_count == 0:
            raise NonRetryableError("Temporary outage")

    m.register("transient", transient)
    job = await m.enqueue("transient", {})
    await m.start()
    await wait_until(lambda: _is(m, job.id, JobStatus.COMPLETED), message="completed on the retry")
    assert [e.will_retry for e in rec.of("job:fail")] == [True]
    assert (await m.get_job(job.id)).fail_count == 1


async def test_a_plain_function_handler_raising_it_fails_at_once_too(monque, recorder):
    m = await monque(max_retries=10)
    rec = recorder(m, "job:fail")

    def sync_handler(job):
        raise NonRetryableError("no")

    m.register("sync", sync_handler)
    job = await m.enqueue("sync", {})
    await m.start()
    (event,) = await rec.wait_for("job:fail")
    assert event.will_retry is False
    assert (await m.get_job(job.id)).status is JobStatus.FAILED

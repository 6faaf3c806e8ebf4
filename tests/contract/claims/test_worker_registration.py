"""Upstream parity: worker registration (``worker-retries.test.ts``, ``worker-replacement.test.ts``).

Upstream's ``register(name, handler, {concurrency, replace, maxRetries, baseRetryInterval,
maxBackoffDelay})`` gives one name its own retry policy; a name registered without them
inherits the instance options; an execution keeps the policy of the registration that
started it when the name is re-registered meanwhile. Ours are keyword arguments of
``register`` (and ``worker``), intervals in seconds.

Replacing a running worker keeps its active job counted (the summary shows it, and the
name's concurrency still holds a new job back) until it ends; later jobs run the latest
handler; stop() waits for the replaced handler.
"""

from __future__ import annotations

import asyncio

import pytest

from monque_engine import JobStatus, WorkerRegistrationError

FAST = {"base_retry_interval": 0, "poll_interval": 0.02, "safety_poll_interval": 0.02}


async def _status(m, job_id):
    job = await m.get_job(job_id)
    return None if job is None else job.status


async def test_a_worker_has_its_own_failure_limit_and_others_inherit_the_instances(monque, wait_until):
    """'applies independent failure limits while other workers inherit defaults'."""
    m = await monque(max_retries=1, **FAST)

    async def fail(job):
        raise RuntimeError("Unavailable")

    m.register("custom", fail, concurrency=1, max_retries=2)
    m.register("default", fail)
    custom = await m.enqueue("custom", {})
    inherited = await m.enqueue("default", {})
    await m.start()
    await wait_until(lambda: all_failed(m, custom.id, inherited.id), message="both jobs failed for good")
    assert (await m.get_job(custom.id)).fail_count == 2
    assert (await m.get_job(inherited.id)).fail_count == 1


async def all_failed(m, *ids):
    return all([await _status(m, job_id) is JobStatus.FAILED for job_id in ids])


@pytest.mark.parametrize(
    ("options", "low_ms", "high_ms"),
    [({"base_retry_interval": 1}, 1500, 2500), ({"max_backoff_delay": 1}, 750, 1000)],
    ids=["base_retry_interval", "max_backoff_delay"],
)
async def test_a_worker_uses_its_own_backoff_settings(monque, recorder, options, low_ms, high_ms):
    """'uses worker backoff settings': the instance base is 20 s; the worker's own base (1 s:
    2 s ± 25 % after the first failure) or cap (1 s, jittered down by up to 25 %) decides.
    The retry time is computed from the same instant the failure writes as updatedAt, so
    the window is exact, not a timing allowance."""
    m = await monque(base_retry_interval=20, max_backoff_delay=86_400)

    async def fail(job):
        raise RuntimeError("Unavailable")

    m.register("work", fail, **options)
    rec = recorder(m, "job:fail")
    await m.enqueue("work", {})
    await m.start()
    (event,) = await rec.wait_for("job:fail")
    delay = event.job.next_run_at_ms - event.job.updated_at_ms
    assert event.will_retry and low_ms <= delay <= high_ms


async def test_an_execution_keeps_the_retry_policy_of_the_worker_that_started_it(monque, wait_until):
    """'keeps the retry policy of an execution when its worker is replaced'."""
    m = await monque(**FAST)
    started, release = asyncio.Event(), asyncio.Event()

    async def original(job):
        started.set()
        await release.wait()
        raise RuntimeError("Original failure")

    async def replacement(job):
        raise RuntimeError("Replacement failure")

    m.register("work", original, max_retries=1)
    job = await m.enqueue("work", {})
    await m.start()
    await asyncio.wait_for(started.wait(), 5)
    m.register("work", replacement, replace=True, max_retries=5)
    release.set()
    await wait_until(lambda: _is(m, job.id, JobStatus.FAILED), message="the original execution failed for good")
    stored = await m.get_job(job.id)
    assert (stored.fail_count, stored.fail_reason) == (1, "Original failure")


async def _is(m, job_id, status):
    return await _status(m, job_id) is status


@pytest.mark.parametrize(
    "bad",
    [{"max_retries": -1}, {"max_retries": 1.5}, {"max_retries": True}, {"base_retry_interval": -1},
     {"base_retry_interval": float("nan")}, {"max_backoff_delay": float("inf")}, {"max_backoff_delay": "1"}],
    ids=repr,
)  # fmt: skip
async def test_bad_retry_options_are_refused_and_leave_the_registration_alone(monque, bad):
    m = await monque()

    async def first(job):
        return None

    m.register("work", first)
    with pytest.raises(WorkerRegistrationError, match=next(iter(bad))) as caught:
        m.register("work", first, replace=True, **bad)
    assert caught.value.job_name == "work"
    assert m.registered_names == ["work"]


async def test_the_worker_decorator_takes_the_same_options(monque, wait_until):
    m = await monque(max_retries=5, **FAST)

    @m.worker("decorated", max_retries=1)
    async def fail(job):
        raise RuntimeError("once")

    job = await m.enqueue("decorated", {})
    await m.start()
    await wait_until(lambda: _is(m, job.id, JobStatus.FAILED), message="failed after one attempt")
    assert (await m.get_job(job.id)).fail_count == 1


@pytest.mark.parametrize("fail", [False, True], ids=["success", "failure"])
async def test_replacing_a_running_worker_keeps_its_active_job_visible_until_it_ends(monque, wait_until, fail):
    """'keeps active jobs visible until they finish': with concurrency 1 the running job of
    the replaced handler still holds the slot, so a new job waits; it then runs on the
    latest handler, and the summary's active count goes back to 0."""
    m = await monque(worker_concurrency=1, max_retries=1, poll_interval=0.02, safety_poll_interval=0.02)
    started, release = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def original(job):
        started.set()
        await release.wait()
        order.append("original")
        if fail:
            raise RuntimeError("Original handler failed")

    async def replacement(job):
        order.append("replacement")

    async def latest(job):
        order.append("latest")

    async def witness(job):
        return None

    m.register("work", original)
    m.register("witness", witness)
    first = await m.enqueue("work", {})
    await m.start()
    await asyncio.wait_for(started.wait(), 5)
    m.register("work", replacement, replace=True)
    m.register("work", latest, replace=True)
    (summary,) = [s for s in await m.get_queue_view_summaries() if s.name == "work"]
    assert (summary.worker.active_count, summary.worker.concurrency) == (1, 1)
    waiting = await m.enqueue("work", {})
    # A job of another name enqueued after it and run to completion: the processor has
    # had its chance to claim the waiting job, and the full slot kept it back.
    seen = await m.enqueue("witness", {})
    await wait_until(lambda: _is(m, seen.id, JobStatus.COMPLETED), message="the witness job ran")
    assert await _status(m, waiting.id) is JobStatus.PENDING
    release.set()
    await wait_until(lambda: _is(m, waiting.id, JobStatus.COMPLETED), message="the waiting job ran")
    await m.stop()
    assert order == ["original", "latest"]
    assert await _status(m, first.id) is (JobStatus.FAILED if fail else JobStatus.COMPLETED)
    (summary,) = [s for s in await m.get_queue_view_summaries() if s.name == "work"]
    assert summary.worker.active_count == 0


async def test_stop_drains_the_replaced_handler(monque, wait_until):
    """'drains the original handler during shutdown after replacement'."""
    m = await monque(shutdown_timeout=10)
    started, release = asyncio.Event(), asyncio.Event()

    async def original(job):
        started.set()
        await release.wait()

    async def replacement(job):
        return None

    m.register("work", original)
    job = await m.enqueue("work", {})
    await m.start()
    await asyncio.wait_for(started.wait(), 5)
    m.register("work", replacement, replace=True)
    stopping = asyncio.create_task(m.stop())
    await wait_until(lambda: not m.is_running, message="stop() began")
    assert not stopping.done()  # waiting for the replaced handler
    release.set()
    await asyncio.wait_for(stopping, 10)
    assert await _status(m, job.id) is JobStatus.COMPLETED


async def test_worker_with_a_handler_registers_at_once_as_upstreams_worker(monque, wait_until):
    """recovery.test.ts registers with ``monque.worker(name, handler)``: upstream's older name
    for ``register``. Ours registers at once when given the handler (and is a decorator
    without one)."""
    m = await monque()
    ran: list[str] = []

    async def handler(job):
        ran.append(job.id)

    assert m.worker("direct", handler) is handler
    assert m.registered_names == ["direct"]
    with pytest.raises(WorkerRegistrationError):
        m.worker("direct", handler)  # a second registration needs replace, as register's
    job = await m.enqueue("direct", {})
    await m.start()
    await wait_until(lambda: _is(m, job.id, JobStatus.COMPLETED), message="the directly registered worker ran")
    assert ran == [job.id]


async def test_a_duplicate_registration_says_so_in_upstreams_words(monque):
    """worker.test.ts: 'Worker already registered for job name "same-job"', with the job
    name on the error; ours adds how to replace it."""
    m = await monque()

    async def handler(job):
        return None

    m.register("same-job", handler)
    with pytest.raises(WorkerRegistrationError, match=r'^Worker already registered for job name "same-job"') as caught:
        m.register("same-job", handler)
    assert caught.value.job_name == "same-job" and "replace=True" in str(caught.value)

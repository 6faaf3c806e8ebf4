"""Issue 38 part 3: a handler's return value kept as ``job.result``, and ``wait()``.

Runs on both stores (MongoDB with MONQUE_TEST_MONGODB_URI). The result is written in the
completion's own write; ``wait`` learns of the final state from the change feed, so a job
run by another ``Monque`` (here a second instance on the same store) is waited for too.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from monque_engine import (
    MAX_RESULT_BYTES,
    InvalidJobQueryError,
    JobNotFoundError,
    JobStatus,
    MonqueError,
    WaitTimeoutError,
)


async def test_async_handler_result_is_stored_and_wait_returns_it(monque):
    m = await monque()

    async def add(job):
        return {"sum": job.data["a"] + job.data["b"], "parts": (job.data["a"], job.data["b"])}

    m.register("add", add)
    job = await m.enqueue("add", {"a": 2, "b": 3})
    await m.start()
    done = await m.wait(job.id, timeout=30)
    assert done.status is JobStatus.COMPLETED
    assert done.result == {"sum": 5, "parts": [2, 3]}  # a tuple reads back as JSON's list
    assert (await m.get_job(job.id)).result == {"sum": 5, "parts": [2, 3]}


async def test_sync_handler_result_and_none_keeps_no_result(monque):
    m = await monque()
    m.register("upper", lambda job: job.data.upper())
    m.register("quiet", lambda job: None)
    loud = await m.enqueue("upper", "hi")
    quiet = await m.enqueue("quiet", "hi")
    await m.start()
    assert (await m.wait(loud.id, timeout=30)).result == "HI"
    done = await m.wait(quiet.id, timeout=30)
    assert done.status is JobStatus.COMPLETED and done.result is None


async def test_result_with_a_time_limit(monque):
    """The limited paths (``_run_limited``) hand the value on too, async and sync."""
    m = await monque()

    async def slow_ok(job):
        return 1

    m.register("a", slow_ok, timeout=30)
    m.register("s", lambda job: [1, 2], timeout=30)
    a = await m.enqueue("a")
    s = await m.enqueue("s")
    await m.start()
    assert (await m.wait(a.id, timeout=30)).result == 1
    assert (await m.wait(s.id, timeout=30)).result == [1, 2]


@pytest.mark.parametrize(
    ("value", "words"),
    [({"blob": "x" * (MAX_RESULT_BYTES + 1)}, "over the limit of 65536 bytes"), ({1, 2}, "cannot be stored as JSON")],
)
async def test_a_result_that_cannot_be_kept_fails_the_job_without_retries(monque, value, words):
    m = await monque(max_retries=5)
    m.register("big", lambda job: value)
    job = await m.enqueue("big")
    await m.start()
    done = await m.wait(job.id, timeout=30)
    assert done.status is JobStatus.FAILED and done.fail_count == 1
    assert words in done.fail_reason and done.result is None
    assert done.attempts[-1].error_type.endswith("InvalidResultError")


async def test_recurring_job_keeps_its_last_runs_result(monque, wait_until):
    m = await monque()
    runs = []

    def tick(job):
        runs.append(1)
        return len(runs)

    m.register("tick", tick)
    job = await m.schedule("* * * * * *", "tick")
    await m.start()

    async def has_result():
        current = await m.get_job(job.id)
        return current.result if current.result else None

    first = await wait_until(has_result)
    assert first >= 1


async def test_wait_on_a_job_another_instance_runs(monque):
    producer = await monque()
    worker = await monque()
    worker.register("echo", lambda job: job.data)
    job = await producer.enqueue("echo", {"k": [1, "two"]})
    waiter = asyncio.create_task(producer.wait(job.id, timeout=30))
    await asyncio.sleep(0)  # the waiter is waiting before the job runs
    await worker.start()
    done = await waiter
    assert done.result == {"k": [1, "two"]} and done.status is JobStatus.COMPLETED


async def test_wait_returns_a_final_job_at_once_and_cancelled_counts(monque):
    m = await monque()
    job = await m.enqueue("nobody-runs-this")
    await m.cancel_job(job.id)
    assert (await m.wait(job.id, timeout=30)).status is JobStatus.CANCELLED

    later = await m.enqueue("nobody-runs-this", {"n": 2})
    waiter = asyncio.create_task(m.wait(later.id, timeout=30))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    await m.cancel_job(later.id)
    assert (await waiter).status is JobStatus.CANCELLED


async def test_wait_errors_unknown_deleted_timeout_bad_timeout(monque):
    m = await monque()
    with pytest.raises(JobNotFoundError, match="names no stored job"):
        await m.wait("0" * 24, timeout=5)
    with pytest.raises(JobNotFoundError, match="is not a job id"):
        await m.wait("nope", timeout=5)
    job = await m.enqueue("nobody-runs-this")
    with pytest.raises(WaitTimeoutError, match=r"still pending after waiting 0\.2 s") as caught:
        await m.wait(job.id, timeout=0.2)
    assert isinstance(caught.value, TimeoutError) and isinstance(caught.value, MonqueError)
    assert caught.value.job is not None and caught.value.job.id == job.id
    for bad in (0, -1, float("nan"), "5", True):
        with pytest.raises(InvalidJobQueryError, match="wait\\(\\) timeout"):
            await m.wait(job.id, timeout=bad)
    waiter = asyncio.create_task(m.wait(job.id, timeout=30))
    await asyncio.sleep(0.05)
    await m.delete_job(job.id)
    with pytest.raises(JobNotFoundError, match="deleted while wait"):
        await waiter


async def test_wait_reads_the_job_only_when_the_feed_brings_it_a_final_status(monque, wait_until):
    """Not a poll: other jobs' changes and its own non-final ones cost no read of the job."""
    m = await monque()
    job = await m.enqueue("nobody-runs-this")
    reads = []
    get = m.store.get

    async def counting_get(job_id):
        reads.append(job_id)
        return await get(job_id)

    m.store.get = counting_get
    waiter = asyncio.create_task(m.wait(job.id, timeout=30))
    await wait_until(lambda: reads, 10, "the waiter's first read (it is past opening the feed)")
    for n in range(30):
        await m.enqueue("other", {"n": n})  # changes of other jobs
    await m.reschedule_job(job.id, timedelta(hours=1))  # a change of its own, still pending
    await asyncio.sleep(0.3)  # a window for a poll to show itself (a poll re-reads every 50 ms or more often)
    assert not waiter.done() and reads == [job.id]
    await m.cancel_job(job.id)
    assert (await waiter).status is JobStatus.CANCELLED
    assert reads.count(job.id) == 2


async def test_import_jobs_keeps_a_result_and_refuses_one_that_is_not_json(monque):
    from job_samples import sample_jobs

    m = await monque()
    good = sample_jobs()[0].replace(status=JobStatus.COMPLETED, result={"ok": [1, 2]})
    assert await m.import_jobs([good]) == 1
    assert (await m.get_job(good.id)).result == {"ok": [1, 2]}
    bad = sample_jobs()[1].replace(status=JobStatus.COMPLETED, result={1, 2})
    with pytest.raises(InvalidJobQueryError, match=r"import_jobs item 0 .*result is \{1, 2\}; it must be None or JSON"):
        await m.import_jobs([bad])
    assert await m.get_job(bad.id) is None

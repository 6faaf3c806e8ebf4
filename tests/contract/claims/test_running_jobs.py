"""Stopping a running job and its progress (issue 37 parts 2 and 3, ADR 0019), per store:
the same Monque is owner and operator here (the cross-process paths are in
``tests/test_multiprocess_running_jobs.py``). Tests wait on events, never on durations.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from monque_engine import JobStatus, StopRefusedError


async def test_a_stop_ends_an_async_handler_and_the_job_cancelled(monque, recorder) -> None:
    m = await monque()
    rec = recorder(m, "job:start", "job:cancelled")
    cancelled: list[bool] = []

    async def hang(job):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    m.register("hang", hang)
    job = await m.enqueue("hang")
    await m.start()
    await rec.wait_for("job:start")
    asked = await m.cancel_job(job.id, running=True)
    assert asked is not None and asked.status is JobStatus.PROCESSING and asked.stop_pending
    [event] = await rec.wait_for("job:cancelled")
    assert event.job.id == job.id and cancelled == [True]
    stored = await m.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.CANCELLED and stored.claimed_by is None
    assert [attempt.outcome for attempt in stored.attempts] == ["cancelled"]


async def test_a_sync_handler_sees_should_stop_and_its_job_ends_cancelled(monque, recorder) -> None:
    m = await monque()
    rec = recorder(m, "job:start", "job:cancelled")
    asked = threading.Event()
    seen: list[bool] = []

    def poll(job):
        while not job.should_stop():
            asked.wait(0.01)
        seen.append(True)

    m.register("poll", poll)
    job = await m.enqueue("poll")
    await m.start()
    await rec.wait_for("job:start")
    await m.cancel_job(job.id, running=True)
    await rec.wait_for("job:cancelled")
    assert seen == [True]
    stored = await m.get_job(job.id)
    assert stored is not None and [attempt.outcome for attempt in stored.attempts] == ["cancelled"]


async def test_a_stop_for_a_completed_job_says_so_and_changes_nothing(monque, recorder) -> None:
    m = await monque()
    rec = recorder(m, "job:complete")
    m.register("quick", lambda job: None)
    job = await m.enqueue("quick")
    await m.start()
    await rec.wait_for("job:complete")
    before = await m.get_job(job.id)
    with pytest.raises(StopRefusedError, match="no longer running \\(now 'completed'\\); nothing was changed"):
        await m.cancel_job(job.id, running=True)
    assert await m.get_job(job.id) == before


async def test_progress_is_stored_for_the_running_attempt(monque, recorder) -> None:
    m = await monque()
    rec = recorder(m, "job:start", "job:cancelled")
    reported = asyncio.Event()

    async def report(job):
        await job.report_progress(0.3, "a third")
        reported.set()
        await asyncio.Event().wait()

    m.register("report", report)
    job = await m.enqueue("report")
    await m.start()
    await asyncio.wait_for(reported.wait(), 30)
    stored = await m.get_job(job.id)
    assert stored is not None and stored.running_progress is not None
    assert (stored.running_progress.fraction, stored.running_progress.message) == (0.3, "a third")
    await m.cancel_job(job.id, running=True)
    await rec.wait_for("job:cancelled")


async def test_instances_name_each_one_s_longest_running_job(monque, recorder) -> None:
    m = await monque()
    rec = recorder(m, "job:start")
    release = asyncio.Event()

    async def hang(job):
        await release.wait()

    m.register("hang", hang, concurrency=2)
    first = await m.enqueue("hang", {"n": 1})
    await m.start()
    await rec.wait_for("job:start")
    await m.enqueue("hang", {"n": 2})
    await rec.wait_for("job:start", 2)
    [me] = [info for info in await m.instances() if info.id == m.instance_id]
    stored = await m.get_job(first.id)
    assert stored is not None and (me.longest_job_id, me.longest_since) == (first.id, stored.locked_at)
    release.set()


async def test_running_jobs_list_by_run_time_in_pages_and_only_them(monque) -> None:
    from monque_engine import JobListFilter, JobSort
    from monque_engine.errors import InvalidJobQueryError
    from monque_engine.timeutil import now_ms

    m = await monque()
    for n in range(5):
        await m.enqueue("task", {"n": n})
    start = now_ms()
    claimed = [job for step in range(3) for job in await m.store.claim("task", "owner", start + step, 1, 30_000)]
    running = JobListFilter(status="processing")
    longest = JobSort("locked_at", "asc")
    first = await m.get_jobs_with_cursor(limit=2, filter=running, sort=longest)
    assert [job.id for job in first.jobs] == [job.id for job in claimed[:2]] and first.has_next_page
    rest = await m.get_jobs_with_cursor(first.cursor, limit=2, filter=running, sort=longest)
    assert [job.id for job in rest.jobs] == [claimed[2].id] and not rest.has_next_page
    with pytest.raises(InvalidJobQueryError, match="processing jobs only"):
        await m.get_jobs_with_cursor(sort=longest)

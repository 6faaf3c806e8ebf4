"""Upstream parity: job discovery (``job-discovery.test.ts``) — 'runs persisted future jobs
before the safety interval, including after draining due work'.

Jobs stored before ``start()`` (by another instance here) are known only from the start-up
poll, which reads each name's *earliest* pending job. When that one is due now, a later job
of the same name sat behind it unseen: after the due work was drained, nothing armed a timer
for it, and it waited for the safety poll (60 s here) instead of running when due. The poll
now asks the filler to look up the next due time once the due work is drained.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta


async def test_future_jobs_stored_before_start_run_when_due_after_the_due_work(monque, wait_until):
    producer = await monque()
    consumer = await monque(poll_interval=60, safety_poll_interval=60, worker_concurrency=1)
    handled: list[str] = []

    async def handler(job):
        handled.append(job.data["value"])

    consumer.register("work", handler)
    consumer.register("future-only", handler)
    soon = timedelta(milliseconds=700)
    await producer.enqueue("work", {"value": "due"})
    await producer.enqueue("work", {"value": "future"}, run_at=soon)
    await producer.enqueue("future-only", {"value": "other"}, run_at=soon)
    await consumer.start()
    # Well inside the 60 s safety poll: only a timer armed for the future jobs runs them.
    await wait_until(lambda: len(handled) == 3, timeout=20, message=f"all three ran (ran: {handled})")
    assert sorted(handled) == ["due", "future", "other"]


async def test_a_future_job_runs_in_a_free_slot_while_an_earlier_job_still_runs(monque, wait_until):
    """'wakes a persisted job with a free slot': one slot holds a long job, the other is free
    when a job stored before start() falls due."""
    producer = await monque()
    consumer = await monque(poll_interval=60, safety_poll_interval=60, worker_concurrency=2)
    release = asyncio.Event()
    started: list[str] = []

    async def handler(job):
        started.append(job.data["value"])
        if job.data["value"] == "hold":
            await release.wait()

    consumer.register("work", handler)
    await producer.enqueue("work", {"value": "hold"})
    await producer.enqueue("work", {"value": "future"}, run_at=timedelta(milliseconds=700))
    await consumer.start()
    try:
        await wait_until(lambda: "future" in started, timeout=20, message="the future job ran beside the held one")
    finally:
        release.set()

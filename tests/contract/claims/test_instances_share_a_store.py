"""Upstream parity: ``concurrency.test.ts`` 'should process 100 jobs with 3 scheduler
instances without duplicates', with the three instances in one process on one store (the
multi-process variants are in test_multiprocess): every job runs once, no ``job:error``,
all end completed.
"""

from __future__ import annotations

import asyncio


async def test_three_instances_on_one_store_run_100_jobs_once_each(monque, wait_until):
    instances = [await monque(poll_interval=0.05, worker_concurrency=5) for _ in range(3)]
    seen: set[int] = set()
    duplicates: set[int] = set()
    errors: list[BaseException] = []

    async def handler(job):
        if job.data["id"] in seen:
            duplicates.add(job.data["id"])
        seen.add(job.data["id"])
        await asyncio.sleep(0)  # yield, so the instances interleave

    for m in instances:
        m.register("work", handler)
        m.on("job:error", lambda event: errors.append(event.error))
    await asyncio.gather(*(instances[0].enqueue("work", {"id": i}) for i in range(100)))
    for m in instances:
        await m.start()
    await wait_until(lambda: len(seen) == 100, timeout=30, message="every job ran")
    await wait_until(lambda: _completed(instances[0], 100), timeout=10, message="every job stored as completed")
    assert duplicates == set() and errors == []


async def _completed(m, count):
    return await m.count_jobs(None) == count and len(await m.get_jobs(status="completed", limit=1000)) == count

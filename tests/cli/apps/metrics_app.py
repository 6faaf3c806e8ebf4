"""Handlers for the metrics tests (instance form, bound to $TEST_APP_URL): ``work.ok`` holds
until the file named by $METRICS_GATE exists, so a test can scrape while jobs are running;
``work.fail`` fails for good; ``work.flaky`` fails its first attempt and is retried at once."""

from __future__ import annotations

import asyncio
import os

from monque_engine import Job, Monque, NonRetryableError

monque = Monque(os.environ["TEST_APP_URL"], base_retry_interval=0, worker_concurrency=5)
GATE = os.environ.get("METRICS_GATE", "")


@monque.worker("work.ok")
async def ok(job: Job) -> None:
    while GATE and not os.path.exists(GATE):
        await asyncio.sleep(0.02)


@monque.worker("work.fail")
async def fail(job: Job) -> None:
    raise NonRetryableError(f"no way {job.data}")


@monque.worker("work.flaky")
async def flaky(job: Job) -> None:
    if job.fail_count == 0:
        raise RuntimeError("first attempt fails")

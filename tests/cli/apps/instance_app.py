"""The instance form: a module-level Monque with handlers, bound to $TEST_APP_URL."""

from __future__ import annotations

import os

from monque_engine import Job, Monque

monque = Monque(os.environ["TEST_APP_URL"], worker_concurrency=2)


@monque.worker("fast")
async def fast(job: Job) -> None:
    # Handlers of the instance form often enqueue follow-ups on the same instance.
    if job.data and job.data.get("then"):
        await monque.enqueue(job.data["then"], {})


@monque.worker("followup")
async def followup(job: Job) -> None:
    return None


empty = Monque(os.environ["TEST_APP_URL"])

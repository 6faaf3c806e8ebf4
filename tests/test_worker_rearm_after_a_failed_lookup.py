"""A failed due-time look-up is tried again, not left to the safety poll (issue 34, part 5).

After each claim a worker reads when its next job falls due (``next_due_ms``) and arms a
timer for it. When that read failed, no timer was armed: jobs falling due later waited for
the safety poll (30 s by default). It is now looked up again after ``poll_interval``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from monque_engine import ConnectionError, Job, Monque


async def test_jobs_due_later_are_claimed_after_the_look_up_that_arms_their_timer_failed(
    tmp_path, wait_until: Callable[..., Awaitable[Any]]
) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", safety_poll_interval=300, poll_interval=0.2)
    await m.initialize()
    done: list[str] = []
    errors: list[Any] = []
    m.on("job:error", errors.append)

    async def handler(job: Job) -> None:
        done.append(job.id)

    store: Any = m.store
    real_claim, real_next_due = store.claim, store.next_due_ms
    failing = [False]

    async def claim(*args: Any, **kwargs: Any) -> list[Job]:
        jobs = await real_claim(*args, **kwargs)
        if jobs and not done:
            failing[0] = True  # the look-up that follows the first claim fails
        return jobs

    async def next_due_ms(names: Any) -> int | None:
        if failing[0]:
            failing[0] = False
            raise ConnectionError("SQLite database jobs.db: disk I/O error (a test's)")
        return await real_next_due(names)

    store.claim, store.next_due_ms = claim, next_due_ms
    m.register("timed", handler)
    await m.start()
    try:
        start = datetime.now(UTC)
        jobs = await m.enqueue_many(
            [{"name": "timed", "data": i, "run_at": start + timedelta(seconds=0.3 * (i + 1))} for i in range(3)]
        )
        await wait_until(lambda: len(done) == 3, 30, "every scheduled job claimed and run")
        assert sorted(done) == sorted(job.id for job in jobs)
        assert any("a test's" in str(getattr(e, "error", e)) for e in errors)
    finally:
        await m.stop()
        await m.close()

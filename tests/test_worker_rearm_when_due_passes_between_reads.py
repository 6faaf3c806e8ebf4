"""A due time that passes between two clock readings still arms the next look-up (issue 34, part 5).

After each claim a worker reads when its next job falls due (``next_due_ms``): due already,
it claims at once and looks again after that claim; due later, it arms a timer. The two
branches read the clock twice (``_rearm`` then ``wake_at``). On a busy machine the due time
passed between the readings: ``wake_at`` then claimed at once but did not ask for the next
look-up, so no timer was armed for the jobs after it. The worker waited for the next
feed wake-up or the safety poll: the purge benchmark's worker completed nothing for 8-24 s
(traced: a claim at −0.25 s, then only the producer's timer for jobs 19 s ahead).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import monque_engine.scheduler.processor as processor_module
from monque_engine import Job, Monque


async def test_jobs_due_later_are_claimed_when_the_looked_up_due_time_passes_before_the_timer_is_armed(
    tmp_path, monkeypatch: pytest.MonkeyPatch, wait_until: Callable[..., Awaitable[Any]]
) -> None:
    # The safety poll never comes within the test: only the worker's own timers claim.
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", safety_poll_interval=300, poll_interval=0.2)
    await m.initialize()
    done: list[str] = []

    async def handler(job: Job) -> None:
        done.append(job.id)

    real_now = processor_module.now_ms
    earlier_readings: list[int] = []

    def now_ms() -> int:
        """The processor's clock; one reading can be made to come from just before a due time."""
        return earlier_readings.pop() if earlier_readings else real_now()

    monkeypatch.setattr(processor_module, "now_ms", now_ms)
    store: Any = m.store
    real_claim, real_next_due = store.claim, store.next_due_ms
    after_first_claim = [False]
    tricked = [False]

    async def claim(*args: Any, **kwargs: Any) -> list[Job]:
        jobs = await real_claim(*args, **kwargs)
        if jobs:
            after_first_claim[0] = True
        return jobs

    async def next_due_ms(names: Any) -> int | None:
        due = await real_next_due(names)
        if after_first_claim[0] and not tricked[0]:
            tricked[0] = True
            # The look-up after the first claim answers "due now"; the reading that decides
            # "due already, or a timer?" is 1 ms older (the CPU went elsewhere between them).
            answer = real_now()
            earlier_readings.append(answer - 1)
            return answer
        return due

    store.claim, store.next_due_ms = claim, next_due_ms
    m.register("timed", handler)
    await m.start()
    try:
        start = datetime.now(UTC)
        jobs = await m.enqueue_many(
            [{"name": "timed", "data": i, "run_at": start + timedelta(seconds=0.3 * (i + 1))} for i in range(3)]
        )
        await wait_until(lambda: len(done) == 3, 30, "every scheduled job claimed by the worker's own timers")
        assert tricked[0], "the look-up after the first claim was not reached"
        assert sorted(done) == sorted(job.id for job in jobs)
    finally:
        await m.stop()
        await m.close()

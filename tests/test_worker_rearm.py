"""A worker of scheduled work keeps its due-time timers armed (issue 34, part 5).

After each claim a worker reads when its next job falls due (``next_due_ms``) and either
claims at once (due already) or arms a timer. Each test breaks that chain in one way a real
machine does and checks that three jobs due 0.3 s apart are still claimed by the worker's own
timers: the safety poll (300 s here) never comes within the test.

* The look-up fails: no timer was armed and the jobs due later waited for the safety poll.
  It is now looked up again after ``poll_interval``.
* The looked-up due time passes between two clock readings (``_rearm``, then ``wake_at``),
  as on a busy CPU: ``wake_at`` claimed at once but did not ask for the next look-up, so no
  timer was armed for the jobs after it. The purge benchmark's worker completed nothing for
  8-24 s (traced: a claim 0.25 s before the purge, then only the producer's timer for jobs
  19 s ahead).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import monque_engine.scheduler.processor as processor_module
from monque_engine import ConnectionError, Job, Monque

WaitUntil = Callable[..., Awaitable[Any]]


def _timed_worker(tmp_path: Path) -> tuple[Monque, list[str], list[bool]]:
    """A Monque whose only wake-ups are its own timers and the feed; ``done`` lists the jobs
    its handler ran; the flag turns True once a claim has returned a job."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", safety_poll_interval=300, poll_interval=0.2)
    done: list[str] = []

    async def handler(job: Job) -> None:
        done.append(job.id)

    m.register("timed", handler)
    return m, done, [False]


def _watch_claims(store: Any, claimed: list[bool]) -> None:
    real_claim = store.claim

    async def claim(*args: Any, **kwargs: Any) -> list[Job]:
        jobs = await real_claim(*args, **kwargs)
        if jobs:
            claimed[0] = True
        return jobs

    store.claim = claim


async def _three_timed_jobs_run(m: Monque, done: list[str], wait_until: WaitUntil) -> None:
    await m.start()
    try:
        start = datetime.now(UTC)
        jobs = await m.enqueue_many(
            [{"name": "timed", "data": i, "run_at": start + timedelta(seconds=0.3 * (i + 1))} for i in range(3)]
        )
        await wait_until(lambda: len(done) == 3, 30, "every scheduled job claimed by the worker's own timers")
        assert sorted(done) == sorted(job.id for job in jobs)
    finally:
        await m.stop()
        await m.close()


async def test_jobs_due_later_are_claimed_after_the_look_up_that_arms_their_timer_failed(
    tmp_path: Path, wait_until: WaitUntil
) -> None:
    m, done, claimed = _timed_worker(tmp_path)
    await m.initialize()
    errors: list[Any] = []
    m.on("job:error", errors.append)
    store: Any = m.store
    _watch_claims(store, claimed)
    real_next_due = store.next_due_ms
    failed = [False]

    async def next_due_ms(names: Any) -> int | None:
        if claimed[0] and not failed[0]:
            failed[0] = True  # the look-up that follows the first claim fails
            raise ConnectionError("SQLite database jobs.db: disk I/O error (a test's)")
        return await real_next_due(names)

    store.next_due_ms = next_due_ms
    await _three_timed_jobs_run(m, done, wait_until)
    assert any("a test's" in str(getattr(e, "error", e)) for e in errors)


async def test_jobs_due_later_are_claimed_when_the_looked_up_due_time_passes_before_the_timer_is_armed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wait_until: WaitUntil
) -> None:
    m, done, claimed = _timed_worker(tmp_path)
    await m.initialize()
    real_now = processor_module.now_ms
    earlier_readings: list[int] = []

    def now_ms() -> int:
        """The processor's clock; one reading can be made to come from just before a due time."""
        return earlier_readings.pop() if earlier_readings else real_now()

    monkeypatch.setattr(processor_module, "now_ms", now_ms)
    store: Any = m.store
    _watch_claims(store, claimed)
    real_next_due = store.next_due_ms
    tricked = [False]

    async def next_due_ms(names: Any) -> int | None:
        due = await real_next_due(names)
        if claimed[0] and not tricked[0]:
            tricked[0] = True
            # The look-up after the first claim answers "due now"; the reading that decides
            # "due already, or a timer?" is 1 ms older (the CPU went elsewhere between them).
            answer = real_now()
            earlier_readings.append(answer - 1)
            return answer
        return due

    store.next_due_ms = next_due_ms
    await _three_timed_jobs_run(m, done, wait_until)
    assert tricked[0], "the look-up after the first claim was not reached"

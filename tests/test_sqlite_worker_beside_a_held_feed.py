"""A worker's timers and claims do not wait for its feed to catch up on a purge (issue 34, part 5).

A retention purge of 683k jobs on a 1M-job SQLite store, on a busy machine: a worker of
scheduled work (jobs falling due one by one) completed nothing for 24 s. Two ways its claims
depended on its change feed's catch-up on the purge's delete rows:

* its stream (filtered to ``pending``) read every delete row, so an insert by another
  process waited behind them;
* the streams' pulls ran on the store's readers, the ones that read the next due time after
  each claim (``next_due_ms``, which arms the next timer): with every reader busy pulling,
  no timer was armed until the safety poll.

Here the catch-up is held: any pull that returns a delete row waits until the test ends (a
slow catch-up made endless, so nothing is timed). The safety poll is five minutes away, so
only the mechanisms under test can claim the jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from monque_engine import ChangeEvent, Job, JobRetention, Monque

PURGED = 200
WAIT = 30.0  # seconds: a bound for a broken build, far below the safety poll


def hold_deletes(m: Monque, release: threading.Event) -> list[int]:
    """Make every pull of ``m``'s feed that returns a delete row wait for ``release``; the
    list counts the pulls held."""
    feed: Any = m.store._feed  # type: ignore[attr-defined]
    real_pull = feed._pull
    held: list[int] = []

    def pull(conn: Any, sql: Any, after: int) -> tuple[list[tuple[Any, ...]], int]:
        rows, high = real_pull(conn, sql, after)
        if any(row[3] == "delete" for row in rows):  # (head, pruned mark, seq, op, ...)
            held.append(after)
            release.wait()
        return rows, high

    feed._pull = pull
    return held


async def completed_long_ago(url: str, count: int) -> Monque:
    """A purger on the same file (another process, as far as the feed can tell) whose
    ``purge_expired_jobs`` deletes ``count`` jobs completed in 1970."""
    purger = Monque(url, job_retention=JobRetention(completed=60.0, interval=3600))
    await purger.initialize()
    jobs = await purger.enqueue_many([{"name": "old", "data": i} for i in range(count)])
    assert len(await purger.store.claim("old", "gone", jobs[-1].next_run_at_ms, count, 30_000)) == count
    for job in jobs:
        assert await purger.store.complete(job.id, "gone", 1, None) is not None
    return purger


async def _consume(stream: AsyncIterator[ChangeEvent]) -> None:
    async for _ in stream:
        pass


async def _worker(url: str, done: list[str]) -> Monque:
    m = Monque(url, safety_poll_interval=300, poll_interval=300, worker_concurrency=4)
    await m.initialize()

    async def handler(job: Job) -> None:
        done.append(job.id)

    m.register("timed", handler)
    await m.start()
    return m


async def test_a_workers_timers_are_armed_while_every_stream_is_held_on_purge_deletes(
    tmp_path, wait_until: Callable[..., Awaitable[Any]]
) -> None:
    """A process with a worker and a console-like watcher (every change): both streams' pulls
    are held on the purge's deletes, yet each scheduled job falling due is claimed, since
    the next due time is read on the store's own readers."""
    url = f"sqlite:///{tmp_path}/jobs.db"
    purger = await completed_long_ago(url, PURGED)
    done: list[str] = []
    m = await _worker(url, done)
    release = threading.Event()
    held = hold_deletes(m, release)
    console = asyncio.create_task(_consume(await m.store.open_watch(full_document=False)))
    try:
        assert await purger.purge_expired_jobs() == PURGED
        await wait_until(lambda: held, WAIT, "a pull met the purge's deletes")
        start = datetime.now(UTC)
        # One enqueue: the worker is told of the earliest only; each later one is found by
        # the look-up that follows a claim.
        jobs = await m.enqueue_many(
            [{"name": "timed", "data": i, "run_at": start + timedelta(seconds=0.2 * (i + 1))} for i in range(3)]
        )
        await wait_until(lambda: len(done) == 3, WAIT, "every scheduled job claimed and run")
        assert sorted(done) == sorted(job.id for job in jobs)
    finally:
        release.set()
        console.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await console
        await m.stop()
        await m.close()
        await purger.close()


async def test_another_processs_job_is_claimed_while_the_purge_deletes_are_held(
    tmp_path, wait_until: Callable[..., Awaitable[Any]]
) -> None:
    """The worker's stream carries no deletes, so a job enqueued elsewhere after a purge
    reaches it at once, however long reading the purge's delete rows would take."""
    url = f"sqlite:///{tmp_path}/jobs.db"
    purger = await completed_long_ago(url, PURGED)
    done: list[str] = []
    m = await _worker(url, done)
    release = threading.Event()
    hold_deletes(m, release)
    try:
        assert await purger.purge_expired_jobs() == PURGED
        job = await purger.enqueue("timed", {"from": "elsewhere"})
        await wait_until(lambda: done == [job.id], WAIT, "the other process's job claimed and run")
    finally:
        release.set()
        await m.stop()
        await m.close()
        await purger.close()

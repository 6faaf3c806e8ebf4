"""Failing tests for engine bugs found in review (SQLite store, real files).

Each test states what should hold; it fails on the current engine for the reason named in
its docstring. Synchronisation is by polled conditions with timeouts, never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from monque_engine import ChangeFeedHistoryLostError, Monque
from monque_engine.cron import next_run_ms
from monque_engine.errors import ConnectionError
from monque_engine.timeutil import now_ms
from tests.conftest import SHORT_INTERVALS, poll_until


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


async def _make(url: str, **options: Any) -> Monque:
    m = Monque(url, **{**SHORT_INTERVALS, **options})
    await m.initialize()
    return m


def _live_tasks(prefix: str) -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith(prefix) and not t.done()]


# -- processor: same-instance re-claim after stale recovery --------------------------------------


async def test_a_job_reclaimed_by_the_same_instance_is_not_run_twice_at_once(tmp_path: Any) -> None:
    """Stale recovery can hand a job back to the very instance whose handler still runs it
    (the handler outlived lock_timeout). The process must not start a second copy beside the
    first (slots and shutdown track one handler per job id, and the first copy's completion
    would settle the second claim under it): the running copy settles the fresh claim."""
    m = await _make(f"sqlite:///{tmp_path}/jobs.db", lock_timeout=60, heartbeat_interval=30)
    try:
        starts: list[str] = []
        gate = asyncio.Event()

        async def handler(job: Any) -> None:
            starts.append(job.id)
            await gate.wait()

        m.register("w", handler, concurrency=2)
        job = await m.enqueue("w", 1)
        await m.start()
        await poll_until(lambda: len(starts) == 1, message="first run started")
        table = m.options.collection_name
        await m.store.execute_write(  # type: ignore[attr-defined]
            lambda c: c.execute(
                f"UPDATE {table} SET locked_at = locked_at - 120000, last_heartbeat = last_heartbeat - 120000 WHERE id = ?",
                (job.id,),
            )
        )
        assert await m.recover_stale_jobs() == 1
        # The re-claim comes first (earliest nextRunAt); a second job then takes the other slot.
        second = await m.enqueue("w", 2)
        await poll_until(lambda: len(starts) == 2, message="the second job started")
        assert starts == [job.id, second.id], "the re-claimed job was started a second time"
        reclaimed = await m.get_job(job.id)
        assert reclaimed is not None and reclaimed.status.value == "processing"
        assert reclaimed.claimed_by == m.instance_id
        summary = next(s for s in await m.get_queue_view_summaries() if s.name == "w")
        assert summary.worker is not None and summary.worker.active_count == 2
        assert len(m._processor.running_jobs()) == 2
        done: list[str] = []
        m.on("job:complete", lambda event: done.append(event.job.id))
        gate.set()
        await poll_until(lambda: len(done) == 2, message="both jobs completed")
        assert sorted(done) == sorted([job.id, second.id])
        final = await m.get_job(job.id)
        assert final is not None and final.status.value == "completed"
    finally:
        await m.close()


# -- processor: replacing a handler while running -------------------------------------------------


async def test_replaced_worker_filler_exits(tmp_path: Any) -> None:
    """register(replace=True) while running: the comment says the old filler 'sees it was
    replaced and exits', but it loops back to `await worker.wake.wait()` on the old Worker,
    which nothing ever sets again (stop_claiming only wakes current workers, join_fillers only
    joins current fillers). The task leaks past close()."""
    m = await _make(f"sqlite:///{tmp_path}/jobs.db")
    try:

        async def handler(job: Any) -> None:
            return None

        m.register("w", handler)
        await m.start()
        old = m._processor.workers["w"].filler
        assert old is not None
        m.register("w", handler, replace=True)
        try:
            await poll_until(lambda: old.done(), timeout=2.0, message="old filler exits after replacement")
        except AssertionError:
            pass
    finally:
        await m.close()
    assert old.done(), "old filler task still pending after close()"
    old.cancel()


# -- life cycle: concurrent start() ---------------------------------------------------------------


async def test_concurrent_start_does_not_leak_background_tasks(tmp_path: Any) -> None:
    """start() checks `processor.running` and then awaits lifecycle.start() (opening the feed)
    before setting it, so two concurrent start() calls both pass the check. The second
    overwrites Lifecycle._tasks / _heartbeat_task and Worker.filler: the first set of poll,
    feed, stale, heartbeat and filler tasks is never cancelled, and keeps running after close()."""
    m = await _make(f"sqlite:///{tmp_path}/jobs.db")

    async def handler(job: Any) -> None:
        return None

    m.register("w", handler)
    await asyncio.gather(m.start(), m.start())
    await m.close()
    leaked = _live_tasks("monque-")
    for task in leaked:
        task.cancel()
    await asyncio.gather(*leaked, return_exceptions=True)
    assert not leaked, f"tasks still running after close(): {sorted(t.get_name() for t in leaked)}"


# -- write runner: batch isolation after BEGIN IMMEDIATE timed out --------------------------------


async def test_locked_file_fails_a_batch_once_not_once_per_op(tmp_path: Any) -> None:
    """When another connection holds the write lock past busy_timeout, the batch's BEGIN
    IMMEDIATE fails; _run_batch then 'isolates' by re-running every op alone, each waiting
    busy_timeout again. A batch of N ops takes (N+1) x busy_timeout (up to 512 x 10 s) while
    every other write of the process (heartbeats, completions) queues behind it."""
    path = tmp_path / "jobs.db"
    timeout = 0.3
    m = await _make(f"sqlite:///{path}?busy_timeout={timeout}&inline_writes=0")
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        results = await asyncio.gather(*(m.enqueue("w", i) for i in range(10)), return_exceptions=True)
        elapsed = time.monotonic() - started
        blocker.execute("ROLLBACK")
        assert all(isinstance(r, ConnectionError) for r in results), results
        assert elapsed < 4 * timeout, f"10 writes against a locked file took {elapsed:.2f} s (busy_timeout {timeout} s)"
    finally:
        blocker.close()
        await m.close()


# -- change feed: a slow reader and pruning -------------------------------------------------------


async def test_open_stream_overtaken_by_pruning_does_not_skip_silently(tmp_path: Any) -> None:
    """ADR 0002: a token older than the window raises ChangeFeedHistoryLostError 'rather than
    silently skipping'. That check is only made in open(); an already-open stream whose
    position falls behind the pruned window keeps reading `seq > last` and silently jumps
    over the pruned changes."""
    m = await _make(f"sqlite:///{tmp_path}/jobs.db?feed_retention=1000")
    stream = await m.open_watch()
    try:
        await m.enqueue("w", 0)
        first = await asyncio.wait_for(anext(stream), 5)
        await m.enqueue_many([{"name": "w", "data": i} for i in range(2500)])
        assert await m.store.prune_feed() > 0  # type: ignore[attr-defined]
        try:
            second = await asyncio.wait_for(anext(stream), 5)
        except ChangeFeedHistoryLostError:
            return
        assert second.token == first.token + 1, (
            f"stream jumped from token {first.token} to {second.token}: "
            f"{second.token - first.token - 1} changes silently lost"
        )
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
        await m.close()


# -- store: batched completion flag after a failed submit -----------------------------------------


async def test_completion_on_closed_store_does_not_wedge_later_completions(tmp_path: Any) -> None:
    """_complete_batched sets _completion_flush_queued = True and appends to _completions
    before submit(); if submit raises (store closed), the flag stays True and the item stays
    queued. After the store is reopened (Monque.close() then initialize()), every batched
    completion appends and waits for a flush that is never queued: handlers hang forever."""
    m = await _make(f"sqlite:///{tmp_path}/jobs.db")
    try:
        job = await m.enqueue("w", 1, run_at=timedelta(minutes=-1))
        # Claimed half a minute ago, so re-initialising does not see a live claim of ours.
        claimed = await m.store.claim("w", m.instance_id, now_ms() - 30_000, 1, 1000)
        assert [j.id for j in claimed] == [job.id]
        await m.close()
        with pytest.raises(ConnectionError):
            await m.store.complete(job.id, m.instance_id, now_ms(), None)

        await m.initialize()
        done = asyncio.Event()
        m.on("job:complete", lambda event: done.set())

        async def handler(job: Any) -> None:
            return None

        m.register("w", handler)
        await m.enqueue("w", 2)
        await m.start()
        try:
            await asyncio.wait_for(done.wait(), 3)
        except TimeoutError:
            # The handler returned and its completion waits for a flush that never comes;
            # stop() would wait for it forever (it is 'finishing'), so cancel it here.
            for task in m._processor.running_tasks():
                task.cancel()
            pytest.fail("a completion after reopening the store never finished")
    finally:
        await asyncio.wait_for(m.close(), 10)


# -- cron across a DST fall-back --------------------------------------------------------------------


def test_daily_cron_runs_once_on_fall_back_day() -> None:
    """'30 2 * * *' in Europe/Paris: on 2024-10-27 local 02:30 happens twice (CEST, then CET).
    next_run_ms from the first run (00:30 UTC) returns the repeated 02:30 (01:30 UTC), so a
    daily job runs twice that day. Cron (Vixie, cronie) runs such a job once."""
    expr = "CRON_TZ=Europe/Paris 30 2 * * *"
    first = next_run_ms(expr, _ms(datetime(2024, 10, 26, 12, 0, tzinfo=UTC)))
    assert first == _ms(datetime(2024, 10, 27, 0, 30, tzinfo=UTC))
    second = next_run_ms(expr, first + 5_000)  # computed from completion time
    assert second == _ms(datetime(2024, 10, 28, 1, 30, tzinfo=UTC)), (
        f"daily job runs again at {datetime.fromtimestamp(second / 1000, UTC)}"
    )

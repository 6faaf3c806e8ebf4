"""Queue statistics and per-name queue view summaries."""

from __future__ import annotations

import asyncio

import pytest

from monque_engine import InvalidJobQueryError, QueueStats, WorkerSummary
from monque_engine.timeutil import now_ms


async def _seed(m, raw):
    base = now_ms() - 100_000
    layout = {
        "a": {"pending": 3, "processing": 1, "completed": 2, "failed": 1, "cancelled": 0},
        "b": {"pending": 0, "processing": 0, "completed": 1, "failed": 0, "cancelled": 2},
    }
    durations = []
    for name, counts in layout.items():
        for status, count in counts.items():
            for i in range(count):
                job = await m.enqueue(name, i)
                fields = {"createdAt": base}
                if status != "pending":
                    fields["status"] = status
                if status == "completed":
                    duration = 1000 * (len(durations) + 1)
                    durations.append((name, duration))
                    fields["updatedAt"] = base + duration
                await raw(m).set(job.id, **fields)
    return layout, durations


async def test_queue_stats_counts_and_average(monque, raw):
    m = await monque()
    _layout, durations = await _seed(m, raw)
    stats = await m.get_queue_stats()
    assert isinstance(stats, QueueStats)
    assert (stats.pending, stats.processing, stats.completed, stats.failed, stats.cancelled) == (3, 1, 3, 1, 2)
    assert stats.total == 10
    assert stats.avg_processing_duration_ms == pytest.approx(sum(d for _, d in durations) / 3)
    assert stats.count("pending") == 3

    a = await m.get_queue_stats("a")
    assert (a.pending, a.processing, a.completed, a.failed, a.cancelled, a.total) == (3, 1, 2, 1, 0, 7)
    assert a.avg_processing_duration_ms == pytest.approx(sum(d for n, d in durations if n == "a") / 2)
    b = await m.get_queue_stats("b")
    assert (b.completed, b.cancelled, b.total) == (1, 2, 3)
    none = await m.get_queue_stats("nobody")
    assert none == QueueStats()
    assert none.avg_processing_duration_ms is None


async def test_queue_stats_without_completed_jobs_has_no_average(monque):
    m = await monque()
    await m.enqueue("x")
    stats = await m.get_queue_stats()
    assert stats.pending == 1 and stats.avg_processing_duration_ms is None


async def test_queue_stats_name_validation(monque):
    m = await monque()
    with pytest.raises(InvalidJobQueryError):
        await m.get_queue_stats(123)  # type: ignore[arg-type]


async def test_stats_cache_ttl_is_honoured(monque, wait_until):
    m = await monque(stats_cache_ttl=0.3)
    await m.enqueue("x")
    first = await m.get_queue_stats()
    assert first.pending == 1
    await m.enqueue("x")
    cached = await m.get_queue_stats()
    assert cached.pending == 1  # served from the cache
    assert (await m.get_queue_stats("x")).pending == 2  # a different key is loaded fresh
    start = asyncio.get_running_loop().time()
    await wait_until(lambda: _pending(m, 2), timeout=3)
    assert asyncio.get_running_loop().time() - start >= 0.1  # not refreshed before the TTL


async def _pending(m, count):
    return (await m.get_queue_stats()).pending == count


async def test_stats_cache_ttl_zero_disables_caching(monque):
    m = await monque(stats_cache_ttl=0)
    for expected in range(1, 5):
        await m.enqueue("x")
        assert (await m.get_queue_stats()).pending == expected
        assert (await m.get_queue_view_summaries())[0].stats.pending == expected


async def test_stats_cache_cleared_on_stop(monque):
    m = await monque(stats_cache_ttl=60)
    await m.start()
    await m.enqueue("never-run")
    assert (await m.get_queue_stats()).pending == 1
    await m.enqueue("never-run")
    assert (await m.get_queue_stats()).pending == 1
    await m.stop()
    assert (await m.get_queue_stats()).pending == 2


async def test_queue_view_summaries(monque, raw):
    m = await monque()
    await _seed(m, raw)
    release = asyncio.Event()
    entered = asyncio.Event()

    async def handler(job):
        entered.set()
        await release.wait()

    m.register("b", handler, concurrency=4)
    m.register("c-only-worker", handler, concurrency=2)
    await m.enqueue("b", "run-me")
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    summaries = await m.get_queue_view_summaries()
    assert [s.name for s in summaries] == ["a", "b", "c-only-worker"]
    a, b, c = summaries
    assert a.has_persisted_jobs and not a.has_registered_worker and a.worker is None
    assert a.stats.total == 7 and a.stats.pending == 3
    assert b.has_persisted_jobs and b.has_registered_worker
    assert b.worker == WorkerSummary(concurrency=4, active_count=1)
    assert b.stats.processing == 1 and b.stats.total == 4
    assert not c.has_persisted_jobs and c.has_registered_worker
    assert c.worker == WorkerSummary(concurrency=2, active_count=0)
    assert c.stats == QueueStats()
    release.set()

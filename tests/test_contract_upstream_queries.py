"""Upstream parity: queries and statistics.

Cases translated from upstream Monque's ``tests/integration/statistics.test.ts``,
``queue-view.test.ts`` and ``query-validation.test.ts`` (and the ``job-query`` /
``helpers`` behaviour they pin) that the other contract files did not cover.
"""

from __future__ import annotations

import pytest

from monque_engine import InvalidJobQueryError, JobListFilter, JobSelector, QueueStats, WorkerSummary
from monque_engine.timeutil import now_ms


async def _completed(m, raw, name: str, durations_ms: list[int]) -> None:
    """Completed jobs whose lifetime (updatedAt - createdAt, upstream's measure) is given."""
    base = now_ms() - 100_000
    for duration in durations_ms:
        job = await m.enqueue(name, duration)
        await raw(m).set(job.id, status="completed", createdAt=base, updatedAt=base + duration)


async def test_average_duration_is_rounded_to_whole_ms_half_up(monque, raw):
    """Upstream: ``avgProcessingDurationMs = Math.round(avgMs)``, so the average is a whole
    number of ms, rounded half up, on every store (the MongoDB store already did this)."""
    m = await monque()
    await _completed(m, raw, "thirds", [1000, 1000, 1001])  # 1000.33 -> 1000
    await _completed(m, raw, "half", [1, 2])  # 1.5 -> 2
    await _completed(m, raw, "twothirds", [1000, 1001, 1001])  # 1000.67 -> 1001
    assert (await m.get_queue_stats("thirds")).avg_processing_duration_ms == 1000
    assert (await m.get_queue_stats("half")).avg_processing_duration_ms == 2
    assert (await m.get_queue_stats("twothirds")).avg_processing_duration_ms == 1001
    overall = await m.get_queue_stats()
    assert overall.avg_processing_duration_ms == round((3001 + 3 + 3002) / 8)  # 750.75 -> 751
    views = {v.name: v.stats.avg_processing_duration_ms for v in await m.get_queue_view_summaries()}
    assert views == {"half": 2, "thirds": 1000, "twothirds": 1001}


async def test_average_duration_of_one_to_three_seconds_is_two_seconds(monque, raw):
    """statistics.test.ts 'calculates average processing duration correctly'."""
    m = await monque()
    await _completed(m, raw, "q", [1000, 2000, 3000])
    stats = await m.get_queue_stats()
    assert stats.completed == 3
    assert stats.avg_processing_duration_ms == 2000


async def test_empty_queue_has_zero_counts_and_no_average(monque):
    """statistics.test.ts 'returns zero counts for empty queue'."""
    m = await monque()
    assert await m.get_queue_stats() == QueueStats()
    assert (await m.get_queue_stats()).avg_processing_duration_ms is None
    assert await m.get_queue_view_summaries() == []


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.get_jobs(name=""),
        lambda m: m.get_queue_stats(""),
        lambda m: m.get_queue_view_summaries(""),
        lambda m: m.get_jobs_with_cursor(filter=JobListFilter(name="")),
        lambda m: m.count_jobs(JobListFilter(name="")),
        lambda m: m.error_groups(name=""),
        lambda m: m.cancel_jobs(JobSelector(name="")),
        lambda m: m.retry_jobs(JobSelector(name="")),
        lambda m: m.delete_jobs(JobSelector(name="")),
    ],
    ids=[
        "get_jobs",
        "get_queue_stats",
        "get_queue_view_summaries",
        "get_jobs_with_cursor",
        "count_jobs",
        "error_groups",
        "cancel_jobs",
        "retry_jobs",
        "delete_jobs",
    ],
)
async def test_an_empty_name_filter_is_a_query_error(monque, call):
    """Upstream's ``parseJobNameFilter``: 'Job name filter must be a non-empty string'. An empty
    name can match no job, so it is a caller's mistake (an unset form field); silently
    answering "nothing" would hide it, and on a bulk call would report success."""
    m = await monque()
    job = await m.enqueue("kept", 1)
    with pytest.raises(InvalidJobQueryError) as info:
        await call(m)
    message = str(info.value)
    assert "non-empty" in message and "\n" not in message
    assert await m.get_job(job.id) == job  # stored jobs untouched


async def test_queue_view_summaries_filter_by_name(monque):
    """queue-view.test.ts 'filters persisted and worker-only names'."""
    m = await monque()
    job = await m.enqueue("alpha", {})
    await m.enqueue("beta", {})
    m.register("worker-only", lambda job: None, concurrency=3)
    assert [v.name for v in await m.get_queue_view_summaries()] == ["alpha", "beta", "worker-only"]
    (alpha,) = await m.get_queue_view_summaries("alpha")
    assert alpha.name == "alpha" and alpha.has_persisted_jobs and not alpha.has_registered_worker
    assert alpha.stats.pending == 1 and alpha.worker is None
    (only,) = await m.get_queue_view_summaries(name="worker-only")
    assert not only.has_persisted_jobs and only.has_registered_worker
    assert only.stats == QueueStats() and only.worker == WorkerSummary(concurrency=3, active_count=0)
    assert await m.get_queue_view_summaries("missing") == []
    await m.cancel_job(job.id)
    (alpha,) = await m.get_queue_view_summaries("alpha")
    assert (alpha.stats.pending, alpha.stats.cancelled) == (0, 1)

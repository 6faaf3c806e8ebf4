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


# -- query-validation.test.ts ------------------------------------------------------------------


async def _two_jobs(m):
    await m.enqueue("alpha", {})
    await m.enqueue("beta", {})


async def _names(m):
    return sorted(job.name for job in await m.get_jobs())


async def test_an_empty_name_does_not_broaden_a_delete(monque):
    """'rejects an empty name without broadening deletion to other Job Names'."""
    m = await monque()
    await _two_jobs(m)
    with pytest.raises(InvalidJobQueryError):
        await m.delete_jobs(JobSelector(name=""))
    assert await _names(m) == ["alpha", "beta"]
    result = await m.delete_jobs(JobSelector(name="alpha"))
    assert (result.count, result.errors) == (1, [])
    assert await _names(m) == ["beta"]


@pytest.mark.parametrize("bad", [False, 0, "", []], ids=["False", "0", "empty-str", "empty-list"])
@pytest.mark.parametrize(
    "call",
    [
        lambda m, f: m.get_jobs_with_cursor(filter=f),
        lambda m, f: m.count_jobs(f),
        lambda m, f: m.delete_jobs(f),
        lambda m, f: m.cancel_jobs(f),
        lambda m, f: m.retry_jobs(f),
    ],
    ids=["get_jobs_with_cursor", "count_jobs", "delete_jobs", "cancel_jobs", "retry_jobs"],
)
async def test_a_malformed_filter_is_refused_instead_of_reading_or_changing_every_job(monque, call, bad):
    """'malformed filter … rejects instead of reading or changing all jobs'. Only ``None``
    (Python's "not given", upstream's ``undefined``) means "every job"; another falsy value
    used to be read as "no filter" by listings and counts."""
    m = await monque()
    await _two_jobs(m)
    with pytest.raises(InvalidJobQueryError) as info:
        await call(m, bad)
    assert type(bad).__name__ in str(info.value)
    assert len(await m.get_jobs()) == 2


OPERATOR_NAMES = [{"$ne": None}, 0, [], __import__("re").compile("alpha")]


@pytest.mark.parametrize("bad", OPERATOR_NAMES, ids=["operator", "zero", "list", "regex"])
@pytest.mark.parametrize(
    "call",
    [
        lambda m, n: m.get_jobs(name=n),
        lambda m, n: m.get_jobs_with_cursor(filter=JobListFilter(name=n)),
        lambda m, n: m.get_queue_stats(n),
        lambda m, n: m.get_queue_view_summaries(n),
        lambda m, n: m.cancel_jobs(JobSelector(name=n)),
        lambda m, n: m.retry_jobs(JobSelector(name=n)),
        lambda m, n: m.delete_jobs(JobSelector(name=n)),
    ],
    ids=["get_jobs", "cursor", "stats", "views", "cancel_jobs", "retry_jobs", "delete_jobs"],
)
async def test_a_name_that_is_not_a_string_is_refused_without_changing_jobs(monque, call, bad):
    """'rejects operator-valued selectors' and 'invalid cached-statistics name', also after
    the statistics caches were filled."""
    m = await monque(stats_cache_ttl=60)
    await _two_jobs(m)
    await m.get_queue_stats()
    await m.get_queue_view_summaries()
    with pytest.raises(InvalidJobQueryError):
        await call(m, bad)
    assert [j.status.value for j in await m.get_jobs()] == ["pending", "pending"]


@pytest.mark.parametrize(
    "selector",
    [
        {"status": {"$ne": "processing"}},
        {"status": [{"$regex": ".*"}]},
        {"status": ""},
        {"status": ["pending", None]},
        {"older_than": {"$gt": ""}},
        {"newer_than": "2026-01-01"},
    ],
    ids=["operator", "operator-in-list", "empty", "none-in-list", "older-operator", "newer-string"],
)
async def test_invalid_status_or_date_selectors_are_refused_by_every_call(monque, selector):
    """'rejects invalid status or date selectors'. (Upstream's ``status: null`` and
    ``olderThan: null`` cases have no Python counterpart: ``None`` is "not given".)"""
    m = await monque()
    await _two_jobs(m)
    status = selector.get("status")
    if "status" in selector:
        with pytest.raises(InvalidJobQueryError):
            await m.get_jobs(status=status)
    for call in (m.cancel_jobs, m.retry_jobs, m.delete_jobs):
        with pytest.raises(InvalidJobQueryError):
            await call(JobSelector(**selector))
    assert [j.status.value for j in await m.get_jobs()] == ["pending", "pending"]


async def test_exact_names_status_lists_and_date_bounds_are_kept(monque):
    """'preserves exact names, status arrays, and date bounds'."""
    from datetime import UTC, datetime, timedelta

    m = await monque()
    await _two_jobs(m)
    assert len(await m.get_jobs(name="alpha", status=["pending", "failed"])) == 1
    result = await m.cancel_jobs(JobSelector(name="alpha", older_than=datetime.now(UTC) + timedelta(seconds=1)))
    assert (result.count, result.errors) == (1, [])
    assert len(await m.get_jobs(name="beta", status="pending")) == 1


async def test_an_empty_status_list_selects_nothing_and_an_empty_selector_everything(monque):
    """'distinguishes an empty status selection from an intentional empty selector'."""
    m = await monque()
    await _two_jobs(m)
    assert await m.get_jobs(status=[]) == []
    assert await m.count_jobs(JobListFilter(status=[])) == 0
    assert (await m.get_jobs_with_cursor(filter=JobListFilter(status=[]))).jobs == []
    empty = await m.delete_jobs(JobSelector(status=[]))
    assert (empty.count, empty.errors) == (0, [])
    assert len(await m.get_jobs()) == 2
    everything = await m.delete_jobs(JobSelector())
    assert (everything.count, everything.errors) == (2, [])


@pytest.mark.parametrize("limit", [0, -1, 1.5, float("nan"), float("inf"), 1001, 2**53 - 1, "10", True], ids=repr)
async def test_unsafe_page_sizes_are_refused_by_every_listing(monque, limit):
    """'rejects unsafe page size'. (Upstream's ``null`` case: ``None`` means "not given"
    here, so ``limit=None`` is the default page size, as upstream's ``undefined``.)"""
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match="limit"):
        await m.get_jobs(limit=limit)
    with pytest.raises(InvalidJobQueryError, match="limit"):
        await m.get_jobs_with_cursor(limit=limit)


@pytest.mark.parametrize("skip", [-1, 0.5, float("nan"), float("inf")], ids=repr)
async def test_invalid_skip_is_refused(monque, skip):
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match="skip"):
        await m.get_jobs(skip=skip)


async def test_page_defaults_and_the_largest_page(monque):
    """'preserves pagination defaults and supports the maximum bounded page size'."""
    m = await monque()
    await _two_jobs(m)
    await m.enqueue_many([{"name": "alpha", "data": {}} for _ in range(103)])
    assert len(await m.get_jobs()) == 100
    assert len((await m.get_jobs_with_cursor()).jobs) == 50
    assert len(await m.get_jobs(limit=None)) == 100
    assert len(await m.get_jobs(limit=1000)) == 105
    assert len((await m.get_jobs_with_cursor(limit=1000)).jobs) == 105
    assert len((await m.get_jobs_with_cursor(limit=1000, include_data=False)).jobs) == 105
    assert len(await m.get_jobs(limit=1, skip=104)) == 1


async def test_an_operator_object_is_not_a_job_id(monque):
    """'does not interpret an operator object as a single-job ID'."""
    m = await monque()
    assert await m.get_job({"$ne": None}) is None  # type: ignore[arg-type]
    job = await m.enqueue("gamma", {})
    assert (await m.get_job(job.id)).id == job.id


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("created_at_to", "2026-01-01"),
        ("updated_at_from", {"$ne": None}),
        ("next_run_at_from", 0),
        ("next_run_at_to", []),
    ],
)
async def test_invalid_cursor_date_ranges_are_refused(monque, field, value):
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match=field):
        await m.get_jobs_with_cursor(filter=JobListFilter(**{field: value}))
    with pytest.raises(InvalidJobQueryError, match=field):
        await m.get_jobs_with_cursor(filter=JobListFilter(**{field: value}), include_data=False)

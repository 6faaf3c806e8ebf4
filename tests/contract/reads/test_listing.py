"""Listing: get_jobs, keyset pages in every sort and both directions, filters, cursors."""

from __future__ import annotations

import base64
import json

import pytest

from monque_engine import (
    InvalidCursorError,
    InvalidJobQueryError,
    JobListFilter,
    JobSort,
    JobStatus,
)
from monque_engine.timeutil import ms_to_datetime, now_ms

SORTS = [(by, direction) for by in ("id", "created_at", "updated_at", "next_run_at") for direction in ("asc", "desc")]
STATUSES = ["pending", "processing", "completed", "failed", "cancelled"]
N = 37


async def _seed(m, raw, n=N):
    """n jobs whose sort fields have many ties, so the id tie-break matters."""
    base = now_ms() - 1_000_000
    items = [
        {"name": "alpha" if i % 3 else "beta", "data": {"i": i}, "unique_key": f"Key-{i:03d}" if i % 4 == 0 else None}
        for i in range(n)
    ]
    jobs = await m.enqueue_many([{k: v for k, v in item.items() if v is not None} for item in items])
    for i, job in enumerate(jobs):
        fields = {
            "createdAt": base + (i // 4) * 1000,
            "updatedAt": base + ((i * 7) % 5) * 1000,
            "nextRunAt": base + ((i * 11) % 9) * 1000,
        }
        status = STATUSES[i % 5]
        if status != "pending":
            fields["status"] = status
        await raw(m).set(job.id, **fields)
    return [await m.get_job(job.id) for job in jobs]


def _expected(jobs, by, direction):
    key = (lambda j: j.id) if by == "id" else (lambda j: (getattr(j, f"{by}_ms"), j.id))
    return sorted(jobs, key=key, reverse=direction == "desc")


async def _walk_forward(m, sort, limit, filter=None):
    pages = []
    cursor = None
    while True:
        page = await m.get_jobs_with_cursor(cursor=cursor, limit=limit, direction="forward", sort=sort, filter=filter)
        pages.append(page)
        if not page.has_next_page:
            return pages
        assert page.cursor is not None
        cursor = page.cursor
        assert len(pages) < 100


async def _walk_backward(m, sort, limit, filter=None):
    pages = []
    cursor = None
    while True:
        page = await m.get_jobs_with_cursor(cursor=cursor, limit=limit, direction="backward", sort=sort, filter=filter)
        pages.append(page)
        if not page.has_previous_page:
            return pages
        assert page.cursor is not None
        cursor = page.cursor
        assert len(pages) < 100


@pytest.mark.parametrize("by,direction", SORTS)
async def test_cursor_walks_whole_collection_forward_and_backward(monque, raw, by, direction):
    m = await monque()
    jobs = await _seed(m, raw)
    expected = [j.id for j in _expected(jobs, by, direction)]
    sort = JobSort(by=by, direction=direction)

    forward = await _walk_forward(m, sort, 5)
    assert [j.id for p in forward for j in p.jobs] == expected
    assert [len(p.jobs) for p in forward] == [5] * 7 + [2]
    assert forward[0].has_previous_page is False
    assert all(p.has_previous_page for p in forward[1:])
    assert all(p.has_next_page for p in forward[:-1]) and forward[-1].has_next_page is False

    backward = await _walk_backward(m, sort, 5)
    collected = []
    for page in backward:
        # each page is shown in the sort's order, and pages come from the end towards the start
        assert [j.id for j in page.jobs] == [j for j in expected if j in {x.id for x in page.jobs}]
        collected = [j.id for j in page.jobs] + collected
    assert collected == expected
    assert [len(p.jobs) for p in backward] == [5] * 7 + [2]
    assert backward[0].has_next_page is False
    assert all(p.has_next_page for p in backward[1:])
    assert all(p.has_previous_page for p in backward[:-1]) and backward[-1].has_previous_page is False
    # the last backward page is the first forward page's head
    assert [j.id for j in backward[-1].jobs] == expected[:2]


@pytest.mark.parametrize("by,direction", SORTS)
async def test_cursor_walk_with_filter(monque, raw, by, direction):
    m = await monque()
    jobs = await _seed(m, raw)
    sort = JobSort(by=by, direction=direction)
    flt = JobListFilter(name="alpha", status=["pending", "failed", "completed"])
    wanted = [j for j in jobs if j.name == "alpha" and j.status.value in ("pending", "failed", "completed")]
    expected = [j.id for j in _expected(wanted, by, direction)]
    assert len(expected) > 8
    forward = await _walk_forward(m, sort, 4, flt)
    assert [j.id for p in forward for j in p.jobs] == expected
    backward = await _walk_backward(m, sort, 4, flt)
    assert [j.id for p in reversed(backward) for j in p.jobs] == expected
    assert await m.count_jobs(flt) == len(expected)


async def test_page_size_boundaries_and_exact_fit(monque, raw):
    m = await monque()
    jobs = await _seed(m, raw, n=10)
    page = await m.get_jobs_with_cursor(limit=10)
    assert len(page.jobs) == 10 and page.has_next_page is False and page.has_previous_page is False
    page = await m.get_jobs_with_cursor(limit=9)
    assert len(page.jobs) == 9 and page.has_next_page is True
    last = await m.get_jobs_with_cursor(cursor=page.cursor, limit=9)
    assert [j.id for j in last.jobs] == [sorted(j.id for j in jobs)[-1]]
    assert last.has_next_page is False and last.has_previous_page is True
    # past the end: an empty page with no cursor
    end = await m.get_jobs_with_cursor(cursor=last.cursor, limit=9)
    assert end.jobs == [] and end.cursor is None and end.has_next_page is False


async def test_cursor_survives_deletion_of_its_anchor(monque, raw):
    m = await monque()
    jobs = await _seed(m, raw, n=12)
    sort = JobSort(by="created_at", direction="desc")
    expected = [j.id for j in _expected(jobs, "created_at", "desc")]
    first = await m.get_jobs_with_cursor(limit=5, sort=sort)
    assert await m.delete_job(first.jobs[-1].id)
    second = await m.get_jobs_with_cursor(cursor=first.cursor, limit=5, sort=sort)
    assert [j.id for j in second.jobs] == expected[5:10]


async def test_empty_collection_page(monque):
    m = await monque()
    for direction in ("forward", "backward"):
        page = await m.get_jobs_with_cursor(direction=direction)
        assert page.jobs == [] and page.cursor is None
        assert page.has_next_page is False and page.has_previous_page is False


async def test_include_data_false_omits_payloads(monque, raw):
    m = await monque()
    await _seed(m, raw, n=3)
    page = await m.get_jobs_with_cursor(include_data=False)
    assert len(page.jobs) == 3 and all(j.data is None for j in page.jobs)
    page = await m.get_jobs_with_cursor()
    assert all(isinstance(j.data, dict) for j in page.jobs)


# -- filters --------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["created_at", "updated_at", "next_run_at"])
async def test_date_range_filters_are_inclusive(monque, raw, field):
    m = await monque()
    jobs = await _seed(m, raw)
    values = sorted({getattr(j, f"{field}_ms") for j in jobs})
    low, high = values[1], values[-2]
    flt = JobListFilter(**{f"{field}_from": ms_to_datetime(low), f"{field}_to": ms_to_datetime(high)})
    page = await m.get_jobs_with_cursor(filter=flt, limit=1000)
    expected = {j.id for j in jobs if low <= getattr(j, f"{field}_ms") <= high}
    assert {j.id for j in page.jobs} == expected
    assert 0 < len(expected) < len(jobs)
    assert await m.count_jobs(flt) == len(expected)
    only_from = JobListFilter(**{f"{field}_from": ms_to_datetime(values[-1])})
    assert {j.id for j in (await m.get_jobs_with_cursor(filter=only_from, limit=1000)).jobs} == {
        j.id for j in jobs if getattr(j, f"{field}_ms") == values[-1]
    }


async def test_status_and_name_filters(monque, raw):
    m = await monque()
    jobs = await _seed(m, raw)
    for status in STATUSES:
        page = await m.get_jobs_with_cursor(filter=JobListFilter(status=status), limit=1000)
        assert {j.id for j in page.jobs} == {j.id for j in jobs if j.status.value == status}
    page = await m.get_jobs_with_cursor(filter=JobListFilter(name="beta", status=JobStatus.PENDING), limit=1000)
    assert {j.id for j in page.jobs} == {j.id for j in jobs if j.name == "beta" and j.status is JobStatus.PENDING}
    assert await m.count_jobs() == N
    assert await m.count_jobs(JobListFilter(name="nope")) == 0


async def test_search_by_id_prefix_and_unique_key_substring(monque, raw):
    m = await monque()
    jobs = await _seed(m, raw)
    target = jobs[5]
    prefix = target.id[:20]
    page = await m.get_jobs_with_cursor(filter=JobListFilter(search=prefix), limit=1000)
    assert {j.id for j in page.jobs} == {j.id for j in jobs if j.id.startswith(prefix)}
    assert target.id in {j.id for j in page.jobs}
    page = await m.get_jobs_with_cursor(filter=JobListFilter(search=target.id.upper()), limit=1000)
    assert [j.id for j in page.jobs] == [target.id]
    page = await m.get_jobs_with_cursor(filter=JobListFilter(search="Key-02"), limit=1000)
    assert {j.unique_key for j in page.jobs} == {"Key-020", "Key-024", "Key-028"}
    page = await m.get_jobs_with_cursor(filter=JobListFilter(search="%"), limit=1000)
    assert page.jobs == []  # wildcards are literal
    with pytest.raises(InvalidJobQueryError, match="only whitespace"):  # issue 34: it was read as no search
        await m.get_jobs_with_cursor(filter=JobListFilter(search="   "), limit=1000)


# -- tampered and mismatched cursors --------------------------------------------------------------


async def test_tampered_and_mismatched_cursors_are_rejected(monque, raw):
    m = await monque()
    await _seed(m, raw, n=12)
    sort = JobSort(by="updated_at", direction="asc")
    page = await m.get_jobs_with_cursor(limit=5, sort=sort)
    cursor = page.cursor
    assert cursor and cursor[0] == "F"
    # sanity: the real cursor works
    await m.get_jobs_with_cursor(cursor=cursor, limit=5, sort=sort)

    body = cursor[1:]
    token = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    token["p"]["v"] = token["p"]["v"] + 1  # edit the anchor value, keep the old checksum
    edited = "F" + base64.urlsafe_b64encode(json.dumps(token).encode()).decode().rstrip("=")
    flipped = cursor[:10] + ("A" if cursor[10] != "A" else "B") + cursor[11:]
    bad = [edited, flipped, cursor[:-4], "X" + body, "F", "F!!!!", "Fbm90IGpzb24", "B" + "e30"]
    for value in bad:
        with pytest.raises(InvalidCursorError):
            await m.get_jobs_with_cursor(cursor=value, limit=5, sort=sort)
    for other in (JobSort(by="updated_at", direction="desc"), JobSort(by="created_at", direction="asc"), JobSort()):
        with pytest.raises(InvalidCursorError):
            await m.get_jobs_with_cursor(cursor=cursor, limit=5, sort=other)


async def test_listing_argument_validation(monque):
    m = await monque()
    for limit in (0, -1, 1001, True, "5", 2.5):
        with pytest.raises(InvalidJobQueryError):
            await m.get_jobs_with_cursor(limit=limit)
        with pytest.raises(InvalidJobQueryError):
            await m.get_jobs(limit=limit)
    for skip in (-1, 1.5, True, "1"):
        with pytest.raises(InvalidJobQueryError):
            await m.get_jobs(skip=skip)
    with pytest.raises(InvalidJobQueryError):
        await m.get_jobs_with_cursor(direction="sideways")
    with pytest.raises(InvalidJobQueryError):
        await m.get_jobs_with_cursor(sort=JobSort(by="name"))  # type: ignore[arg-type]
    with pytest.raises(InvalidJobQueryError):
        await m.get_jobs_with_cursor(sort=JobSort(direction="up"))  # type: ignore[arg-type]
    with pytest.raises(InvalidJobQueryError):
        await m.get_jobs_with_cursor(filter=JobListFilter(status="done"))
    with pytest.raises(InvalidJobQueryError):
        await m.get_jobs(status="done")
    from datetime import datetime

    with pytest.raises(InvalidJobQueryError):
        await m.get_jobs_with_cursor(filter=JobListFilter(created_at_from=datetime(2030, 1, 1)))


# -- get_jobs -------------------------------------------------------------------------------------


async def test_get_jobs_sorted_by_next_run_at_with_limit_and_skip(monque, raw):
    m = await monque()
    jobs = await _seed(m, raw)
    expected = [j.id for j in _expected(jobs, "next_run_at", "asc")]
    assert [j.id for j in await m.get_jobs()] == expected
    assert [j.id for j in await m.get_jobs(limit=7)] == expected[:7]
    assert [j.id for j in await m.get_jobs(limit=7, skip=7)] == expected[7:14]
    assert [j.id for j in await m.get_jobs(skip=35)] == expected[35:]
    assert await m.get_jobs(skip=100) == []
    alpha_failed = await m.get_jobs(name="alpha", status="failed")
    assert [j.id for j in alpha_failed] == [
        j for j in expected if any(x.id == j and x.name == "alpha" and x.status is JobStatus.FAILED for x in jobs)
    ]
    several = await m.get_jobs(status=[JobStatus.PENDING, "cancelled"])
    assert {j.status for j in several} == {JobStatus.PENDING, JobStatus.CANCELLED}
    assert len(several) == sum(1 for j in jobs if j.status.value in ("pending", "cancelled"))


async def test_get_jobs_default_limit_is_100(monque):
    m = await monque()
    await m.enqueue_many([{"name": "many", "data": i} for i in range(130)])
    assert len(await m.get_jobs()) == 100
    assert len(await m.get_jobs(limit=1000)) == 130


async def test_job_names(monque):
    m = await monque()
    await m.enqueue("zeta")
    await m.enqueue("alpha")
    m.register("mid", lambda j: None)
    assert await m.job_names() == ["alpha", "mid", "zeta"]


async def test_recurring_filter_finds_exactly_the_scheduled_jobs(monque):
    m = await monque()
    one_offs = await m.enqueue_many([{"name": "alpha", "data": i} for i in range(5)])
    hourly = await m.schedule("@hourly", "alpha", {"kind": "rollup"})
    nightly = await m.schedule("0 3 * * *", "beta", None, tz="Europe/Paris")
    page = await m.get_jobs_with_cursor(filter=JobListFilter(recurring=True))
    assert sorted(j.id for j in page.jobs) == sorted([hourly.id, nightly.id])
    assert all(j.repeat_interval for j in page.jobs)
    page = await m.get_jobs_with_cursor(filter=JobListFilter(recurring=False))
    assert sorted(j.id for j in page.jobs) == sorted(j.id for j in one_offs)
    assert await m.count_jobs(JobListFilter(name="beta", recurring=True)) == 1

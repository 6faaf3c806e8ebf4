"""``Monque.import_jobs``: complete jobs stored as given, in any status, then seen and counted
as the store's own writes are (what the console's seed uses, and a restore of an export would)."""

from __future__ import annotations

import asyncio

import pytest
from job_samples import oid, sample_jobs

from monque_engine import (
    ConnectionError,
    InvalidCronError,
    InvalidJobIdentifierError,
    InvalidJobQueryError,
    Job,
    JobListFilter,
    JobStatus,
    PayloadValidationError,
)
from monque_engine.timeutil import now_ms


async def test_imported_jobs_read_back_exactly_as_given_in_every_status(monque):
    m = await monque()
    jobs = sample_jobs()
    assert await m.import_jobs(jobs) == len(jobs)
    stored = await m.get_jobs_by_id([job.id for job in jobs])
    for job in jobs:
        assert stored[job.id] == job, job.id
    assert stored[oid(4)].attempts[-1].error_type == "httpx.ConnectTimeout"


async def test_imported_jobs_are_counted_and_reach_watchers_as_inserts(monque):
    m = await monque()
    await m.enqueue("email", {"first": True})  # counts start from a store that holds a job
    stream = await m.open_watch(full_document=False)
    jobs = sample_jobs()
    await m.import_jobs(jobs)
    seen: dict[str, str] = {}

    async def read() -> None:
        async for change in stream:
            if change.job_id in {job.id for job in jobs}:
                seen[change.job_id] = change.operation
            if len(seen) == len(jobs):
                return

    await asyncio.wait_for(read(), 5)
    assert seen == {job.id: "insert" for job in jobs}
    assert await m.count_jobs(JobListFilter(status=JobStatus.PENDING)) == 3
    assert await m.count_jobs(JobListFilter(status=JobStatus.FAILED)) == 1
    stats = await m.get_queue_stats()
    assert (stats.pending, stats.processing, stats.completed, stats.failed, stats.cancelled) == (3, 1, 1, 1, 1)
    groups = {group.name for group in await m.error_groups()}
    assert groups == {"webhook", "sync"}


async def test_an_id_already_stored_fails_the_import_and_stores_none_of_it(monque):
    m = await monque()
    jobs = sample_jobs()
    await m.import_jobs(jobs[:1])
    with pytest.raises(ConnectionError, match=oid(1)):
        await m.import_jobs(jobs)  # the first one clashes
    assert set(await m.get_jobs_by_id([job.id for job in jobs])) == {oid(1)}


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"id": "not-an-id"}, InvalidJobIdentifierError),
        ({"id": oid(9).upper()}, InvalidJobIdentifierError),
        ({"name": ""}, InvalidJobIdentifierError),
        ({"unique_key": "x" * 2000}, InvalidJobIdentifierError),
    ],
)
async def test_a_bad_job_refuses_the_whole_import_before_anything_is_stored(monque, change, error):
    m = await monque()
    jobs = sample_jobs()
    jobs[-1] = jobs[-1].replace(**change)
    with pytest.raises(error):
        await m.import_jobs(jobs)
    assert await m.get_jobs_by_id([job.id for job in jobs]) == {}


async def test_import_takes_job_objects_only(monque):
    m = await monque()
    with pytest.raises(InvalidJobQueryError):
        await m.import_jobs([{"name": "email"}])  # type: ignore[list-item]
    with pytest.raises(InvalidJobQueryError):
        await m.import_jobs(sample_jobs()[0])  # type: ignore[arg-type]
    assert await m.import_jobs([]) == 0


async def test_an_imported_due_job_wakes_a_started_worker(monque):
    m = await monque()
    ran = asyncio.Event()

    async def handler(job: Job) -> None:
        ran.set()

    m.register("email", handler)
    await m.start()
    due = now_ms()
    await m.import_jobs([Job(oid(20), "email", {"n": 1}, JobStatus.PENDING, due, due, due)])
    await asyncio.wait_for(ran.wait(), 5)


@pytest.mark.parametrize(
    ("index", "change", "error", "field"),
    [
        (0, {"next_run_at_ms": "soon"}, InvalidJobQueryError, "next_run_at_ms"),
        (0, {"created_at_ms": 1.5}, InvalidJobQueryError, "created_at_ms"),
        (0, {"updated_at_ms": None}, InvalidJobQueryError, "updated_at_ms"),
        (0, {"next_run_at_ms": 10**16}, InvalidJobQueryError, "next_run_at_ms"),  # past the year 9999
        (1, {"locked_at_ms": "2024-01-01"}, InvalidJobQueryError, "locked_at_ms"),
        (1, {"last_heartbeat_ms": True}, InvalidJobQueryError, "last_heartbeat_ms"),
        (0, {"status": "pending"}, InvalidJobQueryError, "status"),
        (3, {"fail_count": -1}, InvalidJobQueryError, "fail_count"),
        (3, {"fail_count": "3"}, InvalidJobQueryError, "fail_count"),
        (1, {"heartbeat_interval_ms": 0}, InvalidJobQueryError, "heartbeat_interval_ms"),
        (3, {"fail_reason": 42}, InvalidJobQueryError, "fail_reason"),
        (4, {"repeat_interval": "every day"}, InvalidCronError, "every day"),
        (0, {"data": {"x": float("nan")}}, PayloadValidationError, "import_jobs item 0"),
        # A processing job nobody owns, or with no lock time: no worker could complete it and
        # stale recovery had no instant to judge, so it stayed processing for good.
        (1, {"claimed_by": None}, InvalidJobQueryError, "claimed_by"),
        (1, {"claimed_by": ""}, InvalidJobQueryError, "claimed_by"),
        (1, {"claimed_by": "w\n1"}, InvalidJobQueryError, "claimed_by"),
        (1, {"locked_at_ms": None, "last_heartbeat_ms": None}, InvalidJobQueryError, "locked_at_ms"),
    ],
)
async def test_every_field_is_checked_and_a_bad_one_refuses_the_whole_import(monque, index, change, error, field):
    """Issue 34: ``next_run_at_ms="soon"`` was stored, and every later export of the store
    failed on it. The error names the item and the field; nothing is stored."""
    m = await monque()
    jobs = sample_jobs()
    jobs[index] = jobs[index].replace(**change)
    with pytest.raises(error) as raised:
        await m.import_jobs(jobs)
    assert f"import_jobs item {index} (id '{jobs[index].id}')" in str(raised.value)
    assert field in str(raised.value)
    assert await m.get_jobs_by_id([job.id for job in jobs]) == {}
    assert await m.count_jobs() == 0


async def test_an_id_given_twice_in_one_import_is_refused_before_anything_is_stored(monque):
    m = await monque()
    jobs = sample_jobs()
    jobs.append(jobs[2].replace(name="other"))
    with pytest.raises(InvalidJobIdentifierError, match="is also item 2 of this import"):
        await m.import_jobs(jobs)
    assert await m.count_jobs() == 0

"""Bulk actions bounded on updatedAt (what the console relies on).

The console counts, asks, then acts with ``updated_before`` = the instant of the count, so
the action can never reach a job that was added or changed after the operator saw the number.
"""

from __future__ import annotations

from monque_engine import JobSelector, JobStatus
from monque_engine.store.base import StoreSelector
from monque_engine.store.mongo import documents as q
from monque_engine.timeutil import ms_to_datetime


async def test_bulk_calls_skip_jobs_updated_at_or_after_the_bound(monque, raw) -> None:
    monque = await monque()
    old = [await monque.enqueue("bulk", {"i": i}) for i in range(3)]
    for job in old:
        await raw(monque).set(job.id, updatedAt=1_000_000)
    new = await monque.enqueue("bulk", {"i": 3})
    await raw(monque).set(new.id, updatedAt=2_000_000)
    bound = ms_to_datetime(2_000_000)
    assert (await monque.cancel_jobs(JobSelector(name="bulk", updated_before=bound))).count == 3
    assert (await monque.get_job(new.id)).status is JobStatus.PENDING  # type: ignore[union-attr]
    # The cancel moved the old jobs' updatedAt to now: nothing is older than the bound any more.
    assert (await monque.delete_jobs(JobSelector(name="bulk", updated_before=bound))).count == 0
    assert (await monque.retry_jobs(JobSelector(name="bulk", updated_before=ms_to_datetime(10**13)))).count == 3
    assert (await monque.delete_jobs(JobSelector(updated_before=ms_to_datetime(10**13)))).count == 4


def test_mongo_selector_document_bounds_updated_at() -> None:
    """Query-document check (no MongoDB server here): the bound is updatedAt $lt, next to the rest."""
    document = q.selector_filter(
        StoreSelector(
            name="bulk", statuses=(JobStatus.PENDING,), updated_before_ms=2_000_000, created_before_ms=3_000_000
        )
    )
    assert document == {
        "name": "bulk",
        "status": {"$in": ["pending"]},
        "createdAt": {"$lt": q.dt(3_000_000)},
        "updatedAt": {"$lt": q.dt(2_000_000)},
    }
    assert "updatedAt" not in q.selector_filter(StoreSelector(name="bulk"))

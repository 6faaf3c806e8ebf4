"""Engine queries the console relies on: a bulk bound on updatedAt, and id-suffix search.

The console counts, asks, then acts with ``updated_before`` = the instant of the count, so
the action can never reach a job that was added or changed after the operator saw the number.
"""

from __future__ import annotations

from monque_engine import JobSelector, JobStatus
from monque_engine.store.base import StoreListFilter, StoreSelector
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


async def test_search_matches_the_end_of_an_id_as_consoles_show_it(monque) -> None:
    """The console shows an id's last 8 hex digits; typing them in the search must find the job."""
    m = await monque()
    jobs = [await m.enqueue("s", {"i": i}) for i in range(5)]
    target = jobs[2]
    from monque_engine import JobListFilter

    page = await m.get_jobs_with_cursor(filter=JobListFilter(search=target.id[-8:]), limit=100)
    assert [job.id for job in page.jobs] == [target.id]
    assert await m.count_jobs(JobListFilter(search=target.id[-8:].upper())) == 1
    assert await m.count_jobs(JobListFilter(search="%" + target.id[-3:])) == 0  # not a pattern


def test_mongo_search_document_matches_an_id_suffix() -> None:
    """Query-document check (no server): the suffix is a $regexMatch on the id's hex string."""
    document = q.list_filter(StoreListFilter(search="00ab12cd"))
    clauses = document["$and"][0]["$or"]
    assert {"$expr": {"$regexMatch": {"input": {"$toString": "$_id"}, "regex": "00ab12cd$"}}} in clauses
    assert not any("$expr" in c for c in q.list_filter(StoreListFilter(search="key-1"))["$and"][0]["$or"])


def test_mongo_suffix_search_evaluates_to_the_job() -> None:
    """mongomock as a query-language evaluator (not a server): the suffix clause finds exactly the job."""
    from test_mongo_documents import _ids, _job
    from test_mongo_evaluator import evaluator_collection, oid

    c = evaluator_collection()
    c.insert_many([_job(n=1), _job(n=2), _job(n=3)])
    assert _ids(c.find(q.list_filter(StoreListFilter(search=oid(2)[-8:])))) == [oid(2)]

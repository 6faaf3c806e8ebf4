"""Id-suffix search (what the console relies on): the console shows an id's last 8 hex
digits, and typing them in the search finds the job, on listings and counts.
"""

from __future__ import annotations

from monque_engine.store.base import StoreListFilter
from monque_engine.store.mongo import documents as q


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

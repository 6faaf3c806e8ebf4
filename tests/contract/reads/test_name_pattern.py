"""A name glob on listings, counts and bulk calls (``JobListFilter.name_pattern``).

The console's name filter accepts ``email*`` or ``report-?``; the store must match the same
names on SQLite (GLOB, ``[`` made literal) and MongoDB (an anchored, escaped ``$regex``), and
a bulk action must reach exactly the jobs the listing shows. The MongoDB part is a
query-document check evaluated by mongomock (a query-language evaluator, not a server).
"""

from __future__ import annotations

import re

import pytest

from monque_engine import InvalidJobQueryError, JobListFilter, JobStatus
from monque_engine.job import name_glob_regex
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import documents as q

NAMES = ["email-a", "email-b", "emails", "report-1", "report-10", "a*b", "a[b]", "a.b", "axb", "Email-c"]


async def _names(monque, **fields) -> list[str]:  # type: ignore[no-untyped-def]
    page = await monque.get_jobs_with_cursor(limit=100, filter=JobListFilter(**fields))
    return sorted(job.name for job in page.jobs)


async def test_listing_and_count_match_the_glob(monque) -> None:
    m = await monque()
    for name in NAMES:
        await m.enqueue(name, {})
    assert await _names(m, name_pattern="email*") == ["email-a", "email-b", "emails"]
    assert await _names(m, name_pattern="email-?") == ["email-a", "email-b"]
    assert await _names(m, name_pattern="report-?") == ["report-1"]
    assert await _names(m, name_pattern="*-1*") == ["report-1", "report-10"]
    # Only * and ? are wildcards: brackets, dots and the case are literal.
    assert await _names(m, name_pattern="a[b]") == ["a[b]"]
    assert await _names(m, name_pattern="a.b") == ["a.b"]
    assert await _names(m, name_pattern="a?b") == ["a*b", "a.b", "axb"]
    assert await _names(m, name_pattern="email") == []  # anchored: no substring match
    assert await m.count_jobs(JobListFilter(name_pattern="email*")) == 3
    assert await m.count_jobs(JobListFilter(name_pattern="email*", name="emails")) == 1


async def test_bulk_calls_reach_only_the_matching_names(monque) -> None:
    m = await monque()
    for name in NAMES:
        await m.enqueue(name, {})
    assert (await m.cancel_jobs(JobListFilter(name_pattern="report-*"))).count == 2
    assert await _names(m, status=JobStatus.CANCELLED) == ["report-1", "report-10"]
    assert (await m.delete_jobs(JobListFilter(name_pattern="email-?"))).count == 2
    assert await m.count_jobs() == len(NAMES) - 2


async def test_a_bad_pattern_is_a_clear_error(monque) -> None:
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match="name_pattern"):
        await m.count_jobs(JobListFilter(name_pattern=""))
    with pytest.raises(InvalidJobQueryError, match="name_pattern"):
        await m.count_jobs(JobListFilter(name_pattern=3))  # type: ignore[arg-type]


def test_glob_regex_is_anchored_and_escaped() -> None:
    assert name_glob_regex("email*") == "^email.*$"
    assert re.fullmatch(name_glob_regex("a.b?"), "a.bc")
    assert not re.match(name_glob_regex("a.b"), "axb")
    assert not re.match(name_glob_regex("a[b]"), "ab")


def test_mongo_list_document_is_an_anchored_regex() -> None:
    """Query-document check (no server): name_pattern becomes name $regex, next to an exact name."""
    assert q.list_filter(StoreListFilter(name_pattern="email*")) == {"name": {"$regex": "^email.*$"}}
    both = q.list_filter(StoreListFilter(name="emails", name_pattern="email*"))
    assert both == {"name": "emails", "$and": [{"name": {"$regex": "^email.*$"}}]}


def test_mongo_documents_evaluate_to_the_same_names() -> None:
    """mongomock evaluates the documents (listing and bulk selector) to the names SQLite matches."""
    from test_mongo_documents import _job
    from test_mongo_evaluator import evaluator_collection

    c = evaluator_collection()
    c.insert_many([_job(n=i + 1, name=name) for i, name in enumerate(NAMES)])

    def names(document: dict) -> list[str]:  # type: ignore[type-arg]
        return sorted(doc["name"] for doc in c.find(document))

    assert names(q.list_filter(StoreListFilter(name_pattern="email*"))) == ["email-a", "email-b", "emails"]
    assert names(q.list_filter(StoreListFilter(name_pattern="a?b"))) == ["a*b", "a.b", "axb"]
    assert names(q.list_filter(StoreListFilter(name_pattern="a[b]"))) == ["a[b]"]
    selector = StoreSelector(listing=StoreListFilter(name_pattern="report-?"))
    assert names(q.selector_filter(selector)) == ["report-1"]

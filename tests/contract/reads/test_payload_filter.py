"""Structured payload filters (issue 40 item 5): the same answers on every store.

Each case of ``tests/payload_cases.py`` is listed, counted and acted on through the store,
and must equal the reference (``DataTerm.matches``). On MongoDB without a server the
evaluator test (``test_mongo_payload_filter.py``) runs the same cases.
"""

from __future__ import annotations

import pytest
from payload_cases import PAYLOADS, TERMS, expected

from monque_engine import InvalidJobQueryError, JobListFilter, JobStatus
from monque_engine.payload_filter import parse_terms


async def _enqueued(m) -> list[str]:
    return [(await m.enqueue("p", payload)).id for payload in PAYLOADS]


@pytest.mark.parametrize("term", TERMS)
async def test_each_term_lists_and_counts_what_the_reference_says(monque, term: str) -> None:
    m = await monque()
    ids = await _enqueued(m)
    want = {ids[i] for i in expected(term)}
    page = await m.get_jobs_with_cursor(filter=JobListFilter(data=term), limit=100)
    assert {job.id for job in page.jobs} == want, term
    assert await m.count_jobs(JobListFilter(data=term)) == len(want)


async def test_bulk_acts_on_exactly_the_filtered_jobs(monque) -> None:
    m = await monque()
    ids = await _enqueued(m)
    bad = JobListFilter(data="data.customer_id missing", status=JobStatus.PENDING)
    want = {ids[i] for i in expected("data.customer_id missing")}
    counted = await m.count_bulk("cancel", bad)
    assert counted == len(want)
    result = await m.cancel_jobs(bad, as_of=counted)
    assert result.count == len(want)
    cancelled = {job.id for job in await m.get_jobs(status="cancelled", limit=100)}
    assert cancelled == want


async def test_terms_combine_and_every_term_must_hold(monque) -> None:
    m = await monque()
    ids = await _enqueued(m)
    both = "data.tenant = acme, data.customer_id missing"
    want = set(expected("data.tenant = acme")) & set(expected("data.customer_id missing"))
    assert {j.id for j in (await m.get_jobs_with_cursor(filter=JobListFilter(data=both))).jobs} == {
        ids[i] for i in want
    }
    assert len(parse_terms(both)) == 2


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("data.items.0 exists", "into an array"),
        ("data.a = [1]", "array or object"),
        ("data.a =", "no value"),
        ("data. missing", "not a key"),
        ("customer_id missing", "write data.PATH"),
        ("data.$where exists", "not a key"),
        ("data.tenant == acme", 'one "=" compares'),
        ('data.tenant = "acme', "not closed"),
        ("data.tenant = 'acme'", "double quotes"),
    ],
)
async def test_a_bad_term_is_a_one_line_query_error_and_touches_nothing(monque, text: str, says: str) -> None:
    m = await monque()
    await _enqueued(m)
    with pytest.raises(InvalidJobQueryError, match=says):
        await m.delete_jobs(JobListFilter(data=text))
    assert await m.count_jobs() == len(PAYLOADS)


async def test_a_comma_inside_a_quoted_value_stays_in_the_value(monque) -> None:
    """``data.city = "Paris, TX"`` was cut at its comma and refused as two broken terms (probe finding)."""
    m = await monque()
    paris = await m.enqueue("geo", {"city": "Paris, TX"})
    await m.enqueue("geo", {"city": "Paris"})
    listed = (await m.get_jobs_with_cursor(filter=JobListFilter(data='data.city = "Paris, TX", data.city exists'))).jobs
    assert [job.id for job in listed] == [paris.id]

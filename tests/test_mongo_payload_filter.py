"""The payload filter's MongoDB query on every shared case (issue 40 item 5), without a server.

A fake, said plainly: mongomock evaluates the query documents (as test_mongo_documents.py).
The same cases as the SQLite contract run (``tests/payload_cases.py``) must give the
reference's answer: dotted paths that never reach into arrays, numbers equal across
int, long and double, a string "5" equal to no number, null present and null.
"""

from __future__ import annotations

import pytest
from bson import Int64, ObjectId
from payload_cases import PAYLOADS, TERMS, expected
from test_mongo_evaluator import evaluator_collection, oid

from monque_engine.payload_filter import parse_term, parse_terms
from monque_engine.store.base import StoreListFilter
from monque_engine.store.mongo import documents as q


def _collection(payloads: list[object]) -> object:
    c = evaluator_collection()
    c.insert_many(
        [
            {"_id": ObjectId(oid(n)), "name": "p", "data": payload, "status": "pending", "failCount": 0}
            for n, payload in enumerate(payloads, start=1)
        ]
    )
    return c


def _found(c: object, text: str) -> list[int]:
    query = q.list_filter(StoreListFilter(data=parse_terms(text)))
    return sorted(int(str(doc["_id"])[4:], 16) - 1 for doc in c.find(query))  # type: ignore[attr-defined]


@pytest.mark.parametrize("term", TERMS)
def test_each_term_finds_what_the_reference_says(term: str) -> None:
    assert _found(_collection(PAYLOADS), term) == expected(term), q.data_clause(parse_term(term))


def test_bson_numbers_compare_by_value_and_never_as_booleans() -> None:
    c = _collection([{"n": Int64(5)}, {"n": 5.0}, {"n": 5}, {"n": True}, {"n": "5"}])
    assert _found(c, "data.n = 5") == [0, 1, 2]
    assert _found(c, "data.n = true") == [3]
    assert _found(c, 'data.n = "5"') == [4]

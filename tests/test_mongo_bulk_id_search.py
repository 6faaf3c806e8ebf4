"""A bulk action on a listing with an id-like search runs the id-suffix match as its own
index-only query, as the listing does (issue 27 item 8, the bulk half). FAKE: mongomock
evaluates the documents; the hint is recorded as sent.

Before, ``selector_filter`` put the ``$expr``/``$toString(_id)`` branch into the search's
``$or``, so count, cancel, retry and delete by such a selector scanned the collection.
A bulk action must reach every match, so a suffix matching more ids than the suffix query
returns keeps the exact ``$expr`` (under the bulk deadline). The ``as_of`` bound
(``updatedAt < as_of``) applies either way.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_mongo_documents import _job
from test_mongo_evaluator import evaluator_collection, evaluator_store, oid

from monque_engine.job import JobStatus
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import documents as q


def _sent(adapter: Any, operation: str) -> dict[str, Any]:
    return next(args[0] for name, args, _ in reversed(adapter.calls) if name == operation)  # type: ignore[no-any-return]


def _selector(search: str, **fields: Any) -> StoreSelector:
    return StoreSelector(statuses=(JobStatus.PENDING,), listing=StoreListFilter(search=search), **fields)


async def test_bulk_by_an_id_suffix_sends_no_expr_and_acts_on_the_match() -> None:
    collection = evaluator_collection()
    collection.insert_many([_job(n=n, updated_at_ms=1_000) for n in (1, 2, 0x1234)])
    store, adapter = evaluator_store(collection)
    selector = _selector("1234")
    assert await store.count_selected(selector) == 1
    assert "$expr" not in json.dumps(_sent(adapter, "count_documents"), default=str)
    assert await store.cancel_many(selector, 5_000) == 1
    assert "$expr" not in json.dumps(_sent(adapter, "update_many"), default=str)
    assert collection.find_one({"_id": q.oid(oid(0x1234))})["status"] == "cancelled"
    suffix = [c for c in adapter.cursors if c.hinted is not None]
    assert suffix and all(c.hinted == q.ID_INDEX_HINT for c in suffix)
    assert await store.delete_many(_selector("0001")) == 1  # oid(1) ends with 0001
    assert "$expr" not in json.dumps(_sent(adapter, "delete_many"), default=str)


async def test_the_as_of_bound_still_applies() -> None:
    collection = evaluator_collection()
    collection.insert_many([_job(n=0x1234, updated_at_ms=9_000)])  # written after the count
    store, adapter = evaluator_store(collection)
    selector = _selector("1234", as_of=5_000)
    assert await store.cancel_many(selector, 10_000) == 0
    sent = _sent(adapter, "update_many")
    assert sent["$and"][0]["updatedAt"] == {"$lt": q.dt(5_000)}


async def test_a_suffix_matching_more_than_the_suffix_query_returns_keeps_the_exact_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bulk action must not stop at the first ID_SUFFIX_LIMIT ids."""
    monkeypatch.setattr(q, "ID_SUFFIX_LIMIT", 2)
    collection = evaluator_collection()
    collection.insert_many([_job(n=n * 16 + 1) for n in range(5)])  # every id ends with 1
    store, adapter = evaluator_store(collection)
    assert await store.cancel_many(_selector("1"), 5_000) == 5
    assert "$expr" in json.dumps(_sent(adapter, "update_many"), default=str)


async def test_a_listing_over_the_suffix_limit_counts_and_pages_every_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing half: it kept the oldest ID_SUFFIX_LIMIT ids, so a count said 1,000 of
    1,100 and the newest matches were missing from a page sorted newest first, where the bulk
    call on the same filter counted them all (a review of the MongoDB store)."""
    from monque_engine.job import JobSort

    monkeypatch.setattr(q, "ID_SUFFIX_LIMIT", 2)
    collection = evaluator_collection()
    collection.insert_many([_job(n=n * 16 + 1, created_at_ms=1_000 + n) for n in range(5)])
    store, _adapter = evaluator_store(collection)
    listing = StoreListFilter(search="1")
    assert await store.count(listing) == 5
    assert [step async for step in store.count_in_steps(listing, 2)][-1].matched == 5
    newest = await store.page(listing, JobSort("created_at", "desc"), "forward", None, 2)
    assert [job.id for job in newest] == [oid(4 * 16 + 1), oid(3 * 16 + 1)]
    assert await store.count_selected(StoreSelector(listing=listing)) == 5

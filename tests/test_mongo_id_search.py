"""An id-like search runs its id-suffix match as its own index-only query (issue 27 item 8).
FAKE: mongomock evaluates the documents; the hint and projection are recorded as sent."""

from __future__ import annotations

import json

from test_mongo_documents import _job
from test_mongo_evaluator import evaluator_collection, evaluator_store, oid

from monque_engine.job import JobSort
from monque_engine.store.base import StoreListFilter
from monque_engine.store.mongo import documents as q


async def test_suffix_search_finds_ids_first_then_lists_them_with_no_expr_in_the_or() -> None:
    collection = evaluator_collection()
    collection.insert_many([_job(n=n) for n in (1, 2, 0x1234)])
    store, adapter = evaluator_store(collection)
    search = StoreListFilter(search="1234")  # the end of oid(0x1234), as consoles show ids
    jobs = await store.page(search, JobSort("created_at", "desc"), "forward", None, 10)
    assert [job.id for job in jobs] == [oid(0x1234)]
    assert await store.count(search) == 1
    finds = [(args, kwargs) for name, args, kwargs in adapter.calls if name == "find"]
    suffix = [c for c in adapter.cursors if c.hinted is not None]
    assert suffix and all(c.hinted == q.ID_INDEX_HINT for c in suffix)
    assert finds[0][1]["projection"] == {"_id": 1}  # keys only
    listing = finds[1][0][0]
    assert "$expr" not in json.dumps(listing, default=str)  # every $or branch is indexable
    count_filter = next(args[0] for name, args, _ in adapter.calls if name == "count_documents")
    assert "$expr" not in json.dumps(count_filter, default=str)


async def test_prefix_and_unique_key_searches_still_match() -> None:
    collection = evaluator_collection()
    collection.insert_many([_job(n=1), _job(n=2, unique_key="order-77")])
    store, _ = evaluator_store(collection)
    assert await store.count(StoreListFilter(search=oid(1)[:10])) == 2  # prefix (both ids share it)
    assert await store.count(StoreListFilter(search="order-7")) == 1
    assert await store.count(StoreListFilter(search="zz")) == 0  # not hex: no id query at all


async def test_a_search_that_is_not_id_like_sends_no_id_query() -> None:
    store, adapter = evaluator_store()
    await store.count(StoreListFilter(search="order-7"))
    assert not [c for c in adapter.cursors if c.hinted is not None]

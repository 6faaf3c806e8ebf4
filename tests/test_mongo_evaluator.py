"""Helpers for the MongoDB store tests: mongomock as a MongoDB *query-language evaluator*.

mongomock evaluates filters, updates, sorts and aggregation stages in-process, which lets
these tests check what each query document *means* without a server. It is not a stand-in
for the contract suite: atomicity, transactions, change streams and index behaviour are a
real server's business (the contract suite runs them when MONQUE_TEST_MONGODB_URI is set).

``AsyncEvaluatorCollection`` wraps a mongomock collection in the slice of PyMongo's async
collection API that ``MongoStore`` calls, so the store's plumbing (claim loops, the E11000
path, the retry pre-image) can run against the evaluator too.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import bson
import mongomock
from pymongo import _csot
from pymongo.errors import BulkWriteError

from monque_engine.job import JobStatus, NewJob
from monque_engine.store.base import StoreOpenOptions
from monque_engine.store.mongo import MongoStore
from monque_engine.store.mongo.config import parse_mongo_url
from monque_engine.store.mongo.indexes import index_specs


def evaluator_collection(retention: bool = False) -> Any:
    """A fresh mongomock collection with the store's index list (incl. the partial unique one)."""
    collection = mongomock.MongoClient(tz_aware=True).db.monque_jobs
    for keys, options in index_specs(retention):
        collection.create_index(keys, **{k: v for k, v in options.items() if k != "background"})
    return collection


class _Cursor:
    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor
        self.max_time: int | None = None
        self.hinted: Any = None

    def sort(self, spec: Any) -> _Cursor:
        self._cursor = self._cursor.sort(spec)
        return self

    def skip(self, n: int) -> _Cursor:
        self._cursor = self._cursor.skip(n)
        return self

    def limit(self, n: int) -> _Cursor:
        self._cursor = self._cursor.limit(n)
        return self

    def max_time_ms(self, ms: int) -> _Cursor:
        self.max_time = ms
        return self

    def hint(self, index: Any) -> _Cursor:
        self.hinted = index  # recorded only: mongomock has no query planner
        return self

    async def to_list(self, length: int | None = None) -> list[Any]:
        return list(self._cursor)


class AsyncEvaluatorCollection:
    """The async collection methods MongoStore uses, evaluated by mongomock (no server)."""

    def __init__(self, collection: Any) -> None:
        self.sync = collection
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.cursors: list[_Cursor] = []  # every find() cursor, to check the options set on it
        self.deadlines: list[tuple[str, float | None]] = []
        #: Optional hook run before each find_one_and_update (to simulate a concurrent writer).
        self.before_find_one_and_update: Callable[[tuple[Any, ...], dict[str, Any]], None] | None = None
        #: Optional hook run before each bulk_write (a concurrent writer between look-up and write).
        self.before_bulk_write: Callable[[], None] | None = None

    def _record(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.calls.append((name, args, kwargs))
        self.deadlines.append((name, _csot.get_timeout()))  # a pymongo.timeout() block around the call

    async def insert_one(self, doc: Any, **kw: Any) -> Any:
        self._record("insert_one", (doc,), kw)
        _encode(doc)
        return self.sync.insert_one(doc)

    async def insert_many(self, docs: Any, ordered: bool = True, session: Any = None) -> Any:
        self._record("insert_many", (docs,), {"ordered": ordered})
        for doc in docs:
            _encode(doc)
        return self.sync.insert_many(docs, ordered=ordered)

    async def find_one_and_update(self, filter: Any, update: Any, session: Any = None, **kw: Any) -> Any:
        self._record("find_one_and_update", (filter, update), kw)
        if self.before_find_one_and_update is not None:
            self.before_find_one_and_update((filter, update), kw)
        _encode(update)
        return self.sync.find_one_and_update(filter, update, **kw)

    async def update_one(self, filter: Any, update: Any, **kw: Any) -> Any:
        self._record("update_one", (filter, update), kw)
        return self.sync.update_one(filter, update)

    async def find_one(self, filter: Any, projection: Any = None, sort: Any = None, session: Any = None) -> Any:
        self._record("find_one", (filter,), {"projection": projection, "sort": sort})
        return self.sync.find_one(filter, projection, sort=sort)

    def find(self, filter: Any, projection: Any = None) -> _Cursor:
        self._record("find", (filter,), {"projection": projection})
        cursor = _Cursor(self.sync.find(filter, projection))
        self.cursors.append(cursor)
        return cursor

    async def update_many(self, filter: Any, update: Any, **kw: Any) -> Any:
        self._record("update_many", (filter, update), kw)
        return self.sync.update_many(filter, update)

    async def delete_many(self, filter: Any, **kw: Any) -> Any:
        self._record("delete_many", (filter,), kw)
        return self.sync.delete_many(filter)

    async def delete_one(self, filter: Any, **kw: Any) -> Any:
        self._record("delete_one", (filter,), kw)
        return self.sync.delete_one(filter)

    async def count_documents(self, filter: Any, **kw: Any) -> int:
        self._record("count_documents", (filter,), kw)
        return int(self.sync.count_documents(filter))

    async def distinct(self, key: str, **kw: Any) -> list[Any]:
        self._record("distinct", (key,), kw)
        return list(self.sync.distinct(key))

    async def bulk_write(self, requests: Any, ordered: bool = True, **kw: Any) -> Any:
        """UpdateMany requests applied as a server applies a multi-document update: one
        document at a time, stopping at the first E11000 with the documents before it
        already modified, reported as PyMongo reports it (BulkWriteError whose details
        carry nModified and the write error's keyPattern / keyValue). mongomock lacks
        ``$rand`` and date arithmetic, so the bulk-retry stagger is pinned to 0."""
        self._record("bulk_write", (requests,), {"ordered": ordered})
        if self.before_bulk_write is not None:
            self.before_bulk_write()
        modified = 0
        for index, request in enumerate(requests):
            update = _pinned(request._doc)
            for doc in list(self.sync.find(request._filter, {"_id": 1}).sort("_id", 1)):
                try:
                    result = self.sync.update_one({"$and": [request._filter, {"_id": doc["_id"]}]}, update)
                except mongomock.DuplicateKeyError:
                    current = self.sync.find_one({"_id": doc["_id"]})
                    key = {"name": current.get("name"), "uniqueKey": current.get("uniqueKey")}
                    raise BulkWriteError(
                        {
                            "writeErrors": [
                                {
                                    "index": index,
                                    "code": 11000,
                                    "keyPattern": {"name": 1, "uniqueKey": 1},
                                    "keyValue": key,
                                    "errmsg": f"E11000 duplicate key error dup key: {key}",
                                }
                            ],
                            "writeConcernErrors": [],
                            "nInserted": 0,
                            "nUpserted": 0,
                            "nMatched": modified,
                            "nModified": modified,
                            "nRemoved": 0,
                            "upserted": [],
                        }
                    ) from None
                modified += result.modified_count
        return _BulkResult(modified)

    async def aggregate(self, pipeline: Any, **kw: Any) -> _Cursor:
        self._record("aggregate", (pipeline,), kw)
        return _Cursor(iter(list(self.sync.aggregate(pipeline))))


class _BulkResult:
    def __init__(self, modified: int) -> None:
        self.modified_count = modified


def _pinned(update: Any) -> Any:
    """The bulk-retry pipeline in a form mongomock evaluates: ``$rand`` pinned to 0 (the
    date term alone) and the ``$unset`` stage as its documented ``$project`` equivalent."""
    if not isinstance(update, list):
        return update
    stages = copy.deepcopy(update)
    for i, stage in enumerate(stages):
        if "$set" in stage and isinstance(stage["$set"].get("nextRunAt"), dict):
            stage["$set"]["nextRunAt"] = stage["$set"]["nextRunAt"]["$add"][0]
        if "$unset" in stage:
            stages[i] = {"$project": {field: 0 for field in stage["$unset"]}}
    return stages


def _encode(doc: Any) -> None:
    """PyMongo BSON-encodes each command before sending it and lets bson's errors
    (OverflowError for ints past 64 bits, InvalidDocument for NUL in keys) escape as they
    are; mongomock does not encode, so the adapter does, to fail the same way."""
    bson.encode(doc if isinstance(doc, dict) else {"pipeline": doc})


def evaluator_store(
    collection: Any | None = None, *, transactions: bool = False
) -> tuple[MongoStore, AsyncEvaluatorCollection]:
    """A MongoStore whose collection is the evaluator adapter (opened without a server)."""
    store = MongoStore(parse_mongo_url("mongodb://user:s3cret@evaluator:27017/monque"))
    adapter = AsyncEvaluatorCollection(collection if collection is not None else evaluator_collection())
    store._collection = adapter  # type: ignore[assignment]  # the adapter quacks like AsyncCollection
    store._supports_transactions = transactions
    return store, adapter


def new_job(
    job_id: str,
    name: str = "email",
    *,
    run_at: int = 1_000,
    created: int = 500,
    data: Any = None,
    unique_key: str | None = None,
    repeat: str | None = None,
) -> NewJob:
    return NewJob(
        id=job_id,
        name=name,
        data=data if data is not None else {"n": job_id[-2:]},
        data_json="",
        next_run_at_ms=run_at,
        created_at_ms=created,
        repeat_interval=repeat,
        unique_key=unique_key,
    )


def oid(n: int) -> str:
    return f"65f0{n:020x}"


__all__ = [
    "AsyncEvaluatorCollection",
    "JobStatus",
    "StoreOpenOptions",
    "evaluator_collection",
    "evaluator_store",
    "new_job",
    "oid",
]

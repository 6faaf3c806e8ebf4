"""Indexes come back after the jobs collection is dropped or renamed (issue 27 item 11). FAKES.

A drop or rename takes the collection's indexes with it, the partial unique one included;
the change stream reports ``invalidate``, the feed reopens without its token, and until
this fix deduplication by unique key stayed off until the process restarted. Now the store
applies the open-time index policy again before the ``invalidate`` reaches the caller: a
dropped collection is empty, so everything is rebuilt; a large collection renamed into
its place without the unique-key index is not built on (that is ``monque-tui migrate``'s
job), and unique-key writes are refused, with the fix, until the index exists.

The collection is mongomock behind the async methods the store calls (its index list,
``create_indexes``, the document count), plus ``watch`` returning PyMongo's
``AsyncChangeStream`` over a scripted cursor (test_mongo_watch.py). A server would be
needed for the build itself and for 20 processes issuing the same createIndexes.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pymongo.errors import AutoReconnect
from test_mongo_connect import REPLICA_HELLO, _command
from test_mongo_evaluator import AsyncEvaluatorCollection, _Cursor, evaluator_collection, new_job, oid
from test_mongo_watch import INVALIDATE, DriverStream, ScriptedCursor, _change

from monque_engine.errors import ChangeFeedHistoryLostError, ConnectionError
from monque_engine.job import JobStatus
from monque_engine.store.base import StoreOpenOptions
from monque_engine.store.mongo import MongoStore
from monque_engine.store.mongo.feed import CollectionInvalidatedError
from monque_engine.store.mongo.index_build import BUILD_AT_OPEN_MAX_DOCS
from monque_engine.store.mongo.indexes import index_models

UNIQUE = "name_1_uniqueKey_1"


class DroppableCollection(AsyncEvaluatorCollection):
    """The evaluator adapter with the index and watch methods the store calls."""

    name = "monque_jobs"

    def __init__(self) -> None:
        super().__init__(evaluator_collection())
        self.built: list[str] = []
        self.documents: int | None = None  # the metadata count; None: the real count
        self.streams: list[DriverStream] = []
        self.unreachable = False

        class _Side:
            async def create_indexes(self, models: Any) -> None:
                return None

        class _Database:
            client = SimpleNamespace(
                admin=SimpleNamespace(command=_command({"hello": REPLICA_HELLO, "buildInfo": {"version": "7.0.5"}})),
                options=SimpleNamespace(timeout=5.0),
            )

            def __getitem__(self, name: str) -> Any:
                return _Side()

        self.database = _Database()

    async def list_indexes(self) -> _Cursor:
        if self.unreachable:
            raise AutoReconnect("connection closed")
        return _Cursor(iter(list(self.sync.list_indexes())))

    async def estimated_document_count(self) -> int:
        return self.documents if self.documents is not None else int(self.sync.count_documents({}))

    async def create_indexes(self, models: Any) -> None:
        for model in models:
            document = dict(model.document)
            keys = list(document.pop("key").items())
            document.pop("background", None)
            self.sync.create_index(keys, **document)
            self.built.append(model.document["name"])

    async def watch(self, pipeline: Any, **options: Any) -> Any:
        return self.streams.pop(0)

    def drop(self) -> None:
        self.sync.drop()

    def index_names(self) -> set[str]:
        return {info["name"] for info in self.sync.list_indexes()}


async def _opened(
    collection: DroppableCollection, monkeypatch: pytest.MonkeyPatch, create_indexes: bool = True
) -> MongoStore:
    store = MongoStore.from_url("mongodb://user:s3cret@h:27017/db")

    async def connect(options: Any) -> Any:
        return collection

    monkeypatch.setattr(store, "_connect", connect)
    await store.open(StoreOpenOptions(create_indexes=create_indexes))
    return store


async def _invalidated(store: MongoStore, collection: DroppableCollection) -> None:
    collection.streams.append(DriverStream(ScriptedCursor(("batch", [_change(1), INVALIDATE], True))))
    events = await store.open_watch(full_document=False, statuses=(JobStatus.PENDING,))
    await anext(events)
    with pytest.raises(ChangeFeedHistoryLostError, match="dropped or renamed"):
        await anext(events)


async def test_a_dropped_collection_gets_every_index_back_before_the_feed_reopens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collection = DroppableCollection()
    store = await _opened(collection, monkeypatch)
    wanted = {model.document["name"] for model in index_models(False)}
    assert wanted <= collection.index_names()
    collection.drop()
    collection.built.clear()
    await _invalidated(store, collection)
    assert wanted <= collection.index_names()
    assert UNIQUE in collection.built
    unique = next(i for i in collection.sync.list_indexes() if i["name"] == UNIQUE)
    assert unique.get("unique") and "partialFilterExpression" in unique
    # Deduplication works again: the second enqueue of the key gets the first job back.
    first = await store.insert(new_job(oid(1), unique_key="order-7"))
    second = await store.insert(new_job(oid(2), unique_key="order-7"))
    assert second.id == first.id == oid(1)
    await store.close()


async def test_a_large_collection_renamed_in_without_the_unique_index_refuses_unique_writes_until_migrated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not built at run time on a large collection (it would block every worker for the
    build); refused with the fix instead, and accepted again once the index exists."""
    collection = DroppableCollection()
    store = await _opened(collection, monkeypatch)
    collection.drop()  # a renameCollection(dropTarget) brings a large one without indexes
    collection.documents = BUILD_AT_OPEN_MAX_DOCS + 1
    collection.built.clear()
    await _invalidated(store, collection)
    assert collection.built == []
    with pytest.raises(ConnectionError, match="monque-tui migrate") as refused:
        await store.insert(new_job(oid(3), unique_key="order-7"))
    assert "no unique-key index" in str(refused.value) and "s3cret" not in str(refused.value)
    with pytest.raises(ConnectionError, match="no unique-key index"):
        await store.retry(oid(3), 2_000)
    # Jobs without a unique key are not affected.
    plain = await store.insert(new_job(oid(4)))
    assert plain.id == oid(4)
    # monque-tui migrate ran in another process: the next unique write looks again and passes.
    for model in index_models(False):
        await collection.create_indexes([model])
    stored = await store.insert(new_job(oid(5), unique_key="order-7"))
    assert stored.id == oid(5)
    await store.close()


async def test_when_the_index_check_itself_fails_unique_writes_look_again_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collection = DroppableCollection()
    store = await _opened(collection, monkeypatch)
    collection.drop()
    collection.unreachable = True
    await _invalidated(store, collection)
    with pytest.raises(ConnectionError, match="could not check the unique-key index"):
        await store.insert(new_job(oid(6), unique_key="k"))
    collection.unreachable = False
    stored = await store.insert(new_job(oid(6), unique_key="k"))  # checked, rebuilt (empty), accepted
    assert stored.id == oid(6) and UNIQUE in collection.index_names()
    await store.close()


async def test_skip_index_creation_is_respected_after_a_drop_too(monkeypatch: pytest.MonkeyPatch) -> None:
    collection = DroppableCollection()
    store = await _opened(collection, monkeypatch, create_indexes=False)
    await _invalidated(store, collection)
    assert collection.built == []
    await store.close()


@pytest.mark.parametrize("operation", ["drop", "rename", "dropDatabase"])
async def test_drop_and_rename_events_count_as_an_invalidate(operation: str) -> None:
    """The worker's pipeline passes only ``invalidate`` (which follows each of these), but
    a stream that sees the event itself treats it the same."""
    from test_mongo_watch import _open

    stream = DriverStream(ScriptedCursor(("batch", [{"_id": {"_data": "fffe"}, "operationType": operation}], True)))
    store, events, _ = await _open(stream)
    with pytest.raises(CollectionInvalidatedError):
        await anext(events)
    await store.close()

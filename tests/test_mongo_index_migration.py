"""Indexes are a deploy step on a large collection, not part of every open (issue 27 item 6).
FAKE: a mongomock collection behind the async methods the index check calls
(``list_indexes``, ``estimated_document_count``, ``create_indexes``, as PyMongo's async
collection has them); a real server would be needed to time a build."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import mongomock
import pytest
from test_mongo_connect import REPLICA_HELLO, _command
from test_mongo_evaluator import _Cursor

from monque_engine.errors import ConnectionError
from monque_engine.store.base import StoreOpenOptions
from monque_engine.store.mongo import MongoStore
from monque_engine.store.mongo.index_build import BUILD_AT_OPEN_MAX_DOCS, build_indexes, ensure_at_open
from monque_engine.store.mongo.indexes import index_models


class IndexedCollection:
    name = "monque_jobs"

    def __init__(self, documents: int, present: list[Any]) -> None:
        self.sync = mongomock.MongoClient(tz_aware=True).db.monque_jobs
        self.sync.insert_one({"_id": 0})  # the collection exists
        for model in present:
            self.sync.create_index(list(model.document["key"].items()))
        self.documents = documents
        self.created: list[list[str]] = []

        class _Side:
            async def create_indexes(self, models: Any) -> None:
                return None

        class _Db:
            def __getitem__(self, name: str) -> Any:
                return _Side()

            class client:
                class admin:
                    command = staticmethod(_command({"hello": REPLICA_HELLO, "buildInfo": {"version": "7.0.5"}}))

        self.database = _Db()

    async def list_indexes(self) -> _Cursor:
        return _Cursor(iter(list(self.sync.list_indexes())))

    async def estimated_document_count(self) -> int:
        return self.documents

    async def create_indexes(self, models: Any) -> None:
        self.created.append([m.document["name"] for m in models])
        for model in models:
            self.sync.create_index(list(model.document["key"].items()))


MODELS = index_models(False)
UNIQUE = next(m for m in MODELS if m.document["name"] == "name_1_uniqueKey_1")
WITHOUT_CONSOLE = [m for m in MODELS if not m.document["name"].startswith("name_1_createdAt")]


async def _open(collection: IndexedCollection, monkeypatch: pytest.MonkeyPatch) -> MongoStore:
    store = MongoStore.from_url("mongodb://user:s3cret@h:27017/db")

    async def connect(options: Any) -> Any:
        return collection

    monkeypatch.setattr(store, "_connect", connect)
    await store.open(StoreOpenOptions())
    return store


async def test_a_large_collection_without_the_unique_key_index_refuses_with_the_fix(monkeypatch: Any) -> None:
    collection = IndexedCollection(10_000_000, [m for m in MODELS if m is not UNIQUE])
    with pytest.raises(ConnectionError) as info:
        await _open(collection, monkeypatch)
    text = str(info.value)
    assert "no unique-key index" in text and "monque-tui migrate mongodb://user:***@h:27017/db" in text
    assert "s3cret" not in text and collection.created == []


async def test_a_large_collection_missing_another_index_runs_without_it_and_says_so_once(
    monkeypatch: Any, caplog: Any
) -> None:
    collection = IndexedCollection(10_000_000, WITHOUT_CONSOLE)
    with caplog.at_level(logging.WARNING, logger="monque_engine.mongo"):
        store = await _open(collection, monkeypatch)
    assert collection.created == []  # nothing built while workers wait
    assert store.missing_indexes == ["name_1_createdAt_-1__id_-1"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "running without them" in warnings[0] and "monque-tui migrate" in warnings[0]


async def test_a_small_collection_gets_its_missing_indexes_at_open(monkeypatch: Any) -> None:
    collection = IndexedCollection(BUILD_AT_OPEN_MAX_DOCS, [])
    store = await _open(collection, monkeypatch)
    assert len(collection.created) == 1 and len(collection.created[0]) == len(MODELS)
    assert store.missing_indexes == []


async def test_build_indexes_reports_each_index_and_builds_only_the_missing() -> None:
    collection = IndexedCollection(10_000_000, WITHOUT_CONSOLE)
    seen: list[tuple[int, str, str]] = []
    built = await build_indexes(collection, MODELS, lambda i, n, name, state: seen.append((i, name, state)))  # type: ignore[arg-type]
    assert built == 1 and collection.created == [["name_1_createdAt_-1__id_-1"]]
    states = {name: state for _, name, state in seen}
    assert states["status_1_nextRunAt_1"] == "present"
    assert states["name_1_createdAt_-1__id_-1"].startswith("built in ")
    assert seen[0][0] == 1 and max(i for i, _, _ in seen) == len(MODELS)
    assert await ensure_at_open(collection, MODELS, "c", "hint") == []  # nothing missing now  # type: ignore[arg-type]


def test_migrate_command_on_sqlite_has_nothing_to_do(tmp_path: Any, capsys: Any) -> None:
    import asyncio

    from monque_engine import Monque
    from monque_tui.cli.commands import run_command

    url = f"sqlite:///{tmp_path}/jobs.db"

    async def create() -> None:
        monque = Monque(url)
        await monque.initialize()
        await monque.close()

    asyncio.run(create())
    assert run_command(["migrate", url]) == 0
    assert "nothing to do" in capsys.readouterr().out


class _SideCollection:
    """A side collection (``<jobs>_counters`` …) on mongomock, with the async ``create_indexes``."""

    def __init__(self, sync: Any) -> None:
        self.sync = sync

    async def create_indexes(self, models: Any) -> None:
        for model in models:
            self.sync.create_index(
                list(model.document["key"].items()),
                **{k: v for k, v in model.document.items() if k in ("expireAfterSeconds",)},
            )


async def test_migrate_builds_the_counters_index_in_the_health_windows_order_on_an_existing_deployment() -> None:
    """Issue 36 item 7: a deployment from before has ``{minute, name}`` on its counters;
    ``migrate`` (``MongoStore.build_indexes``, also run for the side collections at every
    open) creates ``{name, minute}``, the order ``outcome_counts`` sorts by."""
    collection = IndexedCollection(10_000_000, MODELS)
    side_db = mongomock.MongoClient(tz_aware=True).db
    side_db.monque_jobs_counters.create_index([("minute", 1), ("name", 1)])  # what the old release built
    # The store's own client, with no socket timeout: the build needs no second client (index_build.unbounded).
    client = SimpleNamespace(
        admin=collection.database.client.admin,
        options=SimpleNamespace(pool_options=SimpleNamespace(socket_timeout=None)),
    )
    collection.database = type(  # type: ignore[assignment]
        "Db", (), {"__getitem__": lambda self, name: _SideCollection(side_db[name]), "client": client}
    )()
    store = MongoStore.from_url("mongodb://h:27017/db")
    store._collection = collection  # type: ignore[assignment]
    await store.build_indexes()
    keys = [tuple(info["key"].items()) for info in side_db.monque_jobs_counters.list_indexes()]
    assert (("name", 1), ("minute", 1)) in keys

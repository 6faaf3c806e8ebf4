"""Scripts that let a real ``MongoStore`` open against a ``WireServer``, and a way to open one.

``script_collection`` answers what ``open()`` and ``build_indexes()`` ask about the jobs
collection and its side collections: ``listIndexes`` (the indexes the test says exist),
``count`` (what ``estimated_document_count`` sends: the size the test says) and
``createIndexes`` (recorded; answered ``ok``, the indexes then listed as present). Tests
add their own scripts for the commands they are about.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from monque_engine.store.base import StoreOpenOptions
from monque_engine.store.mongo import MongoStore
from monque_engine.store.mongo.indexes import fleet_index_models, index_models

from .server import Request, WireServer, cursor_reply

JOBS = "monque_jobs"


def index_document(model: Any) -> dict[str, Any]:
    """An index as ``listIndexes`` lists it (``v``, ``key``, ``name`` and the options)."""
    doc = dict(model.document)
    return {"v": 2, **doc}


ID_INDEX: dict[str, Any] = {"v": 2, "key": {"_id": 1}, "name": "_id_"}


@dataclass(slots=True)
class CollectionScript:
    """What the scripted server says about the jobs collection (mutable by the test)."""

    documents: int = 0
    indexes: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> listIndexes entry

    def list_indexes(self, request: Request) -> dict[str, Any]:
        collection = str(request["listIndexes"])
        namespace = f"{request.database}.{collection}"
        if collection == JOBS:
            return cursor_reply(namespace, [ID_INDEX, *self.indexes.values()])
        return cursor_reply(namespace, [ID_INDEX])

    def create_indexes(self, request: Request) -> dict[str, Any]:
        before = len(self.indexes) + 1
        if request["createIndexes"] == JOBS:
            for index in request["indexes"]:
                self.indexes[str(index["name"])] = {"v": 2, **index}
        return {"numIndexesBefore": before, "numIndexesAfter": len(self.indexes) + 1, "ok": 1.0}


def script_collection(
    server: WireServer, *, documents: int = 0, present: Iterable[str] | None = None, retention: bool = False
) -> CollectionScript:
    """Install the default answers for the jobs collection: ``present`` names the indexes
    that exist (None = every index Monque declares), ``documents`` its size."""
    models = index_models(retention)
    wanted = {str(m.document["name"]) for m in models} if present is None else set(present)
    script = CollectionScript(
        documents, {str(m.document["name"]): index_document(m) for m in models if m.document["name"] in wanted}
    )
    server.handle("listIndexes", script.list_indexes)
    server.handle("count", lambda request: {"n": script.documents, "ok": 1.0})
    server.handle("createIndexes", script.create_indexes)
    return script


def fleet_index_names() -> set[str]:
    return {str(m.document["name"]) for models in fleet_index_models().values() for m in models}


async def open_store(server: WireServer, *, create_indexes: bool = True, **url_options: Any) -> MongoStore:
    """A real ``MongoStore`` opened against ``server`` (``url_options`` go into its URL)."""
    store = MongoStore.from_url(server.url(**url_options))
    await store.open(StoreOpenOptions(create_indexes=create_indexes))
    return store

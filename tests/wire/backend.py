"""Answer CRUD commands from a mongomock database, for tests whose subject is what the
writes did (counts, documents) rather than what one reply said.

mongomock evaluates the query language as the other ``test_mongo_*`` tests use it; this
module only turns wire commands (``insert``, ``update``, ``delete``, ``find``) into its
calls and its results into the replies the server documents
(https://www.mongodb.com/docs/manual/reference/command/update/#output and the pages of
``insert``, ``delete``, ``find``). A handler can apply a command and then drop the
connection (``apply_then(CLOSE)``): the driver sees a network error for a write that
happened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mongomock
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from .server import Action, Request, WireServer, cursor_reply

Document = dict[str, Any]


class MongomockBackend:
    """One mongomock database; ``handler(name)`` answers that command from it."""

    def __init__(self) -> None:
        self.client: mongomock.MongoClient[Document] = mongomock.MongoClient(tz_aware=True)

    def collection(self, request: Request) -> Any:
        return self.client[request.database][str(request[request.name])]

    def answer(self, request: Request) -> Document:
        answers = {
            "insert": self._insert,
            "update": self._update,
            "delete": self._delete,
            "find": self._find,
            "findAndModify": self._find_and_modify,
        }
        return answers[request.name](request)

    def serve(self, server: WireServer) -> None:
        """Answer every command this backend knows, on ``server``, from it."""
        for name in ("insert", "update", "delete", "find", "findAndModify"):
            server.handle(name, self.handler())

    def handler(self) -> Callable[[Request], Action]:
        return self.answer

    def apply_then(self, action: Action) -> Callable[[Request], Action]:
        """Apply the command, then answer ``action`` instead (e.g. ``CLOSE``: the reply is lost)."""

        def handle(request: Request) -> Action:
            self.answer(request)
            return action

        return handle

    def _insert(self, request: Request) -> Document:
        collection = self.collection(request)
        errors: list[Document] = []
        n = 0
        for index, doc in enumerate(request["documents"]):
            try:
                collection.insert_one(doc)
                n += 1
            except DuplicateKeyError as error:
                errors.append({"index": index, "code": 11000, "errmsg": str(error)})
                if request.get("ordered", True):
                    break
        return _write_reply(n, errors)

    def _update(self, request: Request) -> Document:
        collection = self.collection(request)
        errors: list[Document] = []
        upserted: list[Document] = []
        n = modified = 0
        for index, statement in enumerate(request["updates"]):
            update = statement["u"]
            if isinstance(update, list):  # a pipeline: mongomock cannot run one, but a miss is a miss
                if collection.find_one(statement["q"]) is None and not statement.get("upsert"):
                    continue
                raise NotImplementedError("mongomock cannot evaluate a pipeline update that matches; script it")
            if not any(str(key).startswith("$") for key in update):
                method = collection.replace_one  # a replacement document (replace_one)
            else:
                method = collection.update_many if statement.get("multi") else collection.update_one
            try:
                result = method(statement["q"], update, upsert=bool(statement.get("upsert")))
            except DuplicateKeyError as error:
                errors.append({"index": index, "code": 11000, "errmsg": f"E11000 duplicate key error: {error}"})
                if request.get("ordered", True):
                    break
                continue
            if result.upserted_id is not None:
                upserted.append({"index": index, "_id": result.upserted_id})
                n += 1
            else:
                n += result.matched_count
                modified += result.modified_count
        reply = _write_reply(n, errors)
        reply["nModified"] = modified
        if upserted:
            reply["upserted"] = upserted
        return reply

    def _delete(self, request: Request) -> Document:
        collection = self.collection(request)
        n = 0
        for statement in request["deletes"]:
            if statement.get("limit") == 1:
                n += collection.delete_one(statement["q"]).deleted_count
            else:
                n += collection.delete_many(statement["q"]).deleted_count
        return _write_reply(n, [])

    def _find_and_modify(self, request: Request) -> Document:
        collection = self.collection(request)
        query = request.get("query", {})
        if request.get("remove"):
            doc = collection.find_one_and_delete(query, sort=_sort(request.get("sort")))
        else:
            doc = collection.find_one_and_update(
                query,
                request["update"],
                sort=_sort(request.get("sort")),
                upsert=bool(request.get("upsert")),
                projection=request.get("fields"),
                return_document=ReturnDocument.AFTER if request.get("new") else ReturnDocument.BEFORE,
            )
        return {"value": doc, "lastErrorObject": {"n": int(doc is not None), "updatedExisting": doc is not None}}

    def _find(self, request: Request) -> Document:
        collection = self.collection(request)
        cursor = collection.find(request.get("filter", {}), request.get("projection"))
        if request.get("sort"):
            cursor = cursor.sort(list(request["sort"].items()))
        if request.get("limit"):
            cursor = cursor.limit(int(request["limit"]))
        return cursor_reply(f"{request.database}.{request['find']}", list(cursor))


def _sort(spec: Any) -> list[tuple[str, Any]] | None:
    return list(spec.items()) if spec else None


def _write_reply(n: int, errors: list[Document]) -> Document:
    reply: Document = {"n": n, "ok": 1.0}
    if errors:
        reply["writeErrors"] = errors
    return reply

"""A cluster scripted on the wire server for ``monque-tui check``: what each command it sends gets back.

``ScriptedCluster(server)`` answers every command ``check`` sends, from plain fields a test
changes (documents, the indexes present, the owners of processing jobs, the registry, the
members' optimes, the oplog's ends, which commands this user may not run). These are
scripted replies shaped as the MongoDB manual documents them, so the tests show how the
driver and ``check`` read such replies; they do not show what a server would say.

Reply shapes followed:
- ``listCollections`` / ``listIndexes`` cursors: https://www.mongodb.com/docs/manual/reference/command/listIndexes/
- ``count``: https://www.mongodb.com/docs/manual/reference/command/count/
- ``$collStats`` with ``storageStats`` (``size``, ``totalIndexSize``): https://www.mongodb.com/docs/manual/reference/operator/aggregation/collStats/
- ``replSetGetStatus`` (``members[].name``, ``stateStr``, ``health``, ``optimeDate``): https://www.mongodb.com/docs/manual/reference/command/replSetGetStatus/
- the oplog (``local.oplog.rs``, ``ts`` a Timestamp): https://www.mongodb.com/docs/manual/core/replica-set-oplog/
- a change event (``_id`` the resume token, ``operationType``, ``documentKey``): https://www.mongodb.com/docs/manual/reference/change-events/insert/
- error 13 Unauthorized: https://www.mongodb.com/docs/manual/reference/error-codes/
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bson import Int64, Timestamp

from monque_engine.store.mongo.indexes import index_models
from wire import Action, Error, Request, WireServer, cursor_reply

UNAUTHORIZED = Error(13, "not authorized on admin to execute command", "Unauthorized")
STREAM_CURSOR = 4242


def all_indexes(retention: bool = False) -> list[dict[str, Any]]:
    """``listIndexes`` entries for every index Monque declares, plus ``_id``'s."""
    entries = [{"v": 2, "key": {"_id": 1}, "name": "_id_"}]
    for model in index_models(retention):
        entries.append({"v": 2, "key": dict(model.document["key"]), "name": model.document["name"]})
    return entries


@dataclass
class ScriptedCluster:
    server: WireServer
    database: str = "monque"
    collection: str = "monque_jobs"
    documents: int = 2_000_000
    data_bytes: int = 3_000_000_000
    index_bytes: int = 900_000_000
    indexes: list[dict[str, Any]] = field(default_factory=all_indexes)
    #: claimedBy -> processing jobs held
    owners: dict[str, int] = field(default_factory=dict)
    registered: list[str] = field(default_factory=list)
    #: seconds each secondary is behind the primary
    lags: list[float] = field(default_factory=lambda: [0.0, 1.0])
    oplog_window_s: int = 3 * 24 * 3600
    #: what this user may not do, answered with error 13 ("replSetGetStatus", "oplog", "changeStream",
    #: "collStats", "create", "insert"), or error 20 for a transaction ("transaction")
    refused: set[str] = field(default_factory=set)
    #: deliver the change event of the probe's insert
    deliver_events: bool = True
    #: (collection, _id) of every insert
    inserted: list[tuple[str, Any]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name, handler in {
            "listCollections": self._list_collections,
            "listIndexes": self._list_indexes,
            "count": self._count,
            "aggregate": self._aggregate,
            "distinct": self._distinct,
            "create": self._create,
            "insert": self._insert,
            "getMore": self._get_more,
            "drop": self._drop,
            "replSetGetStatus": self._repl_status,
            "find": self._find,
        }.items():
            self.server.handle(name, handler)

    @property
    def collections(self) -> list[str]:
        return [self.collection, *(name for name in self.created if name not in self.dropped)]

    def _list_collections(self, request: Request) -> Action:
        wanted = (request.get("filter") or {}).get("name")
        names = [name for name in self.collections if wanted in (None, name)]
        return cursor_reply(f"{self.database}.$cmd.listCollections", [{"name": n, "type": "collection"} for n in names])

    def _list_indexes(self, request: Request) -> Action:
        return cursor_reply(f"{self.database}.{request['listIndexes']}", list(self.indexes))

    def _count(self, request: Request) -> Action:
        return {"n": self.documents}

    def _aggregate(self, request: Request) -> Action:
        first = request["pipeline"][0] if request["pipeline"] else {}
        namespace = f"{request.database}.{request['aggregate']}"
        if "$changeStream" in first:
            if "changeStream" in self.refused:
                return UNAUTHORIZED
            if self.server.hello.topology == "standalone" or not self.server.hello.change_streams:
                return self.server.default_action(request)  # error 40573, as a standalone answers
            return cursor_reply(namespace, [], cursor_id=STREAM_CURSOR, post_batch_resume_token={"_data": "00"})
        if "$collStats" in first:
            if "collStats" in self.refused:
                return UNAUTHORIZED
            stats = {"storageStats": {"size": self.data_bytes, "totalIndexSize": self.index_bytes}}
            return cursor_reply(namespace, [stats])
        if "$match" in first and first["$match"].get("status") == "processing":
            rows = [{"_id": owner, "jobs": jobs} for owner, jobs in sorted(self.owners.items())]
            return cursor_reply(namespace, rows)
        return Error(59, f"cluster script: no aggregate {first!r}", "CommandNotFound")

    def _distinct(self, request: Request) -> Action:
        assert request["distinct"] == f"{self.collection}_instances", request.command
        return {"values": list(self.registered)}

    def _create(self, request: Request) -> Action:
        if "create" in self.refused:
            return Error(13, "not authorized on monque to execute command { create: ... }", "Unauthorized")
        self.created.append(str(request["create"]))
        return {}

    def _insert(self, request: Request) -> Action:
        if "transaction" in self.refused and request.get("startTransaction"):
            # what a server with transactions turned off for this deployment might say (code 20, IllegalOperation)
            return Error(
                20, "Transaction numbers are only allowed on a replica set member or mongos", "IllegalOperation"
            )
        if "insert" in self.refused:
            return Error(13, "not authorized to execute command { insert: ... }", "Unauthorized")
        self.inserted += [(request["insert"], doc["_id"]) for doc in request["documents"]]
        return {"n": len(request["documents"])}

    def _get_more(self, request: Request) -> Action:
        namespace = f"{request.database}.{request['collection']}"
        keys = [key for collection, key in self.inserted if collection == request["collection"]]
        if not self.deliver_events or not keys:
            return cursor_reply(
                namespace, [], cursor_id=STREAM_CURSOR, first=False, post_batch_resume_token={"_data": "00"}
            )
        key = keys[0]
        event = {
            "_id": {"_data": "01"},
            "operationType": "insert",
            "ns": {"db": request.database, "coll": request["collection"]},
            "documentKey": {"_id": key},
            "fullDocument": {"_id": key},
        }
        return cursor_reply(
            namespace, [event], cursor_id=STREAM_CURSOR, first=False, post_batch_resume_token={"_data": "01"}
        )

    def _drop(self, request: Request) -> Action:
        self.dropped.append(str(request["drop"]))
        return {"ns": f"{request.database}.{request['drop']}", "nIndexesWas": 1}

    def _repl_status(self, request: Request) -> Action:
        if "replSetGetStatus" in self.refused:
            return UNAUTHORIZED
        head = datetime.now(UTC).replace(microsecond=0)
        members = [{"_id": 0, "name": self.server.address, "stateStr": "PRIMARY", "health": 1.0, "optimeDate": head}]
        for number, lag in enumerate(self.lags, 1):
            members.append(
                {
                    "_id": number,
                    "name": f"db{number}.example:27017",
                    "stateStr": "SECONDARY",
                    "health": 1.0,
                    "optimeDate": head - timedelta(seconds=lag),
                }
            )
        return {"set": "rs0", "members": members}

    def _find(self, request: Request) -> Action:
        namespace = f"{request.database}.{request['find']}"
        if namespace != "local.oplog.rs":
            return Error(59, f"cluster script: no find on {namespace}", "CommandNotFound")
        if "oplog" in self.refused:
            return Error(13, "not authorized on local to execute command", "Unauthorized")
        newest = int(datetime.now(UTC).timestamp())
        oldest = newest - self.oplog_window_s
        first = (request.get("sort") or {}).get("$natural", 1) == 1
        entry = {"ts": Timestamp(oldest if first else newest, 1), "wall": datetime.now(UTC)}
        return {"cursor": {"id": Int64(0), "ns": namespace, "firstBatch": [entry]}}

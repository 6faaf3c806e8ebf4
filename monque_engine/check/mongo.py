"""``monque-tui check`` on MongoDB: what a user's cluster offers Monque, read before a deploy.

Safe on production: every step reads (``hello``, ``buildInfo``, ``replSetGetStatus``,
``listIndexes``, ``$collStats``, one aggregation over the processing jobs, the first and last
oplog entries), except the change-stream and transaction probes, which write to one
temporary collection (``monque_check_<random>``) made for them and dropped at the end,
whatever happened. Nothing of Monque's (jobs, indexes, side collections) is written, and no
index is built: ``monque-tui migrate`` does that.

Each step has its own deadline (``STEP_TIMEOUT_S``), so a server that stops answering ends
the check with one ``fail`` line per step instead of hanging it. A step the user's
privileges do not allow (``replSetGetStatus`` needs ``clusterMonitor``; the oplog needs read
on ``local``) says so as a ``warn`` and the check goes on.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pymongo
from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import OperationFailure, PyMongoError

from ..errors import ConnectionError
from ..store.mongo import documents as q
from ..store.mongo.config import MongoSettings
from ..store.mongo.errors import is_change_stream_unsupported
from ..store.mongo.fleet import owner_holdings_pipeline
from ..store.mongo.index_build import BUILD_AT_OPEN_MAX_DOCS, UNIQUE_KEY_INDEX, existing_patterns, missing
from ..store.mongo.indexes import index_models
from ..store.mongo.server import MINIMUM_TEXT, MINIMUM_VERSION, WIRE_VERSION_4_4, parse_version
from .lines import MIXED_FLEET_RULE, CheckLine, Verdict

#: Each step's deadline (pymongo.timeout: server selection, the socket and maxTimeMS).
STEP_TIMEOUT_S = 15.0
#: How long the change-stream probe waits for the event of its own insert.
CHANGE_EVENT_WAIT_S = 5.0
#: Clock skew between this machine and the server: above WARN scheduling precision suffers
#: (a job due at T runs by another machine's clock); above FAIL, past the default heartbeat
#: interval (30 s), `instances` and the console judge live owners dead or dead ones alive.
SKEW_WARN_S = 1.0
SKEW_FAIL_S = 30.0
#: A secondary further behind than this reads stale pages (consoles on secondaryPreferred).
LAG_WARN_S = 10.0
#: A change stream (a worker's feed, a watch() consumer) stopped longer than the oplog
#: window cannot resume from its token.
OPLOG_WARN_S = 3600.0
#: Error codes: Unauthorized, and "command not found" (a mongos, a standalone, a proxy).
UNAUTHORIZED = 13
#: The temporary collection's name prefix.
TEMP_PREFIX = "monque_check_"

Step = Callable[[], Awaitable[list[CheckLine]]]


def _mb(size: float) -> str:
    return f"{size / 1_000_000:,.1f} MB"


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _reason(error: BaseException) -> str:
    """The driver's reason, without the topology dump selection errors append."""
    text = " ".join(str(error).split())
    for cut in (", Timeout:", ", Topology Description:", ", full error:"):
        text = text.split(cut, 1)[0]
    return text[:300]


def _utc(moment: Any) -> datetime | None:
    if not isinstance(moment, datetime):
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _privileges(error: BaseException, what: str, role: str) -> CheckLine | None:
    """A step refused for lack of privileges: a warn naming the role, not a failure."""
    if isinstance(error, OperationFailure) and (error.code == UNAUTHORIZED or "not authorized" in str(error)):
        return CheckLine(Verdict.WARN, what, f"not checked: this user may not read it ({_reason(error)})", role)
    return None


class MongoCheck:
    """One check of one cluster and jobs collection (``run`` returns the report)."""

    def __init__(self, settings: MongoSettings, collection: str, *, connect_timeout_s: float, retention: bool) -> None:
        self.settings = settings
        self.collection_name = collection
        self.connect_timeout_s = connect_timeout_s
        self.retention = retention
        self.hello: Mapping[str, Any] = {}
        self.version: tuple[int, int, int] | None = None

    # -- the topology, from hello ------------------------------------------------------------------
    @property
    def set_name(self) -> str | None:
        name = self.hello.get("setName")
        return str(name) if name else None

    @property
    def sharded(self) -> bool:
        return self.hello.get("msg") == "isdbgrid"

    @property
    def standalone(self) -> bool:
        return not self.set_name and not self.sharded

    # -- running -------------------------------------------------------------------------------------
    async def run(self) -> list[CheckLine]:
        """Connect (``ConnectionError`` when the server cannot be reached: no report without
        it), then every step; each step's failure is its own ``fail`` line. The temporary
        collection is dropped at the end whatever happened, a cancel (ctrl+c) included."""
        client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(self.settings.url, **self.settings.driver_kwargs())
        database = client[self.settings.database]
        temp = database[f"{TEMP_PREFIX}{secrets.token_hex(6)}"]
        made = False

        async def probes() -> list[CheckLine]:
            nonlocal made
            try:
                await database.create_collection(temp.name)
            except OperationFailure as error:
                refused = _privileges(
                    error,
                    "temporary collection",
                    "change streams and transactions not checked: this user may not create a collection "
                    "(workers need readWrite on the database anyway)",
                )
                if refused is not None:
                    return [refused]
                raise
            made = True
            return await self._change_streams(temp) + await self._transactions(client, temp)

        try:
            await self._connect(client)
            lines = await self._server(client)
            steps: list[tuple[str, Step]] = [
                ("replication", lambda: self._replication(client)),
                ("oplog", lambda: self._oplog(client)),
                ("indexes", lambda: self._indexes(database)),
                ("owners", lambda: self._owners(database)),
                ("temporary collection", probes),
            ]
            for topic, step in steps:
                lines += await self._step(topic, step)
            if made:
                made = False
                lines += await self._drop(temp)
            return lines
        finally:
            if made:  # cancelled or failed midway: still leave nothing behind
                await self._drop(temp)
            try:
                async with asyncio.timeout(5.0):
                    with pymongo.timeout(5.0):
                        await client.close()
            except (TimeoutError, PyMongoError):
                pass  # the sessions expire by themselves

    async def _drop(self, temp: AsyncCollection[dict[str, Any]]) -> list[CheckLine]:
        """Drop the temporary collection under a deadline of its own (not the probes' spent one)."""
        try:
            async with asyncio.timeout(STEP_TIMEOUT_S):
                with pymongo.timeout(STEP_TIMEOUT_S):
                    await temp.drop()
        except (TimeoutError, PyMongoError) as error:
            return [
                CheckLine(
                    Verdict.WARN,
                    "cleanup",
                    f"could not drop the temporary collection {temp.name}: {_reason(error) or 'no answer'}",
                    f"drop it by hand: db.getCollection({temp.name!r}).drop()",
                )
            ]
        return []

    async def _step(self, topic: str, step: Step) -> list[CheckLine]:
        try:
            with pymongo.timeout(STEP_TIMEOUT_S):
                return await step()
        except PyMongoError as error:
            return [
                CheckLine(
                    Verdict.FAIL,
                    topic,
                    f"could not be checked: {_reason(error)}",
                    "check the server's health and this user's privileges, then run check again",
                )
            ]

    async def _connect(self, client: AsyncMongoClient[dict[str, Any]]) -> None:
        started = time.monotonic()
        try:
            with pymongo.timeout(self.connect_timeout_s):
                self.hello = await self._hello(client)
        except PyMongoError as error:
            raise ConnectionError(
                f"Cannot reach MongoDB at {self.settings.hosts} within {self.connect_timeout_s:g} s: "
                f"{_reason(error)} (is the server running and the host reachable? --connect-timeout waits longer)"
            ) from error
        self._round_trip_s = time.monotonic() - started

    async def _hello(self, client: AsyncMongoClient[dict[str, Any]]) -> Mapping[str, Any]:
        """``hello``, timed on both sides for the clock-skew estimate."""
        before = time.time()
        try:
            reply = await client.admin.command("hello")
        except OperationFailure:
            reply = await client.admin.command("isMaster")  # before 4.4.2: the version line says so
        after = time.time()
        self._hello_window = (before, after)
        return reply

    # -- server version, topology and clock --------------------------------------------------------
    async def _server(self, client: AsyncMongoClient[dict[str, Any]]) -> list[CheckLine]:
        lines: list[CheckLine] = []
        try:
            with pymongo.timeout(STEP_TIMEOUT_S):
                build_info: Mapping[str, Any] = await client.admin.command("buildInfo")
        except OperationFailure:
            build_info = {}
        self.version = parse_version(build_info)
        lines.append(self._version_line(build_info))
        lines.append(self._topology_line())
        lines.append(self._clock_line())
        return lines

    def _version_line(self, build_info: Mapping[str, Any]) -> CheckLine:
        wire = self.hello.get("maxWireVersion")
        if self.version is None:
            if isinstance(wire, int) and wire < WIRE_VERSION_4_4:
                return CheckLine(
                    Verdict.FAIL,
                    "server",
                    f"MongoDB older than 4.4 (wire version {wire}); Monque needs {MINIMUM_TEXT} or newer",
                    "upgrade the server",
                )
            return CheckLine(Verdict.OK, "server", f"MongoDB of wire version {wire} (buildInfo not allowed here)")
        text = str(build_info.get("version") or ".".join(map(str, self.version)))
        if self.version < MINIMUM_VERSION:
            return CheckLine(
                Verdict.FAIL,
                "server",
                f"MongoDB {text}; Monque needs {MINIMUM_TEXT} or newer ($rand, hello): workers refuse to start",
                f"upgrade the server to {MINIMUM_TEXT} or newer",
            )
        return CheckLine(Verdict.OK, "server", f"MongoDB {text}")

    def _topology_line(self) -> CheckLine:
        if self.sharded:
            return CheckLine(
                Verdict.OK, "topology", "sharded cluster (through mongos): change streams and transactions"
            )
        if self.set_name:
            hosts = [str(host) for host in self.hello.get("hosts", [])]
            primary = self.hello.get("primary")
            where = f", primary {primary}" if primary else ", NO PRIMARY"
            verdict = Verdict.OK if primary else Verdict.FAIL
            fix = "" if primary else "the set has no primary: no job can be claimed or written until one is elected"
            return CheckLine(
                verdict, "topology", f"replica set {self.set_name!r}: {len(hosts)} data member(s){where}", fix
            )
        return CheckLine(
            Verdict.WARN,
            "topology",
            "standalone server: no change streams (workers poll every poll_interval, 1 s by default) and no "
            "transactions (an enqueue_many batch is not all-or-nothing)",
            "for production, run a replica set (one node is enough: mongod --replSet rs0, then rs.initiate())",
        )

    def _clock_line(self) -> CheckLine:
        server = _utc(self.hello.get("localTime"))
        if server is None:
            return CheckLine(Verdict.WARN, "clock", "the server did not report its time (hello.localTime)")
        before, after = self._hello_window
        middle = (before + after) / 2
        skew = server.timestamp() - middle
        # The reply was made somewhere within the round trip, and localTime has ms precision.
        slack = (after - before) / 2 + 0.001
        least = max(0.0, abs(skew) - slack)
        ahead = "ahead of" if skew > 0 else "behind"
        said = f"the server's clock is {abs(skew):.3f} s {ahead} this machine's (± {slack:.3f} s)"
        if least > SKEW_FAIL_S:
            return CheckLine(
                Verdict.FAIL,
                "clock",
                said,
                f"sync both clocks (NTP): beyond {SKEW_FAIL_S:g} s, live workers look dead to each other and jobs run "
                "early or late by the skew",
            )
        if least > SKEW_WARN_S:
            return CheckLine(
                Verdict.WARN,
                "clock",
                said,
                "sync both clocks (NTP): jobs are scheduled by the clock of the machine that enqueues them",
            )
        return CheckLine(Verdict.OK, "clock", said)

    # -- replication: members, lag, oplog ----------------------------------------------------------
    async def _replication(self, client: AsyncMongoClient[dict[str, Any]]) -> list[CheckLine]:
        if not self.set_name:
            what = "per shard: run check against each shard's replica set" if self.sharded else "no replica set"
            return [CheckLine(Verdict.OK, "replication", f"members and lag not checked ({what})")]
        try:
            status = await client.admin.command("replSetGetStatus")
        except OperationFailure as error:
            refused = _privileges(error, "replication", "grant the clusterMonitor role to see members and lag")
            if refused is not None:
                return [refused]
            raise
        return [self._members_line(status)]

    def _members_line(self, status: Mapping[str, Any]) -> CheckLine:
        members = [member for member in status.get("members", []) if isinstance(member, Mapping)]
        primary = next((m for m in members if m.get("stateStr") == "PRIMARY"), None)
        head = _utc(primary.get("optimeDate")) if primary is not None else None
        parts: list[str] = []
        unhealthy: list[str] = []
        worst_lag = 0.0
        for member in members:
            name, state = str(member.get("name")), str(member.get("stateStr"))
            if member.get("health") == 0 or state not in ("PRIMARY", "SECONDARY", "ARBITER"):
                unhealthy.append(f"{name} {state}")
            optime = _utc(member.get("optimeDate"))
            if state == "SECONDARY" and head is not None and optime is not None:
                lag = max(0.0, (head - optime).total_seconds())
                worst_lag = max(worst_lag, lag)
                parts.append(f"{name} {state} lag {lag:.0f} s")
            else:
                parts.append(f"{name} {state}")
        text = f"{len(members)} member(s): {', '.join(parts)}"
        if unhealthy:
            return CheckLine(
                Verdict.WARN,
                "replication",
                text,
                f"bring back {', '.join(unhealthy)}: w:majority writes need a majority",
            )
        if worst_lag > LAG_WARN_S:
            return CheckLine(
                Verdict.WARN,
                "replication",
                text,
                f"a secondary lags over {LAG_WARN_S:g} s: consoles reading secondaries (secondaryPreferred) show stale "
                "pages; find what loads it",
            )
        return CheckLine(Verdict.OK, "replication", text)

    async def _oplog(self, client: AsyncMongoClient[dict[str, Any]]) -> list[CheckLine]:
        if not self.set_name:
            what = "check each shard's replica set" if self.sharded else "a standalone server has none"
            return [CheckLine(Verdict.OK, "oplog", f"window not checked ({what})")]
        oplog = client["local"]["oplog.rs"]
        try:
            first = await oplog.find_one({}, {"ts": 1, "wall": 1}, sort=[("$natural", 1)])
            last = await oplog.find_one({}, {"ts": 1, "wall": 1}, sort=[("$natural", -1)])
        except OperationFailure as error:
            refused = _privileges(error, "oplog", "grant read on the local database (or clusterMonitor) to see it")
            if refused is not None:
                return [refused]
            raise
        if first is None or last is None:
            return [CheckLine(Verdict.WARN, "oplog", "the oplog is empty or absent on this member")]
        window = float(last["ts"].time - first["ts"].time)
        text = f"oplog window {_span(window)} (oldest entry {first['ts'].as_datetime():%Y-%m-%d %H:%M} UTC)"
        if window < OPLOG_WARN_S:
            return [
                CheckLine(
                    Verdict.WARN,
                    "oplog",
                    text,
                    "a worker or watch() consumer stopped longer than this cannot resume its change stream; "
                    "grow the oplog (replSetResizeOplog)",
                )
            ]
        return [CheckLine(Verdict.OK, "oplog", text)]

    # -- the jobs collection: indexes and size, owners ---------------------------------------------
    async def _exists(self, database: AsyncDatabase[dict[str, Any]]) -> bool:
        names = await database.list_collection_names(filter={"name": self.collection_name})
        return self.collection_name in names

    async def _indexes(self, database: AsyncDatabase[dict[str, Any]]) -> list[CheckLine]:
        collection = database[self.collection_name]
        where = f"{self.settings.database}.{self.collection_name}"
        if not await self._exists(database):
            return [
                CheckLine(
                    Verdict.OK,
                    "indexes",
                    f"{where} does not exist yet: the first worker creates it with every index",
                )
            ]
        models = index_models(self.retention)
        absent = missing(models, await existing_patterns(collection))
        documents = await collection.estimated_document_count()
        size = await self._size(collection)
        on = f"{documents:,} jobs" + (f", {size}" if size else "")
        if not absent:
            return [
                CheckLine(Verdict.OK, "indexes", f"all {len(models)} of Monque's indexes present on {where} ({on})")
            ]
        names = ", ".join(str(model.document["name"]) for model in absent)
        said = f"{len(absent)} of {len(models)} indexes missing on {where} ({on}): {names}"
        migrate = "monque-tui migrate URL" + (" --retention" if self.retention else "")
        if documents <= BUILD_AT_OPEN_MAX_DOCS:
            return [
                CheckLine(Verdict.OK, "indexes", said + "; the first worker builds them at start (small collection)")
            ]
        if any(tuple(model.document["key"].items()) == UNIQUE_KEY_INDEX for model in absent):
            return [
                CheckLine(
                    Verdict.FAIL,
                    "indexes",
                    said,
                    f"workers refuse to start without the unique-key index on this many jobs: run {migrate} "
                    "before the deploy (it builds them one at a time, with progress)",
                )
            ]
        return [
            CheckLine(
                Verdict.WARN,
                "indexes",
                said,
                f"workers run without them, and the queries they serve scan: run {migrate} before the deploy",
            )
        ]

    async def _size(self, collection: AsyncCollection[dict[str, Any]]) -> str:
        """Data and index size, from ``$collStats`` (summed over shards); "" where not allowed."""
        try:
            cursor = await collection.aggregate([{"$collStats": {"storageStats": {}}}])
            stats = await cursor.to_list(None)
        except OperationFailure:
            return ""
        data = sum(float(s.get("storageStats", {}).get("size", 0)) for s in stats)
        index = sum(float(s.get("storageStats", {}).get("totalIndexSize", 0)) for s in stats)
        return f"{_mb(data)} of documents, {_mb(index)} of indexes" if stats else ""

    async def _owners(self, database: AsyncDatabase[dict[str, Any]]) -> list[CheckLine]:
        """Owners of processing jobs missing from the instance registry: Node workers, or
        Python ones too old to register. Node's lock timeout is recorded nowhere, so this can
        only name them and state the rule."""
        if not await self._exists(database):
            return [CheckLine(Verdict.OK, "owners", "no jobs yet")]
        cursor = await database[self.collection_name].aggregate(owner_holdings_pipeline())
        holdings = {str(row["_id"]): int(row.get("jobs", 0)) for row in await cursor.to_list(None)}
        registry = database[q.fleet_collections(self.collection_name)["instances"]]
        registered = {str(value) for value in await registry.distinct("_id")}
        unknown = {owner: jobs for owner, jobs in holdings.items() if owner not in registered}
        if not unknown:
            held = sum(holdings.values())
            return [
                CheckLine(
                    Verdict.OK,
                    "owners",
                    f"every owner of a processing job is a registered Python instance ({len(holdings)} owner(s), "
                    f"{held:,} job(s))",
                )
            ]
        shown = ", ".join(f"{owner} ({jobs:,} job(s))" for owner, jobs in sorted(unknown.items())[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        return [
            CheckLine(
                Verdict.WARN,
                "owners",
                f"{len(unknown)} owner(s) of processing jobs are not in the instance registry (Node Monque workers, "
                f"or Python ones too old to register): {shown}{more}",
                MIXED_FLEET_RULE,
            )
        ]

    # -- change streams and transactions, on a temporary collection -------------------------------
    async def _change_streams(self, temp: AsyncCollection[dict[str, Any]]) -> list[CheckLine]:
        token = secrets.token_hex(8)
        try:
            stream = await temp.watch([{"$match": {"operationType": "insert"}}], max_await_time_ms=500)
        except OperationFailure as error:
            return [self._no_change_streams(error)]
        async with stream:
            await temp.insert_one({"_id": token, "probe": "change stream"})
            deadline = time.monotonic() + CHANGE_EVENT_WAIT_S
            while time.monotonic() < deadline:
                change = await stream.try_next()
                if change is not None and change.get("documentKey", {}).get("_id") == token:
                    return [CheckLine(Verdict.OK, "change streams", "a change stream saw an insert")]
        return [
            CheckLine(
                Verdict.WARN,
                "change streams",
                f"a change stream opened but did not deliver an insert within {CHANGE_EVENT_WAIT_S:g} s",
                "workers fall back to polling (poll_interval); check replication health",
            )
        ]

    def _no_change_streams(self, error: OperationFailure) -> CheckLine:
        if is_change_stream_unsupported(error):
            return CheckLine(
                Verdict.WARN,
                "change streams",
                "not available (standalone server): workers poll for new jobs every poll_interval",
                "run a replica set for push wake-ups",
            )
        return CheckLine(
            Verdict.WARN,
            "change streams",
            f"refused: {_reason(error)}; workers fall back to polling every poll_interval",
            "grant this user changeStream and find on the database (the built-in read role has both)",
        )

    async def _transactions(
        self, client: AsyncMongoClient[dict[str, Any]], temp: AsyncCollection[dict[str, Any]]
    ) -> list[CheckLine]:
        if self.standalone:
            return [
                CheckLine(
                    Verdict.WARN,
                    "transactions",
                    "not available (standalone server): a failed enqueue_many batch is undone by deleting its jobs",
                    "run a replica set for all-or-nothing batches",
                )
            ]
        try:
            async with client.start_session() as session:
                await session.with_transaction(lambda s: temp.insert_one({"probe": "transaction"}, session=s))
        except OperationFailure as error:
            return [
                CheckLine(
                    Verdict.FAIL,
                    "transactions",
                    f"a transaction failed: {_reason(error)}",
                    "enqueue_many uses one per batch here and would fail the same way: check the server's "
                    "transaction settings and this user's write privileges",
                )
            ]
        return [CheckLine(Verdict.OK, "transactions", "a transaction committed")]

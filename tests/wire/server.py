"""A scripted MongoDB wire-protocol server on a loopback socket, for driver-level tests.

The real PyMongo ``AsyncMongoClient`` connects to it and runs its real network path:
connection pool, handshake, server monitoring and selection, retryable writes, cursors,
socket timeouts. The test says what each command gets back. This proves how the driver
and our code handle those replies; it does not prove how a MongoDB server behaves, so a
reply a test scripts from the MongoDB manual should cite the page it follows.

Why our own and not PyMongo's ``mockupdb`` (PyPI 1.8.1, 2021): mockupdb is threaded, its
test side blocks in ``receives()``, and these tests are asyncio tests in the same loop as
the client. This server runs in that loop, so a handler can await, hold a reply until the
test releases it, or record what it saw, with no threads.

What it speaks:

* ``OP_MSG`` (opcode 2013): a body section plus document sequences (``documents``,
  ``updates``, ``deletes``), folded into the command as lists; ``moreToCome`` requests
  (unacknowledged writes) get no reply.
* ``OP_QUERY`` (opcode 2004) for the handshake PyMongo still sends that way
  (``isMaster`` / ``hello`` on ``admin.$cmd``), answered with ``OP_REPLY``.

Scripting, per command name (the body's first key, ``hello`` and ``isMaster`` both
answered by the ``hello`` script):

* ``server.reply(name, *actions)`` queues replies, used once each in order;
* ``server.handle(name, fn)`` sets the answer once the queue is empty: ``fn(request)``
  returns (or awaits) an action;
* otherwise a default: ``hello`` from ``HelloOptions``; ``ping``, ``endSessions``,
  ``killCursors``, ``commitTransaction``, ``abortTransaction`` answer ``ok``; ``buildInfo``
  the version; an ``aggregate`` opening a change stream an open, empty cursor (or error
  40573 with ``change_streams=False``) whose ``getMore`` answers an empty batch after
  ``idle_get_more_s`` (an idle stream: the server waits up to ``maxAwaitTimeMS`` for a
  change, https://www.mongodb.com/docs/manual/reference/command/getMore/); anything else
  error 59 naming the unscripted command, so a test never passes on a reply nobody wrote.

``server.stop_answering()`` makes every later request, on every connection, ``HANG``: a
primary partitioned away (the sockets stay open, nothing comes back).

An action is a reply document (``ok: 1`` added when missing), ``Error(code, ...)``,
``Delay(seconds, action)``, ``Hold(event, action)`` (answer once the test sets the event),
``CLOSE`` (drop the connection without answering) or ``HANG`` (never answer). Every
request is recorded in ``server.received`` before it is answered; ``await
server.wait_for(name)`` waits for one (no sleeps as synchronisation).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import struct
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

import bson
from bson import ObjectId
from bson.codec_options import CodecOptions

OP_REPLY: Final = 1
OP_QUERY: Final = 2004
OP_MSG: Final = 2013
_CHECKSUM_PRESENT: Final = 1
_MORE_TO_COME: Final = 1 << 1
_HEADER = struct.Struct("<iiii")
_CODEC: Final[CodecOptions[dict[str, Any]]] = CodecOptions(tz_aware=True)
#: MongoDB 7.0's wire version (the store needs at least 9, MongoDB 4.4).
DEFAULT_WIRE_VERSION: Final = 21
DEFAULT_VERSION: Final = "7.0.12"
#: Error code 59, CommandNotFound: what the server says about a command it does not know.
COMMAND_NOT_FOUND: Final = 59
#: "$changeStream stage is only supported on replica sets" (a standalone's answer).
CHANGE_STREAMS_UNSUPPORTED: Final = 40573

Document = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Error:
    """A command error reply: ``{ok: 0, code, codeName, errmsg, errorLabels?}``."""

    code: int
    message: str = "scripted error"
    code_name: str = ""
    labels: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def document(self) -> Document:
        doc: Document = {"ok": 0.0, "errmsg": self.message, "code": self.code}
        if self.code_name:
            doc["codeName"] = self.code_name
        if self.labels:
            doc["errorLabels"] = list(self.labels)
        doc.update(self.extra)
        return doc


@dataclass(frozen=True, slots=True)
class Delay:
    """Answer with ``then`` after ``seconds`` (e.g. later than the client's socket timeout)."""

    seconds: float
    then: Action


@dataclass(frozen=True, slots=True)
class Hold:
    """Answer with ``then`` once the test sets ``release`` (never, if it does not)."""

    release: asyncio.Event
    then: Action


class _Close:
    def __repr__(self) -> str:
        return "CLOSE"


class _Hang:
    def __repr__(self) -> str:
        return "HANG"


#: Drop the connection without answering (the driver sees a network error).
CLOSE: Final = _Close()
#: Never answer; the connection stays open until the server stops.
HANG: Final = _Hang()

Action = Mapping[str, Any] | Error | Delay | Hold | _Close | _Hang
Handler = Callable[["Request"], "Action | Awaitable[Action]"]


@dataclass(frozen=True, slots=True)
class Request:
    """One command as received: its name, its body with document sequences folded in."""

    name: str
    command: Document
    database: str
    connection: int  # 1, 2, ... in the order connections were accepted
    opcode: int  # OP_MSG or OP_QUERY

    def __getitem__(self, key: str) -> Any:
        return self.command[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.command.get(key, default)


@dataclass(slots=True)
class HelloOptions:
    """What the default ``hello`` says. ``topology``: ``"primary"`` (a one-member replica
    set's primary, so retryable writes, transactions and change streams are on),
    ``"secondary"`` or ``"standalone"``. ``local_time``: the server clock reported
    (``None`` = this machine's now), for clock-skew checks."""

    topology: Literal["primary", "secondary", "standalone"] = "primary"
    set_name: str = "rs0"
    max_wire_version: int = DEFAULT_WIRE_VERSION
    version: str = DEFAULT_VERSION
    change_streams: bool = True
    local_time: datetime | None = None
    extra: Document = field(default_factory=dict)


def cursor_reply(
    namespace: str,
    documents: list[Document],
    *,
    cursor_id: int = 0,
    first: bool = True,
    post_batch_resume_token: Document | None = None,
) -> Document:
    """A ``find`` / ``aggregate`` (``first``) or ``getMore`` reply; ``cursor_id`` 0 = exhausted."""
    cursor: Document = {"id": bson.Int64(cursor_id), "ns": namespace}
    cursor["firstBatch" if first else "nextBatch"] = documents
    if post_batch_resume_token is not None:
        cursor["postBatchResumeToken"] = post_batch_resume_token
    return {"cursor": cursor, "ok": 1.0}


def _cstring(data: bytes, at: int) -> tuple[str, int]:
    end = data.index(b"\x00", at)
    return data[at:end].decode(), end + 1


def _bson_at(data: bytes, at: int) -> tuple[Document, int]:
    (size,) = struct.unpack_from("<i", data, at)
    return bson.decode(data[at : at + size], _CODEC), at + size


def parse_op_msg(body: bytes) -> tuple[int, Document]:
    """(flag bits, command with each document sequence folded in as a list)."""
    (flags,) = struct.unpack_from("<I", body, 0)
    end = len(body) - (4 if flags & _CHECKSUM_PRESENT else 0)
    at = 4
    command: Document = {}
    sequences: dict[str, list[Document]] = {}
    while at < end:
        kind = body[at]
        at += 1
        if kind == 0:
            command, at = _bson_at(body, at)
        elif kind == 1:
            (size,) = struct.unpack_from("<i", body, at)
            stop = at + size
            identifier, pos = _cstring(body, at + 4)
            docs = sequences.setdefault(identifier, [])
            while pos < stop:
                doc, pos = _bson_at(body, pos)
                docs.append(doc)
            at = stop
        else:
            raise ValueError(f"OP_MSG section kind {kind} is not known")
    command.update(sequences)
    return flags, command


def parse_op_query(body: bytes) -> tuple[str, Document]:
    """(full collection name, query document) of an OP_QUERY."""
    namespace, at = _cstring(body, 4)
    query, _ = _bson_at(body, at + 8)  # numberToSkip, numberToReturn
    return namespace, query


def _op_msg(request_id: int, response_to: int, reply: Mapping[str, Any]) -> bytes:
    payload = struct.pack("<I", 0) + b"\x00" + bson.encode(reply)
    return _HEADER.pack(16 + len(payload), request_id, response_to, OP_MSG) + payload


def _op_reply(request_id: int, response_to: int, reply: Mapping[str, Any]) -> bytes:
    payload = struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(reply)
    return _HEADER.pack(16 + len(payload), request_id, response_to, OP_REPLY) + payload


class WireServer:
    """The server; ``async with WireServer() as server:`` listens on 127.0.0.1 (any free port)."""

    def __init__(self, hello: HelloOptions | None = None) -> None:
        self.hello = hello if hello is not None else HelloOptions()
        #: Every request, in the order received (handshakes and monitor checks included).
        self.received: list[Request] = []
        #: Exceptions raised by handlers (each answered as error 8, UnknownError, naming it):
        #: a test that scripts handlers can assert this stays empty.
        self.handler_errors: list[BaseException] = []
        self._queues: dict[str, deque[Action | Handler]] = defaultdict(deque)
        self._handlers: dict[str, Handler] = {}
        self._arrived = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._connections = itertools.count(1)
        self._request_ids = itertools.count(1)
        self._cursor_ids = itertools.count(1_000)
        self._silent = False
        #: How long the default ``getMore`` of a change stream waits before its empty batch.
        self.idle_get_more_s = 0.05
        self.port = 0

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> WireServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        """Close the listener and every connection (a held or hanging reply is dropped)."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks))
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> WireServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, database: str = "monque", **options: str | int) -> str:
        """``mongodb://127.0.0.1:<port>/<database>?...``; ``options`` become query parameters."""
        query = "&".join(f"{key}={value}" for key, value in options.items())
        return f"mongodb://{self.address}/{database}" + (f"?{query}" if query else "")

    # -- scripting -------------------------------------------------------------------------------
    def reply(self, name: str, *actions: Action | Handler) -> None:
        """Queue answers for the next requests named ``name``, one each, in order; a
        callable is called with the request and its result used."""
        self._queues[name].extend(actions)

    def handle(self, name: str, handler: Handler) -> None:
        """Answer every ``name`` request with ``handler(request)`` once its queue is empty."""
        self._handlers[name] = handler

    def stop_answering(self) -> None:
        """From now on no request gets an answer (see the module docstring)."""
        self._silent = True

    def commands(self, name: str) -> list[Request]:
        """The requests named ``name`` received so far."""
        return [request for request in self.received if request.name == name]

    async def wait_for(self, name: str, count: int = 1, timeout: float = 10.0) -> Request:
        """Wait until ``count`` requests named ``name`` have arrived; return the last of them."""

        def arrived() -> bool:
            return len(self.commands(name)) >= count

        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(arrived)
        return self.commands(name)[count - 1]

    # -- the default answers ---------------------------------------------------------------------
    def hello_reply(self, request: Request) -> Document:
        options = self.hello
        local_time = options.local_time if options.local_time is not None else datetime.now(UTC)
        reply: Document = {
            "helloOk": True,
            "isWritablePrimary": options.topology != "secondary",
            "maxBsonObjectSize": 16 * 1024 * 1024,
            "maxMessageSizeBytes": 48_000_000,
            "maxWriteBatchSize": 100_000,
            "localTime": local_time,
            "logicalSessionTimeoutMinutes": 30,
            "connectionId": request.connection,
            "minWireVersion": 0,
            "maxWireVersion": options.max_wire_version,
            "readOnly": False,
            "ok": 1.0,
        }
        reply["ismaster"] = reply["isWritablePrimary"]  # the legacy handshake's name for it
        if options.topology != "standalone":
            reply.update(
                {
                    "setName": options.set_name,
                    "setVersion": 1,
                    "hosts": [self.address],
                    "me": self.address,
                    "secondary": options.topology == "secondary",
                    "electionId": ObjectId("7fffffff0000000000000001"),
                    "lastWrite": {"lastWriteDate": local_time, "majorityWriteDate": local_time},
                }
            )
            if options.topology == "primary":
                reply["primary"] = self.address
        reply.update(options.extra)
        return reply

    def default_action(self, request: Request) -> Action:
        name = request.name
        if name == "hello":
            return self.hello_reply(request)
        if name in ("ping", "endSessions", "killCursors", "commitTransaction", "abortTransaction"):
            return {"ok": 1.0}
        if name == "buildInfo":
            numbers = [int(part) for part in self.hello.version.split(".")[:3]]
            return {"version": self.hello.version, "versionArray": [*numbers, 0], "ok": 1.0}
        pipeline = request.get("pipeline")
        if name == "aggregate" and pipeline and "$changeStream" in pipeline[0]:
            if not self.hello.change_streams or self.hello.topology == "standalone":
                return Error(
                    CHANGE_STREAMS_UNSUPPORTED,
                    "The $changeStream stage is only supported on replica sets",
                    "Location40573",
                )
            namespace = f"{request.database}.{request.get('aggregate')}"
            return cursor_reply(
                namespace, [], cursor_id=next(self._cursor_ids), post_batch_resume_token={"_data": "00"}
            )
        if name == "getMore":
            namespace = f"{request.database}.{request.get('collection')}"
            reply = cursor_reply(
                namespace, [], cursor_id=int(request["getMore"]), first=False, post_batch_resume_token={"_data": "00"}
            )
            return Delay(self.idle_get_more_s, reply)
        return Error(COMMAND_NOT_FOUND, f"wire test server: no reply scripted for {name!r}", "CommandNotFound")

    # -- the protocol ----------------------------------------------------------------------------
    def _choose(self, request: Request) -> Action | Handler:
        if self._silent:
            return HANG
        queue = self._queues.get(request.name)
        if queue:
            return queue.popleft()
        if request.name in self._handlers:
            return self._handlers[request.name]
        return self.default_action(request)

    async def _answer(self, request: Request) -> Document | _Close | _Hang:
        action: Any = self._choose(request)
        while True:
            if callable(action):
                try:
                    action = action(request)
                    if inspect.isawaitable(action):
                        action = await action
                except Exception as error:  # noqa: BLE001 - reported to the driver and kept for the test
                    self.handler_errors.append(error)
                    action = Error(8, f"wire test server: the handler for {request.name!r} raised {error!r}")
                continue
            if isinstance(action, Delay):
                await asyncio.sleep(action.seconds)
                action = action.then
                continue
            if isinstance(action, Hold):
                await action.release.wait()
                action = action.then
                continue
            if isinstance(action, Error):
                return action.document()
            if isinstance(action, _Close | _Hang):
                return action
            reply = dict(action)
            reply.setdefault("ok", 1.0)
            return reply

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        connection = next(self._connections)
        try:
            while True:
                header = await reader.readexactly(16)
                length, request_id, _, opcode = _HEADER.unpack(header)
                body = await reader.readexactly(length - 16)
                more_to_come = False
                if opcode == OP_MSG:
                    flags, command = parse_op_msg(body)
                    more_to_come = bool(flags & _MORE_TO_COME)
                    database = str(command.get("$db", "admin"))
                elif opcode == OP_QUERY:
                    namespace, command = parse_op_query(body)
                    if "$query" in command:
                        command = dict(command["$query"])
                    database = namespace.split(".", 1)[0]
                else:
                    return  # OP_COMPRESSED etc.: never negotiated, so never expected
                name = next(iter(command), "")
                if name in ("isMaster", "ismaster"):
                    name = "hello"  # the legacy handshake: one script answers both
                request = Request(name, command, database, connection, opcode)
                async with self._arrived:
                    self.received.append(request)
                    self._arrived.notify_all()
                answer = await self._answer(request)
                if isinstance(answer, _Hang):
                    await asyncio.Event().wait()  # until stop() cancels this connection
                    return
                if isinstance(answer, _Close):
                    return
                if more_to_come:
                    continue
                build = _op_msg if opcode == OP_MSG else _op_reply
                writer.write(build(next(self._request_ids), request_id, answer))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._tasks.discard(task)


@contextlib.contextmanager
def hello_as(server: WireServer, **changes: Any) -> Iterator[None]:
    """Change the default ``hello`` for a block (e.g. ``topology="secondary"``)."""
    before = {key: getattr(server.hello, key) for key in changes}
    for key, value in changes.items():
        setattr(server.hello, key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            setattr(server.hello, key, value)

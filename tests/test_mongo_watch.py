"""MongoStore's change-feed iterator against PyMongo's own change-stream logic. FAKES.

No MongoDB server runs here, so these tests use a fake *cursor* under PyMongo's real
``AsyncChangeStream``: ``try_next()``, ``_resume()``, ``close()`` and ``alive`` are the
installed driver's code (the store loops on ``try_next()`` under ``alive``, as ``next()``
does), and only the server's replies are scripted. ``ScriptedCursor``
reproduces ``AsyncCommandCursor``'s reactions (pymongo/asynchronous/command_cursor.py):

* a batch whose cursor id is 0 (the server closed it, as after an ``invalidate``): the
  cursor stays ``alive`` until its buffered documents are consumed, then it is dead and
  the change stream marks itself closed, so the next ``next()`` raises StopAsyncIteration;
* an ``OperationFailure`` with ``timeout`` (code 50, what ``timeoutMS`` produces on an idle
  getMore): the cursor dies without closing the stream, which resumes on the next call;
* a ``ConnectionFailure``: the cursor is killed; the stream resumes once inside
  ``try_next`` and raises only if that resume fails too;
* anything else: the cursor closes and the change stream closes itself.
"""

from __future__ import annotations

import asyncio
from collections import deque
from types import SimpleNamespace
from typing import Any

import pytest
from bson import ObjectId
from pymongo.asynchronous.change_stream import AsyncChangeStream
from pymongo.errors import AutoReconnect, ExecutionTimeout, OperationFailure, ServerSelectionTimeoutError
from test_mongo_evaluator import evaluator_store

from monque_engine.errors import ChangeFeedHistoryLostError, ChangeFeedUnsupportedError, ConnectionError
from monque_engine.job import JobStatus

BLOCK = object()  # the getMore waits for a change that never comes (until close)


class ScriptedCursor:
    """Replies of one server cursor: each step is ("batch", docs, cursor_closed),
    ("raise", exception) or BLOCK."""

    def __init__(self, *steps: Any) -> None:
        self.steps = deque(steps)
        self.data: deque[Any] = deque()
        self.killed = False
        self._post_batch_resume_token = None
        self._closed_event = asyncio.Event()

    @property
    def alive(self) -> bool:
        return bool(self.data) or not self.killed

    def _has_next(self) -> bool:
        return bool(self.data)

    async def close(self) -> None:
        self.killed = True
        self._closed_event.set()

    async def _try_next(self, get_more_allowed: bool) -> Any:
        if not self.data and not self.killed and get_more_allowed:
            await self._get_more()
        return self.data.popleft() if self.data else None

    async def _get_more(self) -> None:
        step = self.steps.popleft() if self.steps else BLOCK
        if step is BLOCK:
            await self._closed_event.wait()
            return
        kind, *rest = step
        if kind == "batch":
            docs, closed = rest
            self.data.extend(docs)
            if closed:
                self.killed = True
            return
        error = rest[0]
        # command_cursor._send_message: what each failure does to the cursor
        if isinstance(error, OperationFailure) and error.timeout:
            self.killed = True  # _die_no_lock
        else:
            await self.close()
        raise error


class DriverStream(AsyncChangeStream[Any]):
    """PyMongo's AsyncChangeStream with scripted cursors instead of aggregate commands."""

    def __init__(self, *cursors: ScriptedCursor) -> None:  # no super().__init__: no target
        self.cursors = deque(cursors)
        self.opened = 0
        self._closed = False
        self._timeout = None
        self._decode_custom = False
        self._resume_token = None
        self._start_at_operation_time = None
        self._uses_start_after = False
        self._uses_resume_after = False
        self._cursor = self.cursors.popleft()

    async def _create_cursor(self) -> Any:  # what _resume() calls
        self.opened += 1
        if not self.cursors:
            raise ServerSelectionTimeoutError("No servers found yet, Timeout: 30s")
        return self.cursors.popleft()


def _change(n: int, op: str = "insert") -> dict[str, Any]:
    doc = {"_id": ObjectId(f"65f0{n:020x}"), "name": "email", "status": "pending"}
    return {"_id": {"_data": f"{n:04d}"}, "operationType": op, "documentKey": {"_id": doc["_id"]}, "fullDocument": doc}


INVALIDATE = {"_id": {"_data": "ffff"}, "operationType": "invalidate"}


async def _open(stream: DriverStream, timeout_s: float | None = 5.0, **kwargs: Any) -> Any:
    """``timeout_s``: the client's timeoutMS (what ``client.options.timeout`` says), set by
    default, as the idle-timeout tests below assume a URL with timeoutMS."""
    store, adapter = evaluator_store()
    adapter.database = SimpleNamespace(client=SimpleNamespace(options=SimpleNamespace(timeout=timeout_s)))  # type: ignore[attr-defined]
    seen: list[Any] = []

    async def watch(pipeline: Any, **options: Any) -> Any:
        seen.append((pipeline, options))
        return stream

    adapter.watch = watch  # type: ignore[attr-defined]
    return store, await store.open_watch(**kwargs), seen


async def test_invalidate_raises_history_lost_so_the_caller_drops_its_token() -> None:
    """Issue 11 item 1: a drop or rename sends ``invalidate`` and closes the cursor. The
    store must not end quietly (the scheduler would call that "store closed" and stay
    "live"): it raises ChangeFeedHistoryLostError, on which the feed loop reopens
    without the token."""
    stream = DriverStream(ScriptedCursor(("batch", [_change(1), INVALIDATE], True)))
    _store, events, seen = await _open(stream, statuses=(JobStatus.PENDING,))
    first = await anext(events)
    assert first.token == {"_data": "0001"}
    with pytest.raises(ChangeFeedHistoryLostError, match="dropped or renamed") as info:
        await anext(events)
    assert "without the old resume token" in str(info.value)
    assert stream._closed  # PyMongo closed it itself once the cursor died
    assert any("invalidate" in str(stage) for stage in seen[0][0])  # the $match lets it through


async def test_end_of_stream_while_not_closing_is_a_connection_error() -> None:
    """Issue 11 item 1: a server that closes the cursor without an event we saw (e.g. an
    invalidate filtered by an older pipeline) ends PyMongo's stream with
    StopAsyncIteration; that is a failure to report, not a quiet end."""
    stream = DriverStream(ScriptedCursor(("batch", [_change(1)], True)))
    _store, events, _ = await _open(stream)
    assert (await anext(events)).job_id == str(_change(1)["documentKey"]["_id"])
    with pytest.raises(ConnectionError, match="ended: the server closed its cursor"):
        await anext(events)


async def test_end_of_stream_after_store_close_just_ends() -> None:
    stream = DriverStream(ScriptedCursor(BLOCK))
    store, events, _ = await _open(stream)
    pending = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0)  # let it reach the getMore
    await store.close()
    with pytest.raises(StopAsyncIteration):
        await pending
    assert stream._closed


async def test_idle_timeout_is_no_change_yet() -> None:
    """Issue 11 item 4: with ``timeoutMS`` in the URL each ``next()`` is bounded, so an idle
    stream gets ExecutionTimeout (code 50). PyMongo keeps the stream open and resumes on
    the next call; the store must keep waiting instead of failing the feed."""
    idle = ExecutionTimeout("operation exceeded time limit", 50)
    stream = DriverStream(
        ScriptedCursor(("raise", idle)),
        ScriptedCursor(("raise", idle)),
        ScriptedCursor(("batch", [_change(2)], False), BLOCK),
    )
    store, events, _ = await _open(stream)
    event = await anext(events)
    assert event.token == {"_data": "0002"} and stream.opened == 2  # resumed twice, no error
    await store.close()


async def test_empty_batches_are_waited_through_without_resuming() -> None:
    """An idle stream's getMores come back empty (the server waited maxAwaitTimeMS). Each
    try_next() has its own timeoutMS budget, so quiet periods cost no resume at all."""
    stream = DriverStream(
        ScriptedCursor(("batch", [], False), ("batch", [], False), ("batch", [_change(4)], False), BLOCK)
    )
    store, events, _ = await _open(stream)
    assert (await anext(events)).token == {"_data": "0004"} and stream.opened == 0
    await store.close()


async def test_timeout_that_loses_the_server_is_still_an_error() -> None:
    """A resume that cannot select a server is not idleness: it is reported."""
    stream = DriverStream(ScriptedCursor(("raise", ExecutionTimeout("operation exceeded time limit", 50))))
    _store, events, _ = await _open(stream)
    with pytest.raises(ConnectionError, match="Cannot reach") as info:
        await anext(events)
    assert isinstance(info.value.__cause__, ServerSelectionTimeoutError)


async def test_network_error_resumes_inside_the_driver_then_reports() -> None:
    """A dropped connection is resumed once by PyMongo itself (no error reaches us); a
    second failure during that resume arrives as ConnectionError."""
    stream = DriverStream(
        ScriptedCursor(("raise", AutoReconnect("connection reset"))),
        ScriptedCursor(("batch", [_change(3)], False), ("raise", AutoReconnect("reset again"))),
    )
    _store, events, _ = await _open(stream)
    assert (await anext(events)).token == {"_data": "0003"}
    with pytest.raises(ConnectionError, match="read the change stream"):
        await anext(events)


async def test_standalone_server_raises_change_feed_unsupported_at_open() -> None:
    """Issue 11 item 10: error 40573 is permanent; the store says so with its own type
    (a ConnectionError subclass) so the feed loop falls back once and stops retrying."""
    store, adapter = evaluator_store()

    async def watch(*args: Any, **kwargs: Any) -> Any:
        raise OperationFailure("The $changeStream stage is only supported on replica sets", code=40573)

    adapter.watch = watch  # type: ignore[attr-defined]
    with pytest.raises(ChangeFeedUnsupportedError, match="standalone server") as info:
        await store.open_watch()
    assert isinstance(info.value, ConnectionError) and "s3cret" not in str(info.value)

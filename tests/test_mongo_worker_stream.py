"""What a worker's change stream asks of MongoDB, and what the scheduler does with what it
gets (issue 36 items 2 and 6). FAKES, in two layers:

* the pipeline documents are evaluated by mongomock (a query-language evaluator, not a
  change stream): which recorded change documents pass the ``$match`` and what the
  ``$project`` leaves of them;
* the stream is PyMongo's real ``AsyncChangeStream`` over scripted cursor replies (see
  test_mongo_watch.py), read by the real store, and routed by the real scheduler.

What a server sends for a bulk retry (an update event whose ``updatedFields`` hold only
what the update set, and no ``fullDocument`` without ``updateLookup``) is from the MongoDB
manual's change events page (https://www.mongodb.com/docs/manual/reference/change-events/update/).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mongomock
import pytest
from bson import ObjectId
from test_mongo_changes import DOC, RECORDED, T0, T1, TOKEN, _evaluate
from test_mongo_watch import BLOCK, DriverStream, ScriptedCursor, _open

from monque_engine import ChangeEvent, JobStatus, Monque
from monque_engine.scheduler.lifecycle import WAKE_JITTER_MAX_S
from monque_engine.store.mongo.changes import watch_pipeline
from monque_engine.store.mongo.documents import STOP_REQUEST_FIELD
from monque_engine.store.mongo.feed import MongoFeed
from monque_engine.store.sqlite import SqliteStore

ATTEMPTS = [{"error": "x" * 16_000, "n": n} for n in range(10)]
#: The events a worker's stream must tell apart, as a server sends them without a lookup.
WORKER_RECORDED = [
    *RECORDED,
    {"label": "insert-sms", "operationType": "insert", "fullDocument": {**DOC, "name": "sms"}},
    {"label": "replace-sms", "operationType": "replace", "fullDocument": {**DOC, "name": "sms"}},
    {
        "label": "bulk-retry",  # no fullDocument: no updateLookup
        "operationType": "update",
        "documentKey": {"_id": DOC["_id"]},
        "updateDescription": {
            "updatedFields": {"status": "pending", "nextRunAt": T1, "failCount": 0, "updatedAt": T0},
            "removedFields": ["failReason"],
        },
    },
    {
        "label": "stop-request",  # issue 37: a request to stop a running job of another name
        "operationType": "update",
        "documentKey": {"_id": DOC["_id"]},
        "updateDescription": {"updatedFields": {STOP_REQUEST_FIELD: T1, "updatedAt": T0}},
    },
]


def test_the_worker_stream_filters_inserts_by_name_and_keeps_what_carries_no_name() -> None:
    pipeline = watch_pipeline(False, (JobStatus.PENDING,), ("email",))
    assert _evaluate(pipeline, WORKER_RECORDED) == [
        "insert",
        "reschedule",
        "retry-backoff",
        "invalidate",
        "bulk-retry",
        "stop-request",
    ]
    # Without names (a caller that did not say) nothing is dropped by name.
    assert {"insert-sms", "replace-sms"} <= set(_evaluate(watch_pipeline(False, (JobStatus.PENDING,)), WORKER_RECORDED))


def test_a_stop_request_passes_whatever_the_names_and_statuses() -> None:
    """However the worker's stream is narrowed, an update that sets the stop-request field
    reaches it: the owner of the running job must hear it (the job is processing, of any name)."""
    for names in (("email",), ("other",), ()):
        for statuses in ((JobStatus.PENDING,), (JobStatus.COMPLETED,)):
            assert "stop-request" in _evaluate(watch_pipeline(False, statuses, names), WORKER_RECORDED)


def test_the_worker_stream_is_projected_down_to_a_wake_up() -> None:
    """A bulk retry's event carried each job's attempt history (10 records of up to 16 KB)
    to every worker; what passes now is the token, the operation, the key and the fields a
    wake-up reads."""
    c = mongomock.MongoClient().db.changes
    retry = {
        "_id": TOKEN,
        "operationType": "update",
        "documentKey": {"_id": DOC["_id"]},
        "updateDescription": {
            "updatedFields": {"status": "pending", "nextRunAt": T1, "attempts": ATTEMPTS, "failReason": "boom"},
            "removedFields": [],
        },
    }
    insert = {
        "_id": {"_data": "02"},
        "operationType": "insert",
        "documentKey": {"_id": DOC["_id"]},
        "fullDocument": {**DOC, "attempts": ATTEMPTS},
    }
    c.insert_many([retry, insert])
    out = list(c.aggregate(watch_pipeline(False, (JobStatus.PENDING,), ("email",))))
    assert out[0] == {
        "_id": TOKEN,
        "operationType": "update",
        "documentKey": {"_id": DOC["_id"]},
        "updateDescription": {"updatedFields": {"status": "pending", "nextRunAt": T1.replace(tzinfo=None)}},
    }
    assert out[1]["fullDocument"] == {"name": "email", "status": "pending", "nextRunAt": T1.replace(tzinfo=None)}
    assert len(repr(out)) < 1_000


async def test_the_store_opens_the_worker_stream_without_a_lookup_and_with_its_names() -> None:
    _store, _events, seen = await _open(
        DriverStream(ScriptedCursor(BLOCK)), full_document=False, statuses=(JobStatus.PENDING,), names=("email",)
    )
    pipeline, options = seen[0]
    assert options["full_document"] is None
    assert pipeline == watch_pipeline(False, (JobStatus.PENDING,), ("email",))
    assert "email" in str(pipeline[0])


def _no_name_retry(n: int) -> dict[str, Any]:
    return {
        "_id": {"_data": f"{n:04d}"},
        "operationType": "update",
        "documentKey": {"_id": ObjectId(f"65f0{n:020x}")},
        "updateDescription": {"updatedFields": {"status": "pending"}},
    }


async def test_a_pending_update_without_a_name_wakes_every_registered_name(tmp_path: Path) -> None:
    """Through the driver's stream, the store's mapping and the scheduler's routing: the
    narrowed event names no job, so every registered name is woken (each one's claim then
    finds the job or nothing), and a stop request wakes nobody but goes to the processor,
    which cancels the job's handler if it runs there."""
    stop_request = {**_no_name_retry(2), "updateDescription": {"updatedFields": {STOP_REQUEST_FIELD: T1}}}
    stream = DriverStream(ScriptedCursor(("batch", [_no_name_retry(1), stop_request], False), BLOCK))
    store, events, _ = await _open(stream, full_document=False, statuses=(JobStatus.PENDING,), names=("a", "b"))
    retry, stop = await anext(events), await anext(events)
    assert (retry.operation, retry.name, retry.status) == ("update", None, JobStatus.PENDING)
    assert (stop.operation, stop.name, stop.status, stop.next_run_at_ms) == ("update", None, None, None)
    await store.close()

    monque = Monque(f"sqlite:///{tmp_path / 'jobs.db'}")
    woken: list[str | None] = []
    for name in ("a", "b"):
        monque.register(name, lambda job: None)
    monque._processor.wake = woken.append  # type: ignore[method-assign, assignment]
    monque._lifecycle._on_change(retry)
    assert sorted(woken, key=str) == ["a", "b"]
    woken.clear()
    heard: list[str] = []
    monque._processor.stop_heard = heard.append  # type: ignore[method-assign]
    monque._lifecycle._on_change(stop)
    assert woken == [] and stop.stop_requested and heard == [stop.job_id]  # the owner hears it (issue 37)


class _Loop:
    """Records ``call_later`` instead of scheduling (the jitter's delay, without waiting it)."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, Any, tuple[Any, ...]]] = []

    def call_later(self, delay: float, callback: Any, *args: Any) -> None:
        self.calls.append((delay, callback, args))


async def test_a_feed_wake_is_jittered_within_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker of a name hears the same insert at once: on MongoDB each wake-up is
    delayed by a random 0 … ``wake_jitter_s`` (capped at ``WAKE_JITTER_MAX_S``), so 20
    workers do not race for the same first document."""

    class JitteredStore(SqliteStore):
        wake_jitter_s = 10.0  # asks for far more than the bound

    monque = Monque(JitteredStore.from_url(f"sqlite:///{tmp_path / 'jobs.db'}"))
    lifecycle = monque._lifecycle
    assert lifecycle.wake_jitter == WAKE_JITTER_MAX_S
    assert 0 < MongoFeed.wake_jitter_s <= WAKE_JITTER_MAX_S
    monque.register("a", lambda job: None)
    woken: list[str | None] = []
    monque._processor.wake = woken.append  # type: ignore[method-assign, assignment]
    loop = _Loop()
    with monkeypatch.context() as patch:
        patch.setattr(asyncio, "get_running_loop", lambda: loop)
        for drawn in ("low", "high"):  # the random draw at either end of its range
            lifecycle._random.uniform = lambda low, high, drawn=drawn: low if drawn == "low" else high  # type: ignore[method-assign]
            lifecycle._on_change(ChangeEvent("insert", "65f000000000000000000001", None, None, "a", JobStatus.PENDING))
    assert woken == ["a"]  # a draw of 0: at once
    assert [(delay, args) for delay, _, args in loop.calls] == [(WAKE_JITTER_MAX_S, ("a",))]
    for _, callback, args in loop.calls:
        callback(*args)
    assert woken == ["a", "a"]


class _RecordingStore(SqliteStore):
    """SQLite, recording what each ``open_watch`` asked for (names and resume token)."""

    opens: list[tuple[Any, Any]]

    async def open_watch(self, resume_after: Any = None, **kwargs: Any) -> AsyncIterator[ChangeEvent]:
        self.opens.append((resume_after, kwargs.get("names")))
        return await super().open_watch(resume_after, **kwargs)


async def until(predicate: Any, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def test_a_name_registered_while_running_reopens_the_stream_with_it(tmp_path: Path) -> None:
    """The stream is narrowed to the registered names, so a name registered after start
    would hear its inserts only at the next poll: the stream reopens (from where it got
    to) with the new names, and the watch stays live without a new ``connected``."""
    store = _RecordingStore.from_url(f"sqlite:///{tmp_path / 'jobs.db'}")
    assert isinstance(store, _RecordingStore)
    store.opens = []
    monque = Monque(store, poll_interval=3600, safety_poll_interval=3600)
    connected: list[Any] = []
    monque.on("changestream:connected", connected.append)
    monque.register("a", lambda job: None)
    await monque.initialize()
    await monque.start()
    try:
        assert store.opens == [(None, ("a",))]
        await monque.enqueue("a", {})
        await until(lambda: monque._lifecycle._watch is not None and monque._lifecycle._watch.token is not None)
        token = monque._lifecycle._watch.token  # type: ignore[union-attr]
        ran = asyncio.Event()
        monque.register("b", lambda job: ran.set())
        await until(lambda: len(store.opens) == 2)
        assert store.opens[1] == (token, ("a", "b"))
        await until(lambda: monque.feed_state == "live")
        assert len(connected) == 1
        await monque.enqueue("b", {})
        async with asyncio.timeout(10):
            await ran.wait()  # heard on the feed: the poll is an hour away
    finally:
        await monque.stop()

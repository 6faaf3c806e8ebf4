"""Events: on / once / off, async listeners, and listeners that raise."""

from __future__ import annotations

import asyncio

import pytest

from monque_engine import JobStatus
from monque_engine.events import EVENT_NAMES, EventEmitter


def test_on_once_off_unit():
    emitter = EventEmitter()
    calls = []
    a = emitter.on("job:start", lambda p: calls.append(("a", p)))
    emitter.once("job:start", lambda p: calls.append(("once", p)))
    assert emitter.emit("job:start", 1) is True
    assert emitter.emit("job:start", 2) is True
    assert calls == [("a", 1), ("once", 1), ("a", 2)]
    emitter.off("job:start", a)
    assert emitter.emit("job:start", 3) is False
    assert calls == [("a", 1), ("once", 1), ("a", 2)]
    emitter.on("job:fail", lambda p: calls.append(("f1", p)))
    emitter.on("job:fail", lambda p: calls.append(("f2", p)))
    emitter.off("job:fail")
    assert emitter.emit("job:fail", 4) is False
    emitter.off("job:fail", lambda p: None)  # removing an unknown listener is harmless


def test_unknown_event_names_are_refused():
    emitter = EventEmitter()
    with pytest.raises(ValueError, match="Unknown event"):
        emitter.on("job:started", lambda p: None)
    with pytest.raises(ValueError):
        emitter.once("nope", lambda p: None)
    assert {
        "job:start",
        "job:complete",
        "job:fail",
        "job:error",
        "stale:recovered",
        "job:retried",
        "jobs:deleted",
        "changestream:fallback",
    } <= EVENT_NAMES


def test_same_listener_registered_twice_is_called_twice_and_removed_once():
    emitter = EventEmitter()
    calls = []

    def listener(p):
        calls.append(p)

    emitter.on("job:start", listener)
    emitter.on("job:start", listener)
    emitter.emit("job:start", 1)
    assert calls == [1, 1]
    emitter.off("job:start", listener)
    emitter.emit("job:start", 2)
    assert calls == [1, 1, 2]


async def test_async_listener_is_awaited():
    emitter = EventEmitter()
    done = asyncio.Event()

    async def listener(payload):
        await asyncio.sleep(0)
        done.set()

    emitter.on("job:cancelled", listener)
    emitter.emit("job:cancelled", None)
    await asyncio.wait_for(done.wait(), 2)


async def test_monque_on_once_off(monque, recorder):
    m = await monque()
    seen = []
    listener = m.on("job:cancelled", lambda e: seen.append(("on", e.job.id)))
    m.once("job:cancelled", lambda e: seen.append(("once", e.job.id)))
    a = await m.enqueue("x")
    b = await m.enqueue("x")
    c = await m.enqueue("x")
    await m.cancel_job(a.id)
    await m.cancel_job(b.id)
    m.off("job:cancelled", listener)
    await m.cancel_job(c.id)
    assert seen == [("on", a.id), ("once", a.id), ("on", b.id)]
    with pytest.raises(ValueError):
        m.on("job:bogus", lambda e: None)


async def test_raising_listeners_do_not_break_processing(monque, recorder, caplog):
    # The failed job's retry is due far away: with the suite's 10 ms base it could start a
    # third time before the assertions on exactly two starts (seen under load).
    m = await monque(base_retry_interval=60)
    rec = recorder(m, "job:complete", "job:fail")
    after = []

    def bad_sync(event):
        raise RuntimeError("listener bug")

    async def bad_async(event):
        raise RuntimeError("async listener bug")

    for event in ("job:start", "job:complete", "job:fail"):
        m.on(event, bad_sync)
        m.on(event, bad_async)
    m.on("job:start", lambda job: after.append(job.id))  # registered after the raising ones

    async def handler(job):
        if job.data == "fail":
            raise ValueError("handler failure")

    m.register("w", handler)
    ok = await m.enqueue("w", "ok")
    bad = await m.enqueue("w", "fail")
    await m.start()
    (complete,) = await rec.wait_for("job:complete")
    (fail,) = await rec.wait_for("job:fail")
    assert complete.job.id == ok.id and complete.job.status is JobStatus.COMPLETED
    assert fail.job.id == bad.id and fail.job.fail_count == 1
    assert sorted(after) == sorted([ok.id, bad.id])
    assert (await m.get_job(ok.id)).status is JobStatus.COMPLETED
    assert any("listener" in r.getMessage() or r.exc_info for r in caplog.records)


async def test_raising_listener_does_not_break_management(monque):
    m = await monque()
    m.on("job:cancelled", lambda e: 1 / 0)
    job = await m.enqueue("x")
    cancelled = await m.cancel_job(job.id)
    assert cancelled.status is JobStatus.CANCELLED


def test_event_map_names_every_event_once() -> None:
    """The typed map (upstream's MonqueEventMap), the EventName Literal and the run-time check
    list the same 17 names, so a listener annotated from the map fits what ``emit`` sends."""
    from typing import get_type_hints

    from monque_engine.events import JobCompleteEvent, MonqueEventMap
    from monque_engine.job import Job

    assert set(MonqueEventMap.__annotations__) == EVENT_NAMES and len(EVENT_NAMES) == 17
    hints = get_type_hints(MonqueEventMap, localns={"Job": Job})
    assert hints["job:start"] is Job and hints["job:complete"] is JobCompleteEvent

"""Upstream parity: the event surface (``events.test.ts``; Monque is a Node EventEmitter).

Upstream tests add and remove listeners with ``on`` / ``once`` / ``off`` (covered in
test_events) and, as any EventEmitter, count and clear them with
``listenerCount`` / ``removeAllListeners``: ours are ``listener_count`` /
``remove_all_listeners``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from monque_engine import ChangeEvent, ConnectionError, JobStatus, ResilientWatch


async def test_listener_count_and_remove_all_listeners(monque, wait_until):
    m = await monque()
    seen: list[str] = []

    def on_start(job):
        seen.append("start")

    m.on("job:start", on_start)
    m.once("job:start", on_start)
    m.on("job:complete", lambda event: seen.append("complete"))
    assert (m.listener_count("job:start"), m.listener_count("job:complete"), m.listener_count("job:fail")) == (2, 1, 0)
    m.remove_all_listeners("job:start")
    assert (m.listener_count("job:start"), m.listener_count("job:complete")) == (0, 1)
    m.remove_all_listeners()
    assert m.listener_count("job:complete") == 0

    async def handler(job):
        return None

    m.register("quiet", handler)
    job = await m.enqueue("quiet", {})
    await m.start()
    await wait_until(lambda: _completed(m, job.id), message="the job ran")
    assert seen == []  # nothing left listening


async def _completed(m, job_id):
    job = await m.get_job(job_id)
    return job is not None and job.status is JobStatus.COMPLETED


async def test_no_change_stream_reconnect_after_stop():
    """Upstream change-streams.test.ts: a reconnect scheduled before stop() never happens.
    The store here is a fake standing in for ``open_watch`` only (not MongoDB): its first
    open fails, so the watch waits to reconnect; stop() during that wait ends the watch's
    task (awaited), so no later open can happen and nothing is reported connected."""

    class FailingOnce:
        def __init__(self) -> None:
            self.opens = 0

        async def open_watch(self, resume_after: Any = None, **_: Any) -> AsyncIterator[ChangeEvent]:
            self.opens += 1
            raise ConnectionError("connection refused")

    store = FailingOnce()
    events: list[str] = []
    watch = ResilientWatch(
        store, lambda change: None, lambda event: events.append(event.kind), reconnect_delays=(3600.0,)
    )  # type: ignore[arg-type]
    await watch.start()
    async with asyncio.timeout(5):
        while watch.state != "reconnecting":
            await asyncio.sleep(0.005)
    await watch.stop()
    assert watch.state == "stopped" and store.opens == 1
    await watch.wait()  # nothing left running that could reopen
    assert store.opens == 1 and "connected" not in events


async def test_the_fallback_reason_says_the_reconnection_attempts_were_exhausted():
    """change-streams.test.ts: the ``changestream:fallback`` reason contains 'Exhausted' and
    'reconnection attempts' once the reconnects are used up. Fake ``open_watch`` (not
    MongoDB) that always fails; no reconnect delay."""

    class AlwaysFailing:
        async def open_watch(self, resume_after: Any = None, **_: Any) -> AsyncIterator[ChangeEvent]:
            raise ConnectionError("connection refused")

    seen: list[Any] = []
    watch = ResilientWatch(
        AlwaysFailing(),
        lambda change: None,
        seen.append,
        reconnect_delays=(0.0, 0.0, 0.0),
        fallback_retry_interval=3600.0,
    )  # type: ignore[arg-type]
    await watch.start()
    try:
        async with asyncio.timeout(5):
            while not any(event.kind == "fallback" for event in seen):
                await asyncio.sleep(0.005)
    finally:
        await watch.stop()
    (fallback,) = [event for event in seen if event.kind == "fallback"]
    assert "Exhausted 3 reconnection attempts" in fallback.reason and "connection refused" in fallback.reason

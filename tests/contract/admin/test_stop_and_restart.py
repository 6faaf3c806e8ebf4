"""Upstream parity: shutdown and lifecycle events.

Cases translated from upstream Monque's ``tests/integration/shutdown.test.ts`` and
``events.test.ts`` that the other contract files did not cover: the change feed is closed
(``changestream:closed``) as stop() begins, before it waits for in-flight jobs; stop() is
safe to call concurrently and before start(); start() after stop() serves jobs again;
``once`` fires a single time across several jobs.
"""

from __future__ import annotations

import asyncio

from monque_engine import JobStatus, ShutdownTimeoutError


async def test_the_feed_closes_as_stop_begins_and_stop_then_waits_for_every_job(monque, recorder, wait_until):
    """shutdown.test.ts 'should wait for multiple in-progress jobs to complete': stop()
    emits ``changestream:closed`` first, then resolves only after the last job finished."""
    m = await monque(shutdown_timeout=5, worker_concurrency=3)
    rec = recorder(m, "changestream:connected", "changestream:closed", "job:complete")
    release, release_second = asyncio.Event(), asyncio.Event()
    started: set[int] = set()

    async def handler(job):
        started.add(job.data["order"])
        await (release_second if job.data["order"] == 3 else release).wait()

    m.register("first", handler)
    m.register("second", handler)
    await m.enqueue("first", {"order": 1})
    await m.enqueue("first", {"order": 2})
    await m.enqueue("second", {"order": 3})
    await m.start()
    await rec.wait_for("changestream:connected")
    await wait_until(lambda: len(started) == 3)

    closed = asyncio.Event()
    m.once("changestream:closed", lambda _payload: closed.set())
    stopping = asyncio.create_task(m.stop())
    await asyncio.wait_for(closed.wait(), 5)
    assert not stopping.done()
    assert rec.of("job:complete") == []

    release.set()
    await rec.wait_for("job:complete", count=2)
    assert not stopping.done()  # the third job still holds stop()
    release_second.set()
    await stopping
    assert sorted(e.job.data["order"] for e in rec.of("job:complete")) == [1, 2, 3]
    assert len(rec.of("changestream:closed")) == 1
    assert not m.is_healthy()


async def test_concurrent_stops_and_a_stop_before_start_are_safe(monque):
    """'should return immediately if already stopped' and 'should allow calling stop()
    multiple times safely'."""
    m = await monque()
    await m.stop()  # never started
    await m.start()
    assert m.is_healthy()
    results = await asyncio.gather(m.stop(), m.stop(), m.stop())
    assert results == [None, None, None]
    assert not m.is_healthy()


async def test_start_after_stop_serves_jobs_again(monque, wait_until):
    """A stopped instance can be started again (upstream's start() after stop())."""
    m = await monque()
    seen: list[int] = []
    m.register("job", lambda job: seen.append(job.data))
    await m.start()
    await m.enqueue("job", 1)
    await wait_until(lambda: seen == [1])
    await m.stop()
    late = await m.enqueue("job", 2)
    assert (await m.get_job(late.id)).status is JobStatus.PENDING  # not picked up while stopped
    await m.start()
    await wait_until(lambda: seen == [1, 2])


async def test_shutdown_timeout_lists_the_incomplete_jobs_with_their_payloads(monque, recorder):
    """'should include incompleteJobs array in ShutdownTimeoutError'."""
    m = await monque(shutdown_timeout=0.2)
    rec = recorder(m, "job:error")
    entered = asyncio.Event()

    async def handler(job):
        entered.set()
        await asyncio.Event().wait()

    m.register("long", handler)
    await m.enqueue("long", {"data": "incomplete"})
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    await m.stop()  # emits the timeout, does not raise it (as upstream's stop(), which never throws)
    errors = [e.error for e in rec.of("job:error") if isinstance(e.error, ShutdownTimeoutError)]
    assert len(errors) == 1
    (job,) = errors[0].incomplete_jobs
    assert job.data == {"data": "incomplete"}


async def test_once_fires_a_single_time_across_several_jobs_and_off_stops_a_listener(monque, wait_until):
    """events.test.ts 'should fire listener only once with once()' and 'should remove
    listener with off()'."""
    m = await monque()
    once_events: list[object] = []
    start_events: list[object] = []
    m.once("job:complete", once_events.append)
    listener = m.on("job:start", start_events.append)
    m.register("job", lambda job: None)
    await m.start()
    await m.enqueue("job", 1)
    await wait_until(lambda: len(start_events) == 1)
    m.off("job:start", listener)
    for i in range(2, 4):
        await m.enqueue("job", i)

    async def all_done():
        return len(await m.get_jobs(status="completed")) == 3

    await wait_until(all_done)
    assert len(once_events) == 1
    assert len(start_events) == 1

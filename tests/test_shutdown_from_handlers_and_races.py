"""``stop()`` / ``close()`` called from a handler, racing each other or ``initialize()`` /
``start()``, or called after ``close()``: each returns, nothing waits for itself (found by
acceptance probe round 5).

``stop()`` waits for in-flight handlers. Called from one of this instance's own handlers
(a "shut the worker down" job, or a sync handler that hands ``stop()`` to the loop), it
waited for its caller: nothing moved until ``shutdown_timeout``, then the caller was
cancelled and its job left ``processing`` with a ``shutdown`` attempt, to be recovered as
stale and run again (and stop the worker again). Now such a call starts the shutdown and
returns at once; the shutdown (and, for ``close()``, the store's closing) completes when the
handlers have returned and their outcomes are written.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from monque_engine import ConnectionError, JobStatus, Monque
from tests.conftest import SHORT_INTERVALS, poll_until

#: Long enough that, before the fix, the caller is cancelled by the timeout, not by the test.
OPTIONS: dict[str, Any] = {**SHORT_INTERVALS, "shutdown_timeout": 1.0}


async def _opened(tmp_path: Path) -> Monque:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **OPTIONS)
    await m.initialize()
    return m


@pytest.mark.parametrize("call", ["stop", "close"])
async def test_stop_or_close_awaited_in_an_async_handler_lets_that_handler_finish(tmp_path: Path, call: str) -> None:
    m = await _opened(tmp_path)
    after_call = asyncio.Event()

    async def shut_down(job: Any) -> None:
        await getattr(m, call)()
        after_call.set()  # reached only if the call returned rather than cancelling us

    m.register("shutdown", shut_down)
    await m.start()
    job = await m.enqueue("shutdown", None)
    await asyncio.wait_for(after_call.wait(), 30)
    await m.close()  # from outside: waits for the shutdown the handler started

    reopened = await _opened(tmp_path)
    try:
        stored = await reopened.get_job(job.id)
        assert stored is not None
        assert stored.status is JobStatus.COMPLETED, [a.outcome for a in stored.attempts]
        assert [a.outcome for a in stored.attempts] == ["completed"]
    finally:
        await reopened.close()


async def test_stop_handed_to_the_loop_by_a_sync_handler_returns_and_the_job_completes(tmp_path: Path) -> None:
    m = await _opened(tmp_path)
    loop = asyncio.get_running_loop()
    outcome: list[str] = []

    def shut_down(job: Any) -> None:
        future = asyncio.run_coroutine_threadsafe(m.stop(), loop)
        try:
            future.result(30)
            outcome.append("returned")
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion
            outcome.append(type(error).__name__)

    m.register("shutdown", shut_down)
    await m.start()
    job = await m.enqueue("shutdown", None)
    await poll_until(lambda: outcome, 30, "the sync handler's stop() call ended")
    assert outcome == ["returned"]
    await m.stop()
    assert not m.is_running
    stored = await m.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.COMPLETED
    await m.close()


async def test_close_from_a_handler_closes_the_store_after_the_outcome_is_written(tmp_path: Path) -> None:
    m = await _opened(tmp_path)
    closed_called = asyncio.Event()

    async def shut_down(job: Any) -> None:
        await m.close()
        # Still usable until this handler returns: the store closes after its outcome.
        await m.enqueue("later", {"from": job.id})
        closed_called.set()

    m.register("shutdown", shut_down)
    await m.start()
    await m.enqueue("shutdown", None)
    await asyncio.wait_for(closed_called.wait(), 30)
    await m.close()
    with pytest.raises(ConnectionError, match="closed"):
        await m.get_jobs()

    reopened = await _opened(tmp_path)
    try:
        statuses = {job.name: job.status for job in await reopened.get_jobs()}
        assert statuses == {"shutdown": JobStatus.COMPLETED, "later": JobStatus.PENDING}
    finally:
        await reopened.close()


async def test_calls_after_close_say_it_was_closed_and_initialize_reopens(tmp_path: Path) -> None:
    m = await _opened(tmp_path)
    await m.enqueue("t", 1)
    await m.close()
    await m.close()  # twice: nothing to do
    for call in (m.enqueue("t", 2), m.get_jobs(), m.start()):
        with pytest.raises(ConnectionError, match=r"Monque is closed \(close\(\) was called\).*initialize\(\)"):
            await call
    await m.initialize()
    try:
        assert len(await m.get_jobs()) == 1
    finally:
        await m.close()


async def test_a_monque_never_initialized_still_says_so(tmp_path: Path) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.stop()
    await m.close()  # before initialize: nothing to do
    with pytest.raises(ConnectionError, match="not initialized"):
        await m.enqueue("t", 1)


async def test_concurrent_stop_and_close_calls_all_return(tmp_path: Path) -> None:
    m = await _opened(tmp_path)
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow(job: Any) -> None:
        started.set()
        await release.wait()

    m.register("slow", slow)
    await m.start()
    job = await m.enqueue("slow", None)
    await asyncio.wait_for(started.wait(), 30)
    calls = asyncio.gather(m.stop(), m.close(), m.stop(), m.close())
    await poll_until(lambda: not m.is_running, 10, "claiming stopped")
    release.set()
    await asyncio.wait_for(calls, 30)
    reopened = await _opened(tmp_path)
    try:
        stored = await reopened.get_job(job.id)
        assert stored is not None and stored.status is JobStatus.COMPLETED
    finally:
        await reopened.close()


async def test_close_racing_initialize_leaves_the_monque_closed(tmp_path: Path) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **OPTIONS)
    await asyncio.gather(m.initialize(), m.close())
    with pytest.raises(ConnectionError, match="closed"):
        await m.enqueue("t", 1)


@pytest.mark.parametrize("order", ["start-then-close", "close-then-start"])
async def test_close_racing_start_leaves_no_worker_running_on_a_closed_store(tmp_path: Path, order: str) -> None:
    m = await _opened(tmp_path)
    m.register("t", lambda job: None)
    calls = [m.start(), m.close()] if order == "start-then-close" else [m.close(), m.start()]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert not m.is_running
    engine_tasks = [task.get_name() for task in asyncio.all_tasks() if task.get_name().startswith("monque-")]
    assert engine_tasks == []
    if order == "close-then-start":  # start() came second: it says why it cannot start
        assert isinstance(results[1], ConnectionError) and "closed" in str(results[1])
    else:
        assert results == [None, None]


async def test_after_a_stop_from_a_handler_a_restarted_monque_stops_again(tmp_path: Path) -> None:
    m = await _opened(tmp_path)
    stopped_by_handler = asyncio.Event()

    async def shut_down(job: Any) -> None:
        await m.stop()
        stopped_by_handler.set()

    m.register("shutdown", shut_down)
    m.register("later", lambda job: None)
    await m.start()
    await m.enqueue("shutdown", None)
    await asyncio.wait_for(stopped_by_handler.wait(), 30)
    await poll_until(lambda: not m.is_running, 10, "the handler's stop took effect")
    await m.start()
    assert m.is_running
    await m.stop()  # must stop this run, not return the earlier stop's finished task
    assert not m.is_running
    await m.close()


async def test_stop_called_while_start_is_under_way_leaves_it_stopped(tmp_path: Path) -> None:
    m = await _opened(tmp_path)
    m.register("t", lambda job: None)
    try:
        await asyncio.gather(m.start(), m.stop())
        assert not m.is_running
        duties = ("monque-poll", "monque-heartbeat", "monque-stale", "monque-control", "monque-fill")
        assert [task.get_name() for task in asyncio.all_tasks() if task.get_name().startswith(duties)] == []
        await asyncio.gather(m.stop(), m.start())  # the other order: the later call wins
        assert m.is_running
    finally:
        await m.close()


async def test_a_counter_flush_cancelled_by_stop_mid_write_is_not_counted_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """stop() cancels the heartbeat tick; when that tick was writing the per-minute counters,
    the write still committed (SQLite's write thread goes on), the counts went back into the
    tally, and leave() wrote them again: queue_health showed 6 completions for 3 (seen in a
    full-suite run under load). The gate holds the tick's write at that moment."""
    m = await _opened(tmp_path)
    m.register("email", lambda job: None)
    real = m.store.add_outcome_counts
    calls: list[Any] = []
    held = asyncio.Event()
    gate = asyncio.Event()

    async def gated(counts: Any, batch: str | None = None) -> None:
        calls.append(counts)
        if len(calls) == 1:
            write = asyncio.ensure_future(real(counts, batch))  # like the write thread: goes on regardless
            held.set()
            await gate.wait()
            await asyncio.shield(write)
            return
        await real(counts, batch)

    # Gated from the start: the first tick that writes counts is held inside its write (patched
    # after the jobs completed, a tick could flush every count first, and no later tick wrote).
    monkeypatch.setattr(m.store, "add_outcome_counts", gated)
    await m.start()
    for n in range(3):
        await m.enqueue("email", {"n": n})

    async def completed() -> bool:
        return (await m.get_queue_stats("email")).completed == 3

    await poll_until(completed, 10, "3 jobs completed")
    await asyncio.wait_for(held.wait(), 10)  # a heartbeat tick is inside the write
    closing = asyncio.create_task(m.close())
    await poll_until(lambda: m._lifecycle._heartbeat_task is None, 10, "stop cancelled the heartbeat tick")
    gate.set()
    await asyncio.wait_for(closing, 30)

    reader = await _opened(tmp_path)
    try:
        (email,) = await reader.queue_health()
        assert (email.completed_last_window, email.failed_last_window) == (3, 0)
    finally:
        await reader.close()


async def test_a_handler_calling_initialize_during_an_outside_close_is_answered_at_once(tmp_path: Path) -> None:
    """Review finding: close() holds the life-cycle locks while it waits for running handlers,
    and initialize() took the lock before its "already initialized" check, so a handler that
    'ensures the queue is open' waited until shutdown_timeout and was cancelled, its job left
    processing to run again."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", shutdown_timeout=60.0)
    await m.initialize()
    started, closing = asyncio.Event(), asyncio.Event()
    errors: list[str] = []
    m.on("job:error", lambda event: errors.append(type(event.error).__name__))
    outcome: list[str] = []

    async def ensure_open(job: Any) -> None:
        started.set()
        await closing.wait()
        await m.initialize()
        outcome.append("initialize returned")

    m.register("ensure", ensure_open)
    await m.start()
    job = await m.enqueue("ensure", None)
    await started.wait()
    close = asyncio.create_task(m.close())
    await asyncio.sleep(0)  # close() takes the locks first
    closing.set()
    await asyncio.wait_for(close, 30)  # deadlocked, it would wait the whole 60 s shutdown_timeout
    assert outcome == ["initialize returned"] and errors == []
    async with Monque(f"sqlite:///{tmp_path}/jobs.db") as again:
        stored = await again.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.COMPLETED


async def test_a_handler_calling_start_during_an_outside_stop_does_not_wait_for_itself(tmp_path: Path) -> None:
    """Review finding: start() from a handler awaited the stop under way, which waits for that
    handler: at shutdown_timeout the handler's cancellation cancelled the stop task itself, and
    stop() ("never raises") raised CancelledError with the rest of the shutdown skipped."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", shutdown_timeout=60.0)
    await m.initialize()
    started, stopping = asyncio.Event(), asyncio.Event()
    outcome: list[str] = []

    async def restart(job: Any) -> None:
        started.set()
        await stopping.wait()
        await m.start()
        outcome.append("start returned")

    m.register("restart", restart)
    await m.start()
    await m.enqueue("restart", None)
    await started.wait()
    stop = asyncio.create_task(m.stop())
    await asyncio.sleep(0)  # stop() begins first
    stopping.set()
    await asyncio.wait_for(stop, 30)  # waiting for itself, it would last the whole 60 s
    assert outcome == ["start returned"] and not m.is_running
    await m.close()

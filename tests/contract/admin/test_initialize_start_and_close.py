"""Life cycle of an instance: initialize, start, stop, close, and no task outliving close()."""

from __future__ import annotations

import asyncio

import pytest

from monque_engine import ConnectionError, JobStatus, Monque


async def test_start_before_initialize_raises_connection_error(monque):
    m = await monque(initialize=False)
    with pytest.raises(ConnectionError, match="initialize"):
        await m.start()
    assert m.is_running is False and m.is_healthy() is False


async def test_initialize_is_idempotent(monque):
    m = await monque()
    job = await m.enqueue("x", 1)
    await m.initialize()
    await asyncio.gather(m.initialize(), m.initialize())
    assert (await m.get_job(job.id)).data == 1
    assert len(await m.get_jobs()) == 1


async def test_concurrent_first_initialize(monque):
    m = await monque(initialize=False)
    await asyncio.gather(*(m.initialize() for _ in range(5)))
    assert (await m.enqueue("x")).status is JobStatus.PENDING


async def test_initialize_on_existing_database_keeps_jobs(monque, store_url):
    m1 = await monque()
    job = await m1.enqueue("x", {"keep": True})
    await m1.close()
    m2 = await monque()
    assert (await m2.get_job(job.id)).data == {"keep": True}


async def test_start_stop_health(monque):
    m = await monque()
    assert m.is_healthy() is False
    await m.start()
    assert m.is_healthy() is True and m.is_running is True
    await m.start()  # already running: nothing happens
    assert m.is_running is True
    await m.stop()
    assert m.is_healthy() is False and m.is_running is False
    await m.start()  # restartable
    assert m.is_running is True


async def test_context_manager(store_url):
    async with Monque(store_url, poll_interval=0.05) as m:
        job = await m.enqueue("ctx")
        assert (await m.get_job(job.id)) is not None
    with pytest.raises(ConnectionError):
        await m.get_job(job.id)


async def test_initialize_failure_is_connection_error(tmp_path):
    m = Monque(f"sqlite:///{tmp_path}/missing/dir/jobs.db")
    with pytest.raises(ConnectionError, match="Failed to initialize Monque"):
        await m.initialize()
    (tmp_path / "garbage.db").write_bytes(b"this is not a sqlite database at all" * 100)
    m2 = Monque(f"sqlite:///{tmp_path}/garbage.db")
    with pytest.raises(ConnectionError, match="Failed to initialize Monque"):
        await m2.initialize()
    await m.close()
    await m2.close()


# -- replaced workers, concurrent start -----------------------------------------------------------


def _tasks_left_since(before: set[asyncio.Task]) -> list[asyncio.Task]:
    """Tasks created since ``before`` that are still pending (the test's own task excluded)."""
    current = asyncio.current_task()
    return [t for t in asyncio.all_tasks() if t not in before and t is not current and not t.done()]


async def _cancel_all(tasks):
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_replaced_workers_filler_ends_by_close(monque):
    """register(replace=True) while running: the replaced worker's filler once waited on the
    old worker's wake event, which nothing sets again (stop only wakes and joins current
    workers), so it stayed pending after close(). No engine task may outlive close()."""
    before = set(asyncio.all_tasks())
    m = await monque()
    m.register("w", lambda job: None)
    await m.start()
    m.register("w", lambda job: None, replace=True)
    await m.close()
    leaked = _tasks_left_since(before)
    await _cancel_all(leaked)
    assert not leaked, f"tasks still pending after close(): {sorted(t.get_name() for t in leaked)}"


async def test_concurrent_start_does_not_leak_background_tasks(monque):
    """Two concurrent start() calls once both passed the 'already running?' check (it was
    made before awaiting the feed's opening), so both started poll, feed, stale-recovery,
    heartbeat and filler tasks; close() stopped one set and the other kept running."""
    before = set(asyncio.all_tasks())
    m = await monque()
    m.register("w", lambda job: None)
    await asyncio.gather(m.start(), m.start())
    await m.close()
    leaked = _tasks_left_since(before)
    await _cancel_all(leaked)
    assert not leaked, f"tasks still pending after close(): {sorted(t.get_name() for t in leaked)}"

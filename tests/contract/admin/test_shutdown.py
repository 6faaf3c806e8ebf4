"""Shutdown: stop() drains in-flight jobs, times out cleanly, and is idempotent."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest

from monque_engine import ConnectionError, JobStatus, Monque, ShutdownTimeoutError
from monque_engine.store.sqlite import SqliteStore
from monque_engine.timeutil import now_ms


async def test_stop_waits_for_the_in_flight_job(monque, recorder):
    m = await monque(shutdown_timeout=5)
    rec = recorder(m)
    entered = asyncio.Event()
    finished = []

    async def handler(job):
        entered.set()
        await asyncio.sleep(0.3)
        finished.append(job.id)

    m.register("slow", handler)
    job = await m.enqueue("slow")
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    started = time.monotonic()
    await m.stop()
    assert time.monotonic() - started >= 0.2
    assert finished == [job.id]
    (complete,) = rec.of("job:complete")
    assert complete.job.id == job.id
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.COMPLETED and stored.claimed_by is None
    assert rec.of("job:error") == []
    assert m.is_running is False


async def test_stop_does_not_claim_new_work(monque, recorder, wait_until):
    m = await monque(shutdown_timeout=5)
    rec = recorder(m, "job:start", "job:complete")
    entered = asyncio.Event()
    release = asyncio.Event()

    async def handler(job):
        entered.set()
        await release.wait()

    m.register("one", handler, concurrency=1)
    first = await m.enqueue("one", 1)
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    second = await m.enqueue("one", 2)
    stopping = asyncio.create_task(m.stop())
    await wait_until(lambda: not m.is_running)  # stop() has begun: claiming stopped, job still running
    assert not stopping.done()
    release.set()
    await stopping
    assert [j.id for j in rec.of("job:start")] == [first.id]
    assert (await m.get_job(second.id)).status is JobStatus.PENDING
    assert (await m.get_job(first.id)).status is JobStatus.COMPLETED


async def test_shutdown_timeout_emits_error_and_leaves_job_processing(monque, recorder):
    m = await monque(shutdown_timeout=0.2)
    rec = recorder(m)
    entered = asyncio.Event()
    cancelled = []

    async def handler(job):
        entered.set()
        try:
            await asyncio.Event().wait()  # never finishes on its own
        except asyncio.CancelledError:
            cancelled.append(job.id)
            raise

    m.register("stuck", handler)
    job = await m.enqueue("stuck")
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    started = time.monotonic()
    await m.stop()
    elapsed = time.monotonic() - started
    assert 0.15 <= elapsed < 3
    (error_event,) = rec.of("job:error")
    assert isinstance(error_event.error, ShutdownTimeoutError)
    assert [j.id for j in error_event.error.incomplete_jobs] == [job.id]
    assert cancelled == [job.id]
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.PROCESSING
    assert stored.claimed_by == m.instance_id and stored.locked_at is not None
    assert rec.of("job:complete") == [] and rec.of("job:fail") == []


async def test_stop_is_idempotent(monque, recorder):
    m = await monque()
    await m.stop()  # never started
    rec = recorder(m, "job:complete", "job:error")
    entered = asyncio.Event()

    async def handler(job):
        entered.set()
        await asyncio.sleep(0.1)

    m.register("w", handler)
    await m.enqueue("w")
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    results = await asyncio.gather(m.stop(), m.stop(), m.stop())
    assert results == [None, None, None]
    await m.stop()
    assert len(rec.of("job:complete")) == 1 and rec.of("job:error") == []
    assert m.is_running is False


async def test_close_releases_the_store(monque):
    m = await monque()
    await m.start()
    await m.close()
    await m.close()  # twice is fine
    assert m.is_healthy() is False
    with pytest.raises(ConnectionError):
        await m.enqueue("x")


# -- a claim that lands after stop began ----------------------------------------------------------


class GatedClaimStore(SqliteStore):
    """The SQLite store with a gate on claim results, to land a claim after stop() began."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.hold = False
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def claim(self, *args, **kwargs):
        jobs = await super().claim(*args, **kwargs)
        if self.hold and jobs:
            self.entered.set()
            await self.gate.wait()
        return jobs


async def test_claim_landing_after_stop_began_is_released_to_pending(tmp_path, wait_until):
    store = GatedClaimStore.from_url(f"sqlite:///{tmp_path}/gated.db")
    m = Monque(store, poll_interval=0.05, heartbeat_interval=0.05)
    started = []
    m.on("job:start", lambda job: started.append(job.id))
    try:
        await m.initialize()
        m.register("g", lambda job: None, concurrency=3)
        jobs = await m.enqueue_many([{"name": "g", "data": i} for i in range(3)])
        store.hold = True
        await m.start()
        await asyncio.wait_for(store.entered.wait(), 5)
        claimed = await m.get_jobs(status="processing")
        assert sorted(j.id for j in claimed) == sorted(j.id for j in jobs)
        stopping = asyncio.create_task(m.stop())
        await wait_until(lambda: not m.is_running)
        store.gate.set()
        await asyncio.wait_for(stopping, 5)
        assert started == []
        for job in await m.get_jobs():
            assert job.status is JobStatus.PENDING
            assert job.claimed_by is None and job.locked_at is None and job.last_heartbeat is None
    finally:
        store.gate.set()
        await m.close()


class _SlowCompletionStore(SqliteStore):
    """Commits a completion, then holds its result back until ``release`` is set, so a job can be
    in the middle of its outcome write when shutdown times out."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.writing = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, *args, **kwargs):
        job = await super().complete(*args, **kwargs)
        self.writing.set()
        await self.release.wait()
        return job


async def test_a_timed_out_shutdown_gives_up_only_on_handlers_still_running(tmp_path, recorder):
    """A job whose handler returned is writing its outcome: shutdown must neither report it as
    left for recovery nor cancel it (the write goes through anyway and its event would be lost)."""
    store = _SlowCompletionStore.from_url(f"sqlite:///{tmp_path}/shutdown.db")
    m = Monque(store, shutdown_timeout=0.2, heartbeat_interval=0.05, poll_interval=0.05)
    await m.initialize()
    try:
        rec = recorder(m)
        stuck_started = asyncio.Event()

        async def stuck(job):
            stuck_started.set()
            await asyncio.Event().wait()  # never returns on its own

        m.register("quick", lambda job: None)
        m.register("stuck", stuck)
        quick = await m.enqueue("quick")
        hung = await m.enqueue("stuck")
        await m.start()
        await asyncio.wait_for(asyncio.gather(store.writing.wait(), stuck_started.wait()), 5)
        stopping = asyncio.ensure_future(m.stop())
        (error,) = await rec.wait_for("job:error")  # after shutdown_timeout
        assert isinstance(error.error, ShutdownTimeoutError)
        assert [job.id for job in error.error.incomplete_jobs] == [hung.id]
        store.release.set()
        await asyncio.wait_for(stopping, 5)
        (complete,) = rec.of("job:complete")
        assert complete.job.id == quick.id
        assert (await m.get_job(quick.id)).status is JobStatus.COMPLETED
        left = await m.get_job(hung.id)
        assert left.status is JobStatus.PROCESSING and left.claimed_by == m.instance_id
    finally:
        store.release.set()
        await m.close()


# -- shutdown is bounded whatever handlers and claims do ------------------------------------------


async def test_a_handler_that_swallows_cancellation_does_not_hold_stop(monque, recorder, monkeypatch):
    import monque_engine.scheduler.monque as facade
    from monque_engine import ShutdownTimeoutError

    monkeypatch.setattr(facade, "SHUTDOWN_GRACE", 0.2, raising=False)
    m = await monque(shutdown_timeout=0.2)
    rec = recorder(m, "job:error", "job:complete")
    entered = asyncio.Event()
    release = asyncio.Event()  # set only after stop() returned, so the handler can end
    swallowed = []

    async def stubborn(job):
        entered.set()
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                swallowed.append(job.id)  # and carries on, as some libraries do

    m.register("stubborn", stubborn)
    job = await m.enqueue("stubborn")
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    await asyncio.wait_for(m.stop(), 10)  # before the fix: waits for ever
    assert swallowed  # it was cancelled, and ignored it
    reported = len(rec.of("job:error"))
    await asyncio.wait_for(m.stop(), 10)  # a second stop() (close() calls it) does not wait again
    assert len(rec.of("job:error")) == reported
    errors = [e.error for e in rec.of("job:error")]
    assert errors and all(isinstance(e, ShutdownTimeoutError) for e in errors)
    assert [j.id for j in errors[-1].incomplete_jobs] == [job.id]
    assert "abandoned" in str(errors[-1])
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.PROCESSING  # left for stale recovery
    release.set()


# -- a completion attempted on a closed store ------------------------------------------------------


async def test_a_completion_on_a_closed_store_does_not_wedge_completions_after_reopening(monque, recorder):
    """A completion written after close() must fail at once and leave nothing behind: the
    SQLite store once queued it and marked a flush as pending before the submit raised, so
    after Monque.close() and initialize() every later completion waited for a flush that was
    never queued, and handlers hung."""
    m = await monque()
    job = await m.enqueue("w", 1, run_at=timedelta(minutes=-1))
    # Claimed half a minute ago, so re-initialising does not see a live claim of ours.
    claimed = await m.store.claim("w", m.instance_id, now_ms() - 30_000, 1, 1000)
    assert [j.id for j in claimed] == [job.id]
    await m.close()
    with pytest.raises(ConnectionError):
        await m.store.complete(job.id, m.instance_id, now_ms(), None)

    await m.initialize()
    rec = recorder(m, "job:complete")
    m.register("w", lambda job: None)
    second = await m.enqueue("w", 2)
    await m.start()
    completed = await rec.wait_for("job:complete", where=lambda event: event.job.id == second.id, timeout=5)
    assert completed[0].job.status is JobStatus.COMPLETED
    assert (await m.get_job(second.id)).status is JobStatus.COMPLETED


async def test_running_job_count_is_what_stop_waits_for(monque, recorder, wait_until):
    """``running_job_count``: the handlers running now (a console says how many a quit waits for)."""
    m = await monque(shutdown_timeout=5)
    rec = recorder(m)
    entered = asyncio.Event()
    release = asyncio.Event()

    async def handler(job):
        entered.set()
        await release.wait()

    m.register("held", handler, concurrency=3)
    m.register("idle", lambda job: None)
    assert m.running_job_count == 0
    first = await m.enqueue("held", {"n": 1})
    second = await m.enqueue("held", {"n": 2})
    await m.start()
    await wait_until(lambda: m.running_job_count == 2)
    stopping = asyncio.create_task(m.stop())
    await asyncio.sleep(0)
    assert m.running_job_count == 2 and not stopping.done()
    release.set()
    await asyncio.wait_for(stopping, 5)
    assert m.running_job_count == 0
    assert {first.id, second.id} <= {e.job.id for e in rec.of("job:complete")}


async def test_a_sync_handler_past_the_timeout_gets_the_grace_and_its_outcome_is_kept(monque, recorder):
    """A sync handler's thread cannot be cancelled: cancelling its task only dropped what it
    returned a moment later, and the job stayed processing though it had finished (a worker
    probe; the docs promise the handlers still running 5 s more). It is given the grace."""
    import threading

    m = await monque(shutdown_timeout=0.2)
    rec = recorder(m)
    entered, release = threading.Event(), threading.Event()

    def handler(job):
        entered.set()
        release.wait(10)  # past shutdown_timeout, well within the grace
        return {"done": True}

    m.register("sync.slow", handler)
    job = await m.enqueue("sync.slow")
    await m.start()
    await asyncio.to_thread(entered.wait, 5)
    stopping = asyncio.ensure_future(m.stop())
    await asyncio.sleep(0.5)  # the timeout has passed (0.2 s): the stop is in its grace now
    assert not stopping.done()
    release.set()
    await asyncio.wait_for(stopping, 10)
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.COMPLETED and stored.result == {"done": True}
    assert rec.of("job:error") == []  # nothing was left behind: no shutdown timeout to report


async def test_a_stop_that_leaves_jobs_keeps_the_instance_record_a_clean_one_removes_it(monque):
    """A console quit while its in-process worker ran 2 jobs: the stop timed out, left them
    processing, and removed the instance's record, so another console showed their owner as
    an unregistered "Node worker?", alive (a console probe). The record now stays with them."""
    m = await monque(shutdown_timeout=0.1)
    entered = asyncio.Event()

    async def stuck(job):
        entered.set()
        await asyncio.Event().wait()

    m.register("stuck", stuck)
    job = await m.enqueue("stuck")
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    assert m.instance_id in {record.id for record in await m.store.list_instances()}
    await m.stop()
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.PROCESSING and stored.claimed_by == m.instance_id
    assert m.instance_id in {record.id for record in await m.store.list_instances()}

    clean = await monque()
    clean.register("quick", lambda job: None)
    await clean.start()
    await clean.stop()
    assert clean.instance_id not in {record.id for record in await clean.store.list_instances()}

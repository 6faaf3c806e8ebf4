"""Engine promises that need a particular store set-up (SQLite, real files): local wake-ups
without a change feed, bounded shutdown, safe failure recording, cron schedules."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from monque_engine import ConnectionError, JobStatus, Monque
from monque_engine.store.sqlite.store import SqliteStore
from tests.conftest import SHORT_INTERVALS, EventRecorder, poll_until


class NoFeedStore(SqliteStore):
    """A SQLite store whose change feed never opens: the engine has only its poll and its
    own local wake-ups (what MongoDB fallback mode, or a standalone server, looks like)."""

    async def open_watch(self, resume_after: Any = None, **kwargs: Any) -> Any:
        raise ConnectionError("change feed disabled for this test")


async def _no_feed_monque(tmp_path: Any, **options: Any) -> Monque:
    store = NoFeedStore.from_url(f"sqlite:///{tmp_path}/jobs.db")
    m = Monque(store, **{**SHORT_INTERVALS, **options})
    await m.initialize()
    return m


async def test_local_enqueue_retry_and_reschedule_wake_the_processor_without_a_feed(tmp_path: Any) -> None:
    # Poll far away and no feed: only the local wake-ups can run these jobs in time.
    m = await _no_feed_monque(tmp_path, poll_interval=120, safety_poll_interval=120)
    try:
        rec = EventRecorder().attach(m, "job:complete")
        m.register("n", lambda job: None)
        later = await m.enqueue("n", "later", run_at=timedelta(hours=1))
        failed = await m.enqueue("other", "failed")
        await m.store.execute_write(  # type: ignore[attr-defined]
            lambda c: c.execute(
                f"UPDATE {m.options.collection_name} SET name = 'n', status = 'failed' WHERE id = ?", (failed.id,)
            )
        )
        await m.start()
        # The first poll round has run once it armed the timer for the job due in an hour.
        await poll_until(lambda: m._processor._timer_due.get("n") == later.next_run_at_ms, message="first poll")

        enqueued = await m.enqueue("n", "now")
        await rec.wait_for("job:complete", where=lambda e: e.job.id == enqueued.id)
        soon = await m.enqueue("n", "in 50 ms", run_at=timedelta(milliseconds=50))
        await rec.wait_for("job:complete", where=lambda e: e.job.id == soon.id)
        await m.reschedule_job(later.id, timedelta(0))
        await rec.wait_for("job:complete", where=lambda e: e.job.id == later.id)
        await m.retry_job(failed.id)
        await rec.wait_for("job:complete", where=lambda e: e.job.id == failed.id)
        assert m.feed_state != "live"
        assert (await m.get_job(failed.id)).status is JobStatus.COMPLETED
    finally:
        await m.close()


class StuckClaimStore(SqliteStore):
    """A claim that never comes back (a half-open connection, a lock never released)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stuck = False
        self.entered = asyncio.Event()

    async def claim(self, *args: Any, **kwargs: Any) -> Any:
        if self.stuck:
            self.entered.set()
            await asyncio.Event().wait()  # never set; only cancellation ends it
        return await super().claim(*args, **kwargs)


async def test_a_claim_stuck_in_flight_does_not_hold_stop(tmp_path: Any, monkeypatch: Any) -> None:
    import monque_engine.scheduler.monque as facade
    from monque_engine import ShutdownTimeoutError

    monkeypatch.setattr(facade, "SHUTDOWN_GRACE", 0.2, raising=False)
    store = StuckClaimStore.from_url(f"sqlite:///{tmp_path}/jobs.db")
    m = Monque(store, **{**SHORT_INTERVALS, "shutdown_timeout": 0.2})
    await m.initialize()
    try:
        rec = EventRecorder().attach(m, "job:error")
        m.register("n", lambda job: None)
        store.stuck = True
        await m.start()
        await asyncio.wait_for(store.entered.wait(), 5)
        await asyncio.wait_for(m.stop(), 10)  # before the fix: join_fillers waited for ever
        (event,) = rec.of("job:error")
        assert isinstance(event.error, ShutdownTimeoutError) and "claim" in str(event.error)
        assert not m._processor._fillers
    finally:
        await m.close()


class FlakyDueStore(SqliteStore):
    """next_due_ms fails with a raw, non-Monque error a few times (as a foreign document a
    driver cannot decode would), then answers normally."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failures = 0

    async def next_due_ms(self, names: Any) -> Any:
        if self.failures < 3:
            self.failures += 1
            raise KeyError("nextRunAt")
        return await super().next_due_ms(names)


async def test_the_poll_loop_survives_errors_that_are_not_monque_errors(tmp_path: Any) -> None:
    # No feed, so the poll is the only thing that can find a job another process enqueued.
    store = FlakyDueStore.from_url(f"sqlite:///{tmp_path}/jobs.db")

    class NoFeed(type(store)):  # type: ignore[misc]
        async def open_watch(self, resume_after: Any = None, **kwargs: Any) -> Any:
            raise ConnectionError("change feed disabled for this test")

    store.__class__ = NoFeed
    m = Monque(store, **{**SHORT_INTERVALS, "poll_interval": 0.05})
    await m.initialize()
    other = Monque(f"sqlite:///{tmp_path}/jobs.db", **SHORT_INTERVALS)
    await other.initialize()
    try:
        rec = EventRecorder().attach(m, "job:error", "job:complete")
        m.register("n", lambda job: None)
        await m.start()
        errors = await rec.wait_for("job:error", count=3, where=lambda e: isinstance(e.error, KeyError))
        assert len(errors) == 3
        job = await other.enqueue("n", "from another process")  # no local wake-up: only a poll finds it
        await rec.wait_for("job:complete", where=lambda e: e.job.id == job.id)
    finally:
        await other.close()
        await m.close()


class WakeDuringFailStore(SqliteStore):
    """Wakes the processor while a fail write is in flight, so a claim is queued right behind
    it: the claim then takes the retry (due at once) before the failed run's task has ended."""

    wake: Any = None

    async def fail(self, *args: Any, **kwargs: Any) -> Any:
        write = asyncio.ensure_future(super().fail(*args, **kwargs))
        await asyncio.sleep(0)  # the fail write is submitted
        if self.wake is not None:
            self.wake()
        return await write


async def test_a_retry_claimed_before_the_failed_run_ended_still_runs(tmp_path: Any) -> None:
    store = WakeDuringFailStore.from_url(f"sqlite:///{tmp_path}/jobs.db")
    m = Monque(
        store,
        **{
            **SHORT_INTERVALS,
            "base_retry_interval": 0,
            "max_retries": 3,
            "poll_interval": 120,
            "safety_poll_interval": 120,
        },
    )
    await m.initialize()
    try:
        store.wake = lambda: m._processor.wake("zero")
        rec = EventRecorder().attach(m, "job:complete", "job:fail")
        runs: list[int] = []

        async def handler(job: Any) -> None:
            runs.append(job.fail_count)
            if len(runs) < 3:
                raise RuntimeError("again")

        m.register("zero", handler)
        job = await m.enqueue("zero")
        await m.start()
        (complete,) = await rec.wait_for("job:complete")
        assert complete.job.id == job.id and runs == [0, 1, 2]
        assert (await m.get_job(job.id)).status is JobStatus.COMPLETED
    finally:
        await m.close()


async def test_wake_at_for_a_job_due_in_one_millisecond_arms_a_timer(tmp_path: Any, monkeypatch: Any) -> None:
    """``wake_at`` told about a job due 1 ms from now must not claim at once (the claim would
    read a now_ms() before the due time, find nothing, and nobody would look again until the
    poll): it arms a timer. No feed and a far poll, so only that timer can run the job.

    The processor's clock is set to run a constant lag behind the real one, chosen so that
    the job is due exactly 1 ms after the wake-up, whatever the machine's speed."""
    import monque_engine.scheduler.processor as processor_module
    from monque_engine.timeutil import now_ms

    m = await _no_feed_monque(tmp_path, poll_interval=120, safety_poll_interval=120)
    try:
        rec = EventRecorder().attach(m, "job:complete")
        m.register("n", lambda job: None)
        rounds: list[object] = []
        next_due = m.store.next_due_ms

        async def counted(names: Any) -> Any:
            rounds.append(names)
            return await next_due(names)

        m.store.next_due_ms = counted  # type: ignore[method-assign]
        await m.start()
        await poll_until(lambda: rounds, message="the first poll round")  # it found nothing; next in 120 s
        job = await m.store.insert(m._intake.build("n", "due in 1 ms", run_at=timedelta(milliseconds=-50)))
        due = job.next_run_at_ms
        lag = now_ms() - (due - 1)  # processor time = due - 1 now
        monkeypatch.setattr(processor_module, "now_ms", lambda: now_ms() - lag)
        m._processor.wake_at("n", due)
        (complete,) = await rec.wait_for("job:complete", timeout=5)
        assert complete.job.id == job.id
    finally:
        await m.close()

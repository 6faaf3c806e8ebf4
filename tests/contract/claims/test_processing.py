"""Processing: handlers, events with stored jobs, retries and backoff, recurring jobs,
concurrency limits, sync handlers, owned transitions."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta

import pytest

from monque_engine import JobStatus
from monque_engine.cron import next_run_ms
from monque_engine.timeutil import now_ms


async def _job(m, job_id):
    return await m.get_job(job_id)


async def test_handler_runs_and_job_completes(monque, recorder):
    m = await monque()
    rec = recorder(m)
    seen = []

    async def handler(job):
        seen.append((job.id, job.data, job.status, job.claimed_by))

    m.register("work", handler)
    job = await m.enqueue("work", {"n": 1})
    await m.start()
    (complete,) = await rec.wait_for("job:complete")
    assert seen == [(job.id, {"n": 1}, JobStatus.PROCESSING, m.instance_id)]
    stored = await _job(m, job.id)
    assert stored.status is JobStatus.COMPLETED
    assert stored.claimed_by is None and stored.locked_at is None and stored.last_heartbeat is None
    assert stored.fail_reason is None
    assert stored.heartbeat_interval_ms == int(m.options.heartbeat_interval * 1000)
    assert stored.updated_at_ms >= stored.created_at_ms
    assert complete.job == stored
    assert complete.duration >= 0


async def test_job_start_event_carries_the_claimed_job_as_stored(monque, recorder):
    m = await monque(heartbeat_interval=30)
    rec = recorder(m)
    stored_during = []

    async def handler(job):
        stored_during.append(await m.get_job(job.id))

    m.register("work", handler)
    before = now_ms()
    job = await m.enqueue("work", [1])
    await m.start()
    (complete,) = await rec.wait_for("job:complete")
    (started,) = rec.of("job:start")
    assert started.id == job.id
    assert started.status is JobStatus.PROCESSING
    assert started.claimed_by == m.instance_id
    assert started.locked_at_ms is not None and started.locked_at_ms >= before
    assert started.last_heartbeat_ms == started.locked_at_ms
    assert started.heartbeat_interval_ms == 30_000
    assert stored_during == [started]  # the event's job is exactly what was written
    assert complete.job == await m.get_job(job.id)
    assert complete.job.updated_at_ms >= started.updated_at_ms
    assert rec.names().index("job:start") < rec.names().index("job:complete")


async def test_due_jobs_run_in_next_run_at_order(monque, recorder):
    m = await monque()
    rec = recorder(m, "job:complete")
    order = []
    base = datetime.now(UTC) - timedelta(minutes=10)
    for i in (3, 1, 4, 0, 2):
        await m.enqueue("ordered", i, run_at=base + timedelta(seconds=i))

    async def handler(job):
        order.append(job.data)

    m.register("ordered", handler, concurrency=1)
    await m.start()
    await rec.wait_for("job:complete", 5)
    assert order == [0, 1, 2, 3, 4]


async def test_future_job_runs_when_due_not_before(monque, recorder):
    m = await monque()
    rec = recorder(m, "job:start")
    m.register("later", lambda job: None)
    await m.start()
    job = await m.enqueue("later", 1, run_at=timedelta(milliseconds=300))
    (started,) = await rec.wait_for("job:start")
    assert now_ms() >= job.next_run_at_ms
    assert started.locked_at_ms >= job.next_run_at_ms


async def test_job_enqueued_while_running_is_picked_up_without_waiting_for_the_poll(monque, recorder):
    m = await monque(poll_interval=30, safety_poll_interval=30)  # only the change feed can wake it
    rec = recorder(m, "job:complete")
    m.register("live", lambda job: None)
    first = await m.enqueue("live", 1)
    await m.start()
    await rec.wait_for("job:complete")  # the start-up poll has run and found nothing more
    job = await m.enqueue("live", 2)
    started = now_ms()
    complete = await rec.wait_for("job:complete", 2, timeout=3)
    assert [c.job.id for c in complete] == [first.id, job.id]
    assert now_ms() - started < 3000


async def test_failure_schedules_retry_with_backoff(monque, recorder):
    base = 10.0  # long enough that the retry does not happen during the test
    m = await monque(base_retry_interval=base, max_backoff_delay=86_400)
    rec = recorder(m)

    async def handler(job):
        raise ValueError("boom: smtp down")

    m.register("flaky", handler)
    job = await m.enqueue("flaky", 1)
    await m.start()
    (fail,) = await rec.wait_for("job:fail")
    assert fail.will_retry is True
    assert isinstance(fail.error, ValueError)
    stored = await _job(m, job.id)
    assert fail.job == stored
    assert stored.status is JobStatus.PENDING
    assert stored.fail_count == 1
    assert stored.fail_reason == "boom: smtp down"
    assert stored.claimed_by is None and stored.locked_at is None and stored.last_heartbeat is None
    delay = stored.next_run_at_ms - stored.updated_at_ms
    expected = 2**1 * base * 1000
    assert 0.75 * expected - 1 <= delay <= 1.25 * expected + 1
    assert rec.of("job:complete") == []


async def test_backoff_delay_is_capped_at_max_backoff_delay(monque, recorder, raw):
    m = await monque(base_retry_interval=10, max_backoff_delay=15)
    rec = recorder(m, "job:fail")

    async def handler(job):
        raise RuntimeError("x")

    m.register("capped", handler)
    job = await m.enqueue("capped", 1)
    await raw(m).set(job.id, failCount=5)
    await m.start()
    (fail,) = await rec.wait_for("job:fail")
    assert fail.job.fail_count == 6
    delay = fail.job.next_run_at_ms - fail.job.updated_at_ms
    # min(2^6 * 10 s, 15 s) = 15 s, jittered by ±25% and capped again at 15 s
    assert 0.75 * 15_000 - 1 <= delay <= 15_000


async def test_retries_until_max_retries_then_fails_terminally(monque, recorder):
    m = await monque(max_retries=3, base_retry_interval=0.01)
    rec = recorder(m)
    attempts = []

    async def handler(job):
        attempts.append(job.fail_count)
        raise RuntimeError(f"attempt {len(attempts)}")

    m.register("doomed", handler)
    job = await m.enqueue("doomed", 1)
    await m.start()
    fails = await rec.wait_for("job:fail", 3)
    assert [f.will_retry for f in fails] == [True, True, False]
    assert [f.job.fail_count for f in fails] == [1, 2, 3]
    assert attempts == [0, 1, 2]
    stored = await _job(m, job.id)
    assert stored.status is JobStatus.FAILED
    assert stored.fail_count == 3
    assert stored.fail_reason == "attempt 3"
    assert stored.claimed_by is None and stored.locked_at is None
    assert fails[-1].job == stored
    # nothing more happens to a failed job
    await m.stop()
    assert len(rec.of("job:fail")) == 3 and len(attempts) == 3


async def test_fail_reason_for_an_exception_without_message_is_its_type(monque, recorder):
    m = await monque(max_retries=1)
    rec = recorder(m, "job:fail")

    async def handler(job):
        raise KeyError()

    m.register("k", handler)
    job = await m.enqueue("k")
    await m.start()
    (fail,) = await rec.wait_for("job:fail")
    assert fail.will_retry is False
    assert (await _job(m, job.id)).fail_reason == "KeyError"


async def test_recurring_job_returns_to_pending_at_next_cron_time_with_fail_count_reset(monque, recorder):
    m = await monque(base_retry_interval=0.01)
    rec = recorder(m)
    runs = []

    async def handler(job):
        runs.append(job.fail_count)
        if len(runs) == 1:
            raise RuntimeError("first run fails")

    m.register("tick", handler)
    job = await m.schedule("* * * * * *", "tick", {"k": 1})  # every second (6 fields)
    await m.start()
    (fail,) = await rec.wait_for("job:fail")
    assert fail.will_retry is True and fail.job.repeat_interval == "* * * * * *"
    (complete,) = await rec.wait_for("job:complete")
    after = complete.job
    assert after.id == job.id
    assert after.status is JobStatus.PENDING
    assert after.fail_count == 0
    assert after.fail_reason is None
    assert after.claimed_by is None and after.locked_at is None
    assert after.repeat_interval == "* * * * * *"
    assert after.next_run_at_ms == next_run_ms("* * * * * *", after.updated_at_ms)
    assert after.next_run_at_ms > after.updated_at_ms
    assert runs == [0, 1]


async def test_recurring_job_runs_repeatedly(monque, recorder):
    m = await monque()
    rec = recorder(m, "job:complete")
    m.register("tick", lambda job: None)
    job = await m.schedule("* * * * * *", "tick")
    await m.start()
    completes = await rec.wait_for("job:complete", 2, timeout=5)
    assert {c.job.id for c in completes} == {job.id}
    assert completes[1].job.next_run_at_ms > completes[0].job.next_run_at_ms


async def test_recurring_job_failing_terminally_stops_recurring(monque, recorder):
    m = await monque(max_retries=1)
    rec = recorder(m, "job:fail")

    async def handler(job):
        raise RuntimeError("no")

    m.register("tick", handler)
    job = await m.schedule("* * * * * *", "tick")
    await m.start()
    (fail,) = await rec.wait_for("job:fail")
    assert fail.will_retry is False
    assert (await _job(m, job.id)).status is JobStatus.FAILED


async def _measure_concurrency(m, names, per_name_jobs, hold=0.05):
    state = {"now": 0, "max": 0, "by_name": {}, "max_by_name": {}}

    def make(name):
        async def handler(job):
            state["now"] += 1
            state["by_name"][name] = state["by_name"].get(name, 0) + 1
            state["max"] = max(state["max"], state["now"])
            state["max_by_name"][name] = max(state["max_by_name"].get(name, 0), state["by_name"][name])
            try:
                await asyncio.sleep(hold)
            finally:
                state["now"] -= 1
                state["by_name"][name] -= 1

        return handler

    return state, make


async def test_worker_concurrency_is_never_exceeded(monque, recorder):
    m = await monque()
    rec = recorder(m, "job:complete")
    state, make = await _measure_concurrency(m, ["c"], 12)
    m.register("c", make("c"), concurrency=3)
    await m.enqueue_many([{"name": "c", "data": i} for i in range(12)])
    await m.start()
    await rec.wait_for("job:complete", 12)
    assert state["max"] == 3


async def test_default_worker_concurrency_option(monque, recorder):
    m = await monque(worker_concurrency=2)
    rec = recorder(m, "job:complete")
    state, make = await _measure_concurrency(m, ["d"], 8)
    m.register("d", make("d"))
    await m.enqueue_many([{"name": "d", "data": i} for i in range(8)])
    await m.start()
    await rec.wait_for("job:complete", 8)
    assert state["max"] == 2


async def test_instance_concurrency_caps_all_workers_together(monque, recorder):
    m = await monque(instance_concurrency=4)
    rec = recorder(m, "job:complete")
    state, make = await _measure_concurrency(m, ["a", "b"], 10)
    m.register("a", make("a"), concurrency=3)
    m.register("b", make("b"), concurrency=3)
    await m.enqueue_many([{"name": n, "data": i} for i in range(10) for n in ("a", "b")])
    await m.start()
    await rec.wait_for("job:complete", 20)
    assert state["max"] == 4
    assert state["max_by_name"]["a"] <= 3 and state["max_by_name"]["b"] <= 3


async def test_each_job_runs_exactly_once(monque, recorder):
    m = await monque()
    rec = recorder(m, "job:complete")
    seen = []

    async def handler(job):
        seen.append(job.id)

    m.register("once", handler, concurrency=7)
    jobs = await m.enqueue_many([{"name": "once", "data": i} for i in range(100)])
    await m.start()
    await rec.wait_for("job:complete", 100, timeout=10)
    assert sorted(seen) == sorted(j.id for j in jobs)
    stats = await m.get_queue_stats("once")
    assert stats.completed == 100 and stats.pending == 0 and stats.processing == 0


async def test_sync_handlers_run_in_a_thread(monque, recorder, wait_until):
    m = await monque()
    rec = recorder(m, "job:complete", "job:fail")
    loop_thread = threading.get_ident()
    threads = []
    release = threading.Event()

    def handler(job):
        threads.append(threading.get_ident())
        if job.data == "block":
            # Blocking here must not block the event loop.
            assert release.wait(5)
        if job.data == "fail":
            raise ValueError("sync failure")

    m.register("sync", handler, concurrency=3)
    await m.enqueue("sync", "block")
    await m.start()
    await wait_until(lambda: threads)  # the blocking handler is running in its thread
    # The loop is free while the sync handler blocks: we can enqueue and see it processed.
    ok = await m.enqueue("sync", "ok")
    failing = await m.enqueue("sync", "fail")
    (_complete,) = await rec.wait_for("job:complete", where=lambda e: e.job.id == ok.id)
    (fail,) = await rec.wait_for("job:fail")
    assert fail.job.id == failing.id and fail.job.fail_reason == "sync failure"
    release.set()
    await rec.wait_for("job:complete", 2)
    assert len(threads) == 3
    assert all(ident != loop_thread for ident in threads)


async def test_handler_registered_after_start_is_served(monque, recorder):
    m = await monque()
    rec = recorder(m, "job:complete")
    job = await m.enqueue("late", 1)
    await m.start()
    m.register("late", lambda job: None)
    (complete,) = await rec.wait_for("job:complete")
    assert complete.job.id == job.id


async def test_worker_decorator_registers(monque, recorder):
    m = await monque()
    rec = recorder(m, "job:complete")

    @m.worker("decorated", concurrency=2)
    async def handler(job):
        return None

    assert m.registered_names == ["decorated"]
    await m.enqueue("decorated")
    await m.start()
    await rec.wait_for("job:complete")


async def test_jobs_of_unregistered_names_are_left_alone(monque, recorder, wait_until):
    m = await monque()
    rec = recorder(m, "job:complete")
    m.register("known", lambda job: None)
    other = await m.enqueue("unknown", 1)
    await m.enqueue("known", 1)
    await m.start()
    await rec.wait_for("job:complete")
    assert (await _job(m, other.id)).status is JobStatus.PENDING


# -- owned transitions ----------------------------------------------------------------------------


async def _run_with_claim_taken(monque, recorder, raw, wait_until, take_away, fail=False):
    m = await monque(heartbeat_interval=30, stale_recovery_interval=3600)
    rec = recorder(m)
    entered = asyncio.Event()
    release = asyncio.Event()
    returned = []

    async def handler(job):
        entered.set()
        await release.wait()
        returned.append(job.id)
        if fail:
            raise RuntimeError("fails after its claim was taken")

    m.register("owned", handler, concurrency=1)
    job = await m.enqueue("owned", 1)
    await m.start()
    await asyncio.wait_for(entered.wait(), 5)
    await take_away(m, raw(m), job)
    release.set()

    async def drained():
        (summary,) = [s for s in await m.get_queue_view_summaries() if s.name == "owned"]
        return returned and summary.worker.active_count == 0

    await wait_until(drained)
    await m.stop()
    assert rec.of("job:complete") == [] and rec.of("job:fail") == []
    return m, job


async def test_no_complete_when_another_instance_took_the_claim(monque, recorder, raw, wait_until):
    async def steal(m, r, job):
        await r.set(job.id, claimedBy="other-instance")

    m, job = await _run_with_claim_taken(monque, recorder, raw, wait_until, steal)
    stored = await _job(m, job.id)
    assert stored.status is JobStatus.PROCESSING and stored.claimed_by == "other-instance"


async def test_no_fail_when_another_instance_took_the_claim(monque, recorder, raw, wait_until):
    async def steal(m, r, job):
        await r.set(job.id, claimedBy="other-instance")

    m, job = await _run_with_claim_taken(monque, recorder, raw, wait_until, steal, fail=True)
    stored = await _job(m, job.id)
    assert stored.status is JobStatus.PROCESSING and stored.fail_count == 0 and stored.fail_reason is None


async def test_no_complete_after_stale_recovery_took_the_job(monque, recorder, raw, wait_until):
    async def recover(m, r, job):
        await r.set(job.id, lockedAt=now_ms() - 10_000_000, lastHeartbeat=now_ms() - 10_000_000)
        assert await m.recover_stale_jobs() == 1
        # keep the recovered job out of reach so this worker does not simply run it again
        later = await m.reschedule_job(job.id, timedelta(hours=1))
        assert later.status is JobStatus.PENDING

    m, job = await _run_with_claim_taken(monque, recorder, raw, wait_until, recover)
    stored = await _job(m, job.id)
    assert stored.status is JobStatus.PENDING
    assert stored.claimed_by is None and stored.locked_at is None
    assert stored.next_run_at_ms > now_ms() + 3_000_000


async def test_no_complete_when_the_job_was_deleted_while_running(monque, recorder, raw, wait_until):
    async def delete(m, r, job):
        assert await m.delete_job(job.id) is True

    m, job = await _run_with_claim_taken(monque, recorder, raw, wait_until, delete)
    assert await _job(m, job.id) is None


async def test_no_fail_when_the_job_was_deleted_while_running(monque, recorder, raw, wait_until):
    async def delete(m, r, job):
        assert await m.delete_job(job.id) is True

    m, job = await _run_with_claim_taken(monque, recorder, raw, wait_until, delete, fail=True)
    assert await _job(m, job.id) is None


async def test_no_complete_when_the_job_was_cancelled_back_to_failed(monque, recorder, raw, wait_until):
    async def fail_elsewhere(m, r, job):
        await r.set(job.id, status="failed", claimedBy=None, lockedAt=None, failReason="operator")

    m, job = await _run_with_claim_taken(monque, recorder, raw, wait_until, fail_elsewhere)
    stored = await _job(m, job.id)
    assert stored.status is JobStatus.FAILED and stored.fail_reason == "operator"


# -- wake-ups without the poll --------------------------------------------------------------------


async def test_future_job_and_management_changes_wake_the_processor_without_the_poll(monque, recorder):
    m = await monque(poll_interval=30, safety_poll_interval=30)
    rec = recorder(m, "job:complete", "job:fail")

    async def handler(job):
        if job.data == "fail-once" and job.fail_count == 0:
            raise RuntimeError("first attempt fails")

    m.register("wake", handler)
    warm = await m.enqueue("wake", "warm-up")
    await m.start()
    await rec.wait_for("job:complete")  # the start-up poll is done; from here only the feed wakes us

    later = await m.enqueue("wake", "later", run_at=timedelta(milliseconds=300))
    (c,) = (await rec.wait_for("job:complete", 2, timeout=3))[1:]
    assert c.job.id == later.id and c.job.updated_at_ms >= later.next_run_at_ms

    far = await m.enqueue("wake", "rescheduled", run_at=timedelta(hours=1))
    await m.reschedule_job(far.id, timedelta(0))
    (c,) = (await rec.wait_for("job:complete", 3, timeout=3))[2:]
    assert c.job.id == far.id

    retried = await m.enqueue("wake", "retried", run_at=timedelta(hours=1))
    await m.cancel_job(retried.id)
    await m.retry_job(retried.id)
    (c,) = (await rec.wait_for("job:complete", 4, timeout=3))[3:]
    assert c.job.id == retried.id

    flaky = await m.enqueue("wake", "fail-once")  # retried at backoff time via a timer
    await rec.wait_for("job:fail")
    (c,) = (await rec.wait_for("job:complete", 5, timeout=3))[4:]
    assert c.job.id == flaky.id and c.job.fail_count == 1  # one-off success keeps its failCount
    assert warm.id != flaky.id


# -- store failures during processing (SQLite store wrapped to fail on purpose) ---------------------

from monque_engine import ConnectionError, Monque, StoreUnavailableError  # noqa: E402
from monque_engine.store.sqlite import SqliteStore  # noqa: E402


class FailingStore(SqliteStore):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fail_complete = 0
        self.complete_error: Exception = StoreUnavailableError("complete write failed: database is locked")
        self.complete_written = asyncio.Event()  # a complete write reached the store
        self.fail_fail = 0
        self.fail_claim = 0

    async def complete(self, *args, **kwargs):
        if self.fail_complete:
            self.fail_complete -= 1
            raise self.complete_error
        try:
            return await super().complete(*args, **kwargs)
        finally:
            self.complete_written.set()

    async def fail(self, *args, **kwargs):
        if self.fail_fail:
            self.fail_fail -= 1
            raise ConnectionError("fail write failed")
        return await super().fail(*args, **kwargs)

    async def claim(self, *args, **kwargs):
        if self.fail_claim:
            self.fail_claim -= 1
            raise ConnectionError("claim failed")
        return await super().claim(*args, **kwargs)


async def _failing_monque(tmp_path, **options):
    store = FailingStore.from_url(f"sqlite:///{tmp_path}/failing.db")
    m = Monque(store, **{"poll_interval": 0.05, "base_retry_interval": 0.01, "heartbeat_interval": 0.05, **options})
    await m.initialize()
    return m, store


async def test_a_completion_the_store_cannot_take_is_written_again_not_failed(tmp_path, recorder):
    """A run that succeeded while the store could not be written (locked past busy_timeout,
    a full disk) was recorded as a failure: run again, or failed for good on its last
    attempt, with the store's error as its reason (a resource-exhaustion probe). Its
    completion is written again until the store takes it; ``job:error`` says so once."""
    m, store = await _failing_monque(tmp_path, base_retry_interval=10, max_retries=1)
    try:
        rec = recorder(m)
        store.fail_complete = 3
        runs = []
        m.register("w", lambda job: runs.append(job.id) or {"sent": True})
        job = await m.enqueue("w")
        await m.start()
        (complete,) = await rec.wait_for("job:complete")
        assert complete.job.id == job.id and store.fail_complete == 0
        stored = await m.get_job(job.id)
        assert stored.status is JobStatus.COMPLETED and stored.fail_count == 0 and stored.fail_reason is None
        assert stored.result == {"sent": True} and runs == [job.id]  # run once, its result kept
        assert rec.of("job:fail") == []
        [error] = rec.of("job:error")
        assert isinstance(error.error, ConnectionError) and error.job.id == job.id
    finally:
        await m.close()


async def test_a_completion_waiting_for_the_store_keeps_its_slot(tmp_path, recorder):
    """While a completion waits for the store, its slot stays taken: counted free (as a
    finishing write's is), one worker of concurrency 1 claimed all 20 of its jobs into the
    same wait (a review of ADR 0026)."""
    m, store = await _failing_monque(tmp_path, base_retry_interval=10)
    try:
        rec = recorder(m)
        store.fail_complete = 10**6
        m.register("w", lambda job: None, concurrency=1)
        jobs = [await m.enqueue("w", {"n": n}) for n in range(3)]
        await m.start()
        await rec.wait_for("job:error")
        assert m.running_job_count == 1  # the slot is taken, not free for the next claim
        assert [job.status for job in [await m.get_job(j.id) for j in jobs]].count(JobStatus.PROCESSING) == 1
        store.fail_complete = 0
        await rec.wait_for("job:complete", count=3)
        assert {(await m.get_job(j.id)).status for j in jobs} == {JobStatus.COMPLETED}
    finally:
        await m.close()


async def test_a_completion_the_store_does_not_take_for_lock_timeout_is_left_to_recovery(tmp_path, recorder):
    """Not for ever: after ``lock_timeout`` the wait ends, the job leaves the heartbeat, and
    stale recovery returns it (the review found a job held and beaten for good)."""
    m, store = await _failing_monque(tmp_path, lock_timeout=0.5, stale_recovery_interval=0.1)
    try:
        rec = recorder(m)
        store.fail_complete = 10**6
        runs = []
        m.register("w", lambda job: runs.append(job.id))
        job = await m.enqueue("w")
        await m.start()
        await rec.wait_for("job:error")
        await rec.wait_for("stale:recovered")
        store.fail_complete = 0
        (complete,) = await rec.wait_for("job:complete")
        assert complete.job.id == job.id and runs == [job.id, job.id]  # at least once: it ran again
    finally:
        await m.close()


async def test_a_completion_another_owner_took_meanwhile_is_not_written(tmp_path, recorder, raw):
    """While the completion waits for the store, stale recovery may hand the job to another
    worker: the write is conditioned on this claim, so it reaches nothing."""
    m, store = await _failing_monque(tmp_path, base_retry_interval=10)
    try:
        rec = recorder(m)
        store.fail_complete = 10**6
        m.register("w", lambda job: None)
        job = await m.enqueue("w")
        await m.start()
        await rec.wait_for("job:error")
        await raw(m).set(job.id, claimedBy="another-worker")
        store.fail_complete = 0
        await asyncio.wait_for(store.complete_written.wait(), 10)
        stored = await m.get_job(job.id)
        assert stored.status is JobStatus.PROCESSING and stored.claimed_by == "another-worker"
        assert rec.of("job:complete") == [] and rec.of("job:fail") == []
    finally:
        await m.close()


@pytest.mark.parametrize("refusal", [RuntimeError, ConnectionError])
async def test_another_error_from_the_complete_write_takes_the_fail_path(tmp_path, recorder, refusal):
    """Upstream: a completion that throws goes down the fail path. Kept for what is not the
    store being unavailable for now (a refusal, a read-only file, a validator: writing again
    would not fix it, and the job would be held for ever: a review of ADR 0026)."""
    m, store = await _failing_monque(tmp_path, base_retry_interval=10)
    try:
        rec = recorder(m)
        store.fail_complete = 1
        store.complete_error = refusal("complete write refused")
        m.register("w", lambda job: None)
        job = await m.enqueue("w")
        await m.start()
        (fail,) = await rec.wait_for("job:fail")
        assert isinstance(fail.error, refusal) and fail.will_retry is True
        stored = await m.get_job(job.id)
        assert stored == fail.job
        assert stored.status is JobStatus.PENDING and stored.fail_count == 1
        assert stored.fail_reason == "complete write refused"
        assert rec.of("job:complete") == []
    finally:
        await m.close()


async def test_a_failed_fail_write_emits_job_error_and_the_failure_is_written_plainly(tmp_path, recorder):
    m, store = await _failing_monque(tmp_path)
    try:
        rec = recorder(m)
        store.fail_fail = 1

        async def handler(job):
            raise ValueError("handler error")

        m.register("w", handler)
        job = await m.enqueue("w")
        await m.start()
        (error,) = await rec.wait_for("job:error")
        assert isinstance(error.error, ConnectionError) and error.job.id == job.id
        (fail,) = await rec.wait_for("job:fail", where=lambda f: f.job.fail_count == 1)
        assert fail.will_retry is True and fail.error.args == ("handler error",)
        assert rec.names().index("job:error") < rec.names().index("job:fail")
        # the last resort: the same outcome, without the exception's own text
        assert fail.job.fail_reason == "ValueError (the failure could not be stored in full: ConnectionError)"
        assert fail.job.error_type == "ValueError"
        [attempt] = fail.job.attempts
        assert attempt.outcome == "retrying" and attempt.error_message == fail.job.fail_reason
        assert attempt.traceback is None
    finally:
        await m.close()


async def test_a_fail_write_that_fails_twice_leaves_the_job_to_stale_recovery(tmp_path, recorder):
    m, store = await _failing_monque(tmp_path)
    try:
        rec = recorder(m)
        store.fail_fail = 2

        async def handler(job):
            raise ValueError("handler error")

        m.register("w", handler)
        job = await m.enqueue("w")
        await m.start()
        (error,) = await rec.wait_for("job:error")
        assert isinstance(error.error, ConnectionError) and error.job.id == job.id
        assert store.fail_fail == 0 and rec.of("job:fail") == []
        # nothing could be written: the job stays processing for stale recovery
        assert (await m.get_job(job.id)).status is JobStatus.PROCESSING
    finally:
        await m.close()


async def test_a_failed_claim_emits_job_error_and_processing_continues(tmp_path, recorder):
    m, store = await _failing_monque(tmp_path)
    try:
        rec = recorder(m)
        store.fail_claim = 2
        m.register("w", lambda job: None)
        job = await m.enqueue("w")
        await m.start()
        (complete,) = await rec.wait_for("job:complete")
        assert complete.job.id == job.id
        errors = rec.of("job:error")
        assert len(errors) == 2 and all(str(e.error) == "claim failed" for e in errors)
    finally:
        await m.close()


class GatedClaimStore(SqliteStore):
    """Holds a committed claim's result until ``gate`` opens (a claim in flight, made visible)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.hold = False
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def claim(self, *args, **kwargs):
        jobs = await super().claim(*args, **kwargs)
        if self.hold and jobs:
            self.hold = False
            self.entered.set()
            await self.gate.wait()
        return jobs


async def test_replacing_a_handler_while_a_claim_is_in_flight_loses_no_jobs(tmp_path, recorder):
    store = GatedClaimStore.from_url(f"sqlite:///{tmp_path}/replace.db")
    m = Monque(store, poll_interval=0.05, heartbeat_interval=0.05, shutdown_timeout=1)
    try:
        await m.initialize()
        rec = recorder(m, "job:complete")
        handled = []
        m.register("r", lambda job: handled.append(("old", job.id)), concurrency=2)
        jobs = await m.enqueue_many([{"name": "r", "data": i} for i in range(2)])
        store.hold = True
        await m.start()
        await asyncio.wait_for(store.entered.wait(), 5)  # the claim is committed, its caller still waiting
        m.register("r", lambda job: handled.append(("new", job.id)), concurrency=2, replace=True)
        store.gate.set()
        completes = await rec.wait_for("job:complete", 2, timeout=3)
        assert sorted(c.job.id for c in completes) == sorted(j.id for j in jobs)
    finally:
        store.gate.set()
        await m.close()


# -- wake-ups for jobs due in a millisecond or two ---------------------------------------------


async def test_jobs_due_in_two_milliseconds_all_run_without_waiting_for_the_safety_poll(monque, recorder):
    # The safety poll is far away, so only the wake-ups can run these jobs in time.
    m = await monque(safety_poll_interval=120, poll_interval=120)
    rec = recorder(m, "job:complete")
    m.register("soon", lambda job: None, concurrency=20)
    await m.start()
    for round_ in range(5):  # a lost wake-up depends on where the ms boundary falls: try often
        await asyncio.gather(*(m.enqueue("soon", i, run_at=timedelta(milliseconds=1 + i % 3)) for i in range(20)))
        await rec.wait_for("job:complete", count=20 * (round_ + 1), timeout=10)


async def test_retries_with_a_tiny_base_interval_run_without_waiting_for_the_safety_poll(monque, recorder):
    m = await monque(safety_poll_interval=120, poll_interval=120, base_retry_interval=0.001, max_retries=5)
    rec = recorder(m, "job:complete", "job:fail")
    attempts: dict[int, int] = {}

    async def flaky(job):
        attempts[job.data] = attempts.get(job.data, 0) + 1
        if attempts[job.data] < 3:
            raise RuntimeError("not yet")

    m.register("flaky", flaky, concurrency=10)
    await m.start()
    for i in range(10):
        await m.enqueue("flaky", i)
    await rec.wait_for("job:complete", count=10, timeout=10)
    assert len(rec.of("job:fail")) == 20


# -- recording a failure never fails ----------------------------------------------------------------


class _Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("cannot describe myself")


async def test_a_failure_whose_message_cannot_be_read_is_recorded_and_retried(monque, recorder):
    m = await monque(max_retries=2)
    rec = recorder(m, "job:fail", "job:error")

    async def handler(job):
        if job.data == "unprintable":
            raise _Unprintable()
        raise OSError("cannot open " + b"bad-\xff-name".decode("utf-8", "surrogateescape"))

    m.register("bad", handler)
    unprintable = await m.enqueue("bad", "unprintable")
    surrogate = await m.enqueue("bad", "surrogate")
    await m.start()
    fails = await rec.wait_for("job:fail", count=4)
    assert [f.will_retry for f in fails if f.job.id == unprintable.id] == [True, False]
    assert rec.of("job:error") == []
    first = await m.get_job(unprintable.id)
    assert first.status is JobStatus.FAILED and first.fail_count == 2
    assert first.fail_reason == "_Unprintable (its message could not be read)"
    second = await m.get_job(surrogate.id)
    assert second.status is JobStatus.FAILED and second.fail_count == 2
    assert second.fail_reason == "cannot open bad-\\udcff-name"


async def test_zero_base_retry_interval_retries_at_once(monque, recorder):
    """A retry due at once is often claimed before the failed run's task has even ended:
    that claim must still run (not be mistaken for a stale-recovery duplicate and left
    processing for ever under a live heartbeat)."""
    m = await monque(base_retry_interval=0, max_retries=3, safety_poll_interval=120, poll_interval=120)
    rec = recorder(m, "job:complete", "job:fail")
    attempts: dict[int, list[int]] = {}

    async def handler(job):
        attempts.setdefault(job.data, []).append(job.fail_count)
        if len(attempts[job.data]) < 3:
            raise RuntimeError("again")

    m.register("zero", handler)
    await m.start()
    for i in range(12):  # one job at a time: free slots are what let the early claim happen
        await m.enqueue("zero", i)
        await rec.wait_for("job:complete", count=i + 1, timeout=10)
    assert attempts == {i: [0, 1, 2] for i in range(12)}
    fails = rec.of("job:fail")
    assert len(fails) == 24 and all(f.will_retry for f in fails)
    assert all(f.job.next_run_at_ms <= f.job.updated_at_ms for f in fails)  # due at once

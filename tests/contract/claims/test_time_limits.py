"""Time limits of job runs (issue 37 part 1, ADR 0019), per store.

Handlers over their limit block on an event that never comes (or comes only when the test
has seen what it waits for); tests wait on events and stored state, never on durations.
"""

from __future__ import annotations

import asyncio
import math
import threading

import pytest

from monque_engine import JobStatus, Monque
from monque_engine.errors import InvalidJobQueryError, WorkerRegistrationError
from monque_engine.options import InvalidOptionError

TINY = 0.2  # seconds: the limit of runs that are meant to time out
HOUR = 3600.0
BAD_TIMEOUTS = [0, -1, math.nan, math.inf, -math.inf, 31 * 86_400, "5", True, 0.0001]


async def test_an_async_handler_over_its_limit_is_cancelled_recorded_and_retried(monque, recorder) -> None:
    m = await monque(max_retries=3)
    rec = recorder(m, "job:fail", "job:complete")
    never = asyncio.Event()
    runs: list[str] = []
    cancelled: list[bool] = []

    async def hang_once(job):
        runs.append(job.id)
        if len(runs) == 1:
            try:
                await never.wait()
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

    m.register("hang", hang_once, timeout=TINY)
    job = await m.enqueue("hang")
    await m.start()
    [fail] = await rec.wait_for("job:fail")
    assert fail.will_retry and isinstance(fail.error, TimeoutError)
    assert cancelled == [True]  # the handler itself was cancelled at the deadline
    await rec.wait_for("job:complete")
    stored = await m.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.COMPLETED
    first, second = stored.attempts
    assert (first.outcome, first.error_type) == ("timed_out", "TimeoutError")
    assert "time limit of 0.2 s" in (first.error_message or "")
    assert second.outcome == "completed"
    assert len(runs) == 2


async def test_timeouts_fail_for_good_by_the_retry_policy_and_group_by_name(monque, recorder) -> None:
    m = await monque(max_retries=1)
    rec = recorder(m, "job:fail")
    never = asyncio.Event()

    async def hang(job):
        await never.wait()

    m.register("hang", hang, timeout=TINY)
    a = await m.enqueue("hang", {"n": 1})
    b = await m.enqueue("hang", {"n": 2}, timeout=0.3)  # another limit, the same group
    await m.start()
    await rec.wait_for("job:fail", 2)
    for job_id in (a.id, b.id):
        stored = await m.get_job(job_id)
        assert stored is not None and stored.status is JobStatus.FAILED
        assert [at.outcome for at in stored.attempts] == ["timed_out"]
        assert stored.error_type == "TimeoutError"
    stored_a, stored_b = await m.get_job(a.id), await m.get_job(b.id)
    assert stored_a is not None and stored_b is not None and stored_a.error_group == stored_b.error_group


async def test_a_sync_handler_over_its_limit_keeps_its_job_owned_until_it_returns(monque, recorder, wait_until) -> None:
    m = await monque(max_retries=3)
    rec = recorder(m, "job:fail", "job:complete", "job:start")
    release = threading.Event()
    runs: list[str] = []

    def block_once(job):
        runs.append(job.id)
        if len(runs) == 1:
            release.wait()  # past the limit: a thread cannot be stopped
            return "done late"
        return None

    m.register("block", block_once, timeout=TINY)
    job = await m.enqueue("block")
    await m.start()

    async def over_limit():
        stored = await m.get_job(job.id)
        return stored if stored is not None and stored.over_limit else None

    marked = await wait_until(over_limit, message="the job is marked over its time limit")
    assert marked.status is JobStatus.PROCESSING and marked.claimed_by == m.instance_id
    assert marked.over_limit_at_ms is not None and marked.over_limit_at_ms >= (marked.locked_at_ms or 0)
    beat = marked.last_heartbeat_ms

    async def beaten():
        stored = await m.get_job(job.id)
        return stored is not None and stored.last_heartbeat_ms != beat

    await wait_until(beaten, message="heartbeats go on while the thread runs")
    still = await m.get_job(job.id)
    assert still is not None and still.status is JobStatus.PROCESSING and still.fail_count == 0
    assert rec.of("job:fail") == [] and len(runs) == 1  # no retry scheduled, no second run
    release.set()
    [fail] = await rec.wait_for("job:fail")
    assert fail.will_retry and isinstance(fail.error, TimeoutError)
    await rec.wait_for("job:complete")
    stored = await m.get_job(job.id)
    assert stored is not None
    first, second = stored.attempts
    assert (first.outcome, first.error_type) == ("timed_out", "TimeoutError")
    assert "ran on until it returned" in (first.error_message or "")
    assert second.outcome == "completed" and not stored.over_limit
    assert len(runs) == 2


async def test_sync_code_can_poll_its_deadline(monque, recorder) -> None:
    m = await monque(max_retries=0)
    rec = recorder(m, "job:fail")
    seen: list[object] = []
    wake = threading.Event()  # never set: the loop ends by should_stop() alone

    def cooperative(job):
        seen.append(job.deadline)
        while not job.should_stop():
            wake.wait(0.01)

    m.register("coop", cooperative, timeout=TINY)
    job = await m.enqueue("coop")
    await m.start()
    await rec.wait_for("job:fail")
    stored = await m.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.FAILED
    assert [at.outcome for at in stored.attempts] == ["timed_out"]
    [deadline] = seen
    started = stored.attempts[0].started_at
    assert deadline is not None and started is not None and deadline > started


async def test_the_job_s_own_limit_wins_over_the_registered_one(monque, recorder) -> None:
    m = await monque(max_retries=0)
    rec = recorder(m, "job:fail", "job:complete")
    never = asyncio.Event()
    deadlines: dict[str, object] = {}

    async def handler(job):
        deadlines[job.data["kind"]] = (job.deadline, job.locked_at)
        if job.data["kind"] == "short":
            await never.wait()

    m.register("mixed", handler, timeout=HOUR)
    short = await m.enqueue("mixed", {"kind": "short"}, timeout=TINY)
    long = await m.enqueue("mixed", {"kind": "long"})
    await m.start()
    await rec.wait_for("job:fail")
    await rec.wait_for("job:complete")
    stored_short = await m.get_job(short.id)
    assert stored_short is not None and stored_short.timeout == TINY
    assert [at.outcome for at in stored_short.attempts] == ["timed_out"]
    stored_long = await m.get_job(long.id)
    assert stored_long is not None and stored_long.timeout is None and stored_long.status is JobStatus.COMPLETED
    # The registered hour applied to the job without a limit of its own.
    deadline, locked_at = deadlines["long"]  # type: ignore[misc]
    assert (deadline - locked_at).total_seconds() > HOUR / 2  # type: ignore[operator]


async def test_the_instance_default_applies_without_a_registered_limit(monque, recorder) -> None:
    m = await monque(max_retries=0, job_timeout=TINY)
    rec = recorder(m, "job:fail")
    never = asyncio.Event()

    async def hang(job):
        await never.wait()

    m.register("hang", hang)
    job = await m.enqueue("hang")
    await m.start()
    [fail] = await rec.wait_for("job:fail")
    assert isinstance(fail.error, TimeoutError) and not fail.will_retry
    stored = await m.get_job(job.id)
    assert stored is not None and [at.outcome for at in stored.attempts] == ["timed_out"]


async def test_no_limit_means_no_deadline(monque, recorder) -> None:
    m = await monque()
    rec = recorder(m, "job:complete")
    seen: list[object] = []
    m.register("free", lambda job: seen.append((job.deadline, job.should_stop())))
    await m.enqueue("free")
    await m.start()
    await rec.wait_for("job:complete")
    assert seen == [(None, False)]


@pytest.mark.parametrize("bad", BAD_TIMEOUTS)
async def test_bad_timeouts_are_refused_with_a_clear_error(monque, bad) -> None:
    m: Monque = await monque()
    with pytest.raises(WorkerRegistrationError, match="timeout for 'x' must"):
        m.register("x", lambda job: None, timeout=bad)
    assert m.registered_names == []
    with pytest.raises(InvalidJobQueryError, match=r"^timeout must"):
        await m.enqueue("x", timeout=bad)
    with pytest.raises(InvalidJobQueryError, match="enqueue_many item 1: timeout must"):
        await m.enqueue_many([{"name": "x", "data": 1}, {"name": "x", "data": 2, "timeout": bad}])
    with pytest.raises(InvalidJobQueryError, match=r"^timeout must"):
        await m.schedule("* * * * *", "x", timeout=bad)
    assert (await m.get_queue_stats()).total == 0  # nothing stored
    with pytest.raises(InvalidOptionError, match="job_timeout must"):
        Monque("sqlite:///:memory:", job_timeout=bad)


async def test_a_job_s_limit_is_stored_by_every_intake_path(monque) -> None:
    m = await monque()
    one = await m.enqueue("x", timeout=2.5)
    many = await m.enqueue_many([{"name": "x", "data": 1, "timeout": 7}, {"name": "x", "data": 2}])
    keyed = await m.enqueue("x", unique_key="k", timeout=0.25)
    cron = await m.schedule("* * * * *", "x", timeout=60)
    expected = {one.id: 2.5, many[0].id: 7.0, many[1].id: None, keyed.id: 0.25, cron.id: 60.0}
    for job_id, limit in expected.items():
        stored = await m.get_job(job_id)
        assert stored is not None and stored.timeout == limit, job_id
    assert [job.timeout for job in many] == [7.0, None] and one.timeout == 2.5


@pytest.mark.parametrize("bad", [0, -5, "60000", 31 * 86_400_000, 1.5])
async def test_an_import_with_a_bad_stored_limit_is_refused(monque, bad) -> None:
    m = await monque()
    job = (await m.enqueue("x", timeout=1)).replace(id="65a1b2c3d4e5f60718293a4b", timeout_ms=bad)
    with pytest.raises(InvalidJobQueryError, match=r"timeout_ms is .*; it must be None or a positive int"):
        await m.import_jobs([job])
    assert await m.get_job(job.id) is None


async def test_an_imported_limit_and_over_limit_stamp_are_stored(monque) -> None:
    m = await monque()
    job = (await m.enqueue("x")).replace(
        id="65a1b2c3d4e5f60718293a4c", timeout_ms=1500, over_limit_at_ms=1_700_000_000_000
    )
    assert await m.import_jobs([job]) == 1
    stored = await m.get_job(job.id)
    assert stored is not None and (stored.timeout_ms, stored.over_limit_at_ms) == (1500, 1_700_000_000_000)

"""Attempt history (issue 12 item 1): every finished attempt is recorded on the job, per store.

Outcomes: completed, retrying, failed (retries exhausted), stale (stale recovery) and
shutdown (a stopping instance gave up on the job). Failures carry the qualified type, the
message and the traceback with chained causes; failReason stays exactly as upstream.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta

from monque_engine import Attempt, JobStatus
from monque_engine.attempts import MAX_ATTEMPTS


class SigningError(Exception):
    pass


async def test_a_success_records_one_completed_attempt(monque, recorder) -> None:
    m = await monque()
    rec = recorder(m, "job:complete")
    m.register("ok", lambda job: None)
    job = await m.enqueue("ok", {"n": 1})
    await m.start()
    [event] = await rec.wait_for("job:complete")
    stored = await m.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.COMPLETED
    [attempt] = stored.attempts
    assert isinstance(attempt, Attempt)
    assert (attempt.number, attempt.outcome, attempt.instance_id) == (1, "completed", m.instance_id)
    assert attempt.started_at_ms is not None and attempt.started_at_ms <= attempt.ended_at_ms
    assert attempt.duration_ms == attempt.ended_at_ms - attempt.started_at_ms
    assert (attempt.error_type, attempt.error_message, attempt.traceback) == (None, None, None)
    assert stored.error_type is None and stored.error_group is None
    assert (stored.claimed_by, stored.locked_at_ms, stored.last_heartbeat_ms) == (None, None, None)
    assert event.job.attempts == stored.attempts  # the event's job is the stored one
    assert event.job == stored


async def test_a_failure_then_success_records_type_message_and_traceback(monque, recorder) -> None:
    m = await monque(max_retries=3)
    rec = recorder(m, "job:complete", "job:fail")
    calls = []

    def sign(job):
        calls.append(job.id)
        if len(calls) == 1:
            secrets: dict[str, str] = {}
            return secrets["signing_secret"]
        return None

    m.register("sign", sign)
    job = await m.enqueue("sign")
    await m.start()
    [fail] = await rec.wait_for("job:fail")
    assert fail.job.fail_reason == "'signing_secret'"  # upstream's failReason, unchanged
    assert fail.job.error_type == "KeyError" and re.fullmatch(r"[0-9a-f]{16}", fail.job.error_group or "")
    await rec.wait_for("job:complete")
    stored = await m.get_job(job.id)
    first, second = stored.attempts
    assert (first.number, first.outcome, first.error_type, first.error_message) == (
        1,
        "retrying",
        "KeyError",
        "'signing_secret'",
    )
    assert first.summary == "KeyError: 'signing_secret'"
    assert first.traceback.startswith("Traceback (most recent call last):")
    assert "in sign" in first.traceback and first.traceback.rstrip().endswith("KeyError: 'signing_secret'")
    assert (second.number, second.outcome, second.error_type) == (2, "completed", None)
    assert stored.fail_reason is None and stored.error_type is None and stored.error_group is None


async def test_retries_exhausted_record_failed_with_chained_causes(monque, recorder) -> None:
    m = await monque(max_retries=2)
    rec = recorder(m, "job:fail")

    def handler(job):
        try:
            raise ConnectionRefusedError("smtp.example.com:25 refused")
        except ConnectionRefusedError as cause:
            raise SigningError("could not sign order 42") from cause

    m.register("mail", handler)
    job = await m.enqueue("mail")
    await m.start()
    await rec.wait_for("job:fail", where=lambda e: not e.will_retry)
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.FAILED
    assert [(a.number, a.outcome) for a in stored.attempts] == [(1, "retrying"), (2, "failed")]
    last = stored.attempts[-1]
    assert last.error_type == f"{__name__}.SigningError"
    assert last.error_message == "could not sign order 42" == stored.fail_reason
    assert "ConnectionRefusedError: smtp.example.com:25 refused" in last.traceback
    assert "The above exception was the direct cause of the following exception" in last.traceback
    assert stored.error_type == last.error_type


async def test_an_exception_that_cannot_be_described_is_still_recorded(monque, recorder) -> None:
    class Hostile(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    m = await monque(max_retries=1)
    rec = recorder(m, "job:fail")

    def handler(job):
        raise Hostile()

    m.register("hostile", handler)
    job = await m.enqueue("hostile")
    await m.start()
    await rec.wait_for("job:fail")
    stored = await m.get_job(job.id)
    [attempt] = stored.attempts
    assert attempt.outcome == "failed" and attempt.error_type.endswith("Hostile")
    assert attempt.error_message == "Hostile (its message could not be read)" == stored.fail_reason
    assert attempt.traceback and "Hostile" in attempt.traceback


async def test_stale_recovery_records_a_stale_attempt(monque, raw) -> None:
    m = await monque(lock_timeout=1)
    job = await m.enqueue("long")
    locked = datetime.now(UTC) - timedelta(minutes=5)
    await raw(m).set(
        job.id, status="processing", claimedBy="ghost-instance", lockedAt=locked, lastHeartbeat=locked, failCount=2
    )
    assert await m.recover_stale_jobs() == 1
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.PENDING
    [attempt] = stored.attempts
    assert (attempt.number, attempt.outcome, attempt.instance_id) == (3, "stale", "ghost-instance")
    assert attempt.started_at_ms == int(locked.timestamp() * 1000)
    assert attempt.duration_ms is not None and attempt.duration_ms >= 5 * 60 * 1000 - 1000


async def test_shutdown_timeout_records_a_shutdown_attempt_that_stale_recovery_keeps(monque, recorder) -> None:
    m = await monque(shutdown_timeout=0.2, lock_timeout=3600)
    rec = recorder(m, "job:start")
    never = asyncio.Event()

    async def stuck(job):
        await never.wait()

    m.register("stuck", stuck)
    job = await m.enqueue("stuck")
    await m.start()
    await rec.wait_for("job:start")
    await m.stop()
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.PROCESSING  # left for stale recovery (ADR 0004)
    [attempt] = stored.attempts
    assert (attempt.outcome, attempt.instance_id, attempt.number) == ("shutdown", m.instance_id, 1)
    assert attempt.started_at_ms == stored.locked_at_ms
    # Stale recovery returns it without recording the same attempt twice.
    store = m.store
    assert await store.recover_stale(stored.last_heartbeat_ms + 1, stored.last_heartbeat_ms + 2) == 1
    recovered = await m.get_job(job.id)
    assert recovered.status is JobStatus.PENDING
    assert [a.outcome for a in recovered.attempts] == ["shutdown"]


async def test_the_history_keeps_the_last_ten_attempts(monque) -> None:
    """Store level: claim and fail the same job twelve times."""
    m = await monque()
    store = m.store
    job = await m.enqueue("flaky")
    from monque_engine.attempts import failure_attempt

    for n in range(12):
        now = int(datetime.now(UTC).timestamp() * 1000) + n
        [claimed] = await store.claim("flaky", "me", now + 10_000, 1, 30_000)
        try:
            raise ValueError(f"try {n + 1}")
        except ValueError as error:
            record = failure_attempt(claimed.fail_count, "me", claimed.locked_at_ms, now, error, True)
        updated = await store.fail(job.id, "me", now, n + 1, str(n), now, record, "0123456789abcdef")
        assert updated is not None
    stored = await m.get_job(job.id)
    assert len(stored.attempts) == MAX_ATTEMPTS
    assert [a.number for a in stored.attempts] == list(range(3, 13))
    assert [a.error_message for a in stored.attempts] == [f"try {n}" for n in range(3, 13)]
    assert stored.error_group == "0123456789abcdef" and stored.error_type == "ValueError"

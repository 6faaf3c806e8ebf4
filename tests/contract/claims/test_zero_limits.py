"""Upstream parity: options (``tests/unit/runtime-options.test.ts``).

Upstream "preserves zero limits": a count of 0 is a limit, not an error. Concurrency 0
claims nothing, ``max_retries=0`` makes the first failure final, ``max_backoff_delay=0``
retries at once, ``max_payload_size=0`` refuses every payload. One deliberate difference:
``lock_timeout=0`` stays refused (see the test's docstring).
"""

from __future__ import annotations

import math

import pytest

from monque_engine import InvalidOptionError, JobStatus, Monque, PayloadTooLargeError, WorkerRegistrationError


def test_zero_limits_are_accepted(tmp_path):
    """'preserves zero limits and timer bounds' (ours in seconds)."""
    m = Monque(
        f"sqlite:///{tmp_path}/x.db",
        worker_concurrency=0,
        instance_concurrency=0,
        max_retries=0,
        base_retry_interval=0,
        max_backoff_delay=0,
        shutdown_timeout=0,
        max_payload_size=0,
        stats_cache_ttl=0,
        poll_interval=0.001,
        job_retention={"completed": 0, "failed": 0, "interval": 0.001},
    )
    o = m.options
    assert (o.worker_concurrency, o.instance_concurrency, o.max_retries, o.max_payload_size) == (0, 0, 0, 0)
    assert o.max_backoff_delay == 0


@pytest.mark.parametrize("name", ["worker_concurrency", "instance_concurrency", "max_retries", "max_payload_size"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -1, 0.5, 2**63, True], ids=repr)
def test_invalid_counts_are_refused(tmp_path, name, value):
    """'rejects invalid %s values'."""
    with pytest.raises(InvalidOptionError, match=name):
        Monque(f"sqlite:///{tmp_path}/x.db", **{name: value})


def test_a_zero_lock_timeout_is_refused_on_purpose(tmp_path):
    """Deliberate difference: upstream accepts ``lockTimeout: 0``. Here a job is stale when
    its owner's heartbeat is older than ``lock_timeout`` (ADR 0004), so 0 would hand every
    running job to another worker at each recovery tick: the parallel copies issue 9 forbids."""
    with pytest.raises(InvalidOptionError, match="lock_timeout"):
        Monque(f"sqlite:///{tmp_path}/x.db", lock_timeout=0)


async def test_register_accepts_concurrency_zero_and_validates_before_replacing(monque):
    """'validates registration before changing the registered worker'."""
    m = await monque()
    for concurrency in (math.nan, math.inf, -1, 0.5):
        with pytest.raises(WorkerRegistrationError, match="Concurrency"):
            m.register("email", lambda job: None, concurrency=concurrency)  # type: ignore[arg-type]
    m.register("email", lambda job: None, concurrency=0)
    with pytest.raises(WorkerRegistrationError, match="Concurrency"):
        m.register("email", lambda job: None, replace=True, concurrency=-1)
    with pytest.raises(WorkerRegistrationError, match="already registered"):
        m.register("email", lambda job: None)
    (view,) = await m.get_queue_view_summaries("email")
    assert view.worker is not None and view.worker.concurrency == 0


async def test_max_retries_zero_makes_the_first_failure_final(monque, recorder):
    m = await monque(max_retries=0)
    rec = recorder(m, "job:fail")

    def handler(job):
        raise RuntimeError("boom")

    m.register("once", handler)
    job = await m.enqueue("once", {})
    await m.start()
    (event,) = await rec.wait_for("job:fail")
    assert event.will_retry is False
    stored = await m.get_job(job.id)
    assert (stored.status, stored.fail_count, stored.fail_reason) == (JobStatus.FAILED, 1, "boom")


async def test_max_backoff_delay_zero_retries_at_once(monque, recorder):
    m = await monque(base_retry_interval=10, max_backoff_delay=0, max_retries=3)
    rec = recorder(m, "job:fail", "job:complete")
    calls: list[int] = []

    def handler(job):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("once")

    m.register("retry", handler)
    await m.enqueue("retry", {})
    await m.start()
    await rec.wait_for("job:complete")  # within the default wait: not after a 20 s backoff
    assert len(calls) == 2


async def test_concurrency_zero_claims_nothing(monque, recorder):
    """A worker with concurrency 0 is registered but claims nothing; a sibling with room
    runs its job (so the check is made after a full processing round, not after a sleep)."""
    m = await monque()
    rec = recorder(m, "job:complete")
    m.register("idle", lambda job: None, concurrency=0)
    m.register("busy", lambda job: None)
    idle = await m.enqueue("idle", {})
    await m.enqueue("busy", {})
    await m.start()
    await rec.wait_for("job:complete")
    await m.enqueue("busy", {})
    await rec.wait_for("job:complete", count=2)
    assert (await m.get_job(idle.id)).status is JobStatus.PENDING


async def test_max_payload_size_zero_refuses_every_payload(monque):
    m = await monque(max_payload_size=0)
    with pytest.raises(PayloadTooLargeError) as info:
        await m.enqueue("job", {})
    assert info.value.max_size == 0
    assert await m.get_jobs() == []

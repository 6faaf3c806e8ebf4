"""Under ``instance_concurrency``, a freed slot goes to the names the cap kept waiting.

Found by the acceptance probe (upstream's worker-fairness test, translated): with ``instance_concurrency=1``
the name whose job had just finished was woken first and took its own slot back, so a name
with a long queue held the instance until that queue drained while another name starved.
Now the freed slot is offered round-robin, starting after the name that freed it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from monque_engine import Monque
from tests.conftest import SHORT_INTERVALS, EventRecorder, poll_until


async def test_a_busy_name_does_not_starve_a_waiting_one_under_an_instance_cap(tmp_path: Path) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **{**SHORT_INTERVALS, "instance_concurrency": 1})
    await m.initialize()
    rec = EventRecorder().attach(m, "job:complete")
    started: list[str] = []

    async def handler(job: Any) -> None:
        started.append(job.name)

    for name in ("a", "b", "c"):
        m.register(name, handler)
    try:
        await m.enqueue_many([{"name": name, "data": i} for name in ("a", "b", "c") for i in range(3)])
        await m.start()
        await rec.wait_for("job:complete", count=9)
        assert started == ["a", "b", "c"] * 3
    finally:
        await m.close()


async def test_upstream_serves_a_waiting_worker_before_refilling_a_busy_one(tmp_path: Path) -> None:
    """upstream tests/integration/worker-fairness.test.ts, polling variant."""
    import asyncio

    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **{**SHORT_INTERVALS, "instance_concurrency": 1})
    await m.initialize()
    started: list[str] = []
    releases: list[asyncio.Event] = []

    async def busy(job: Any) -> None:
        started.append("busy")
        release = asyncio.Event()
        releases.append(release)
        await release.wait()

    m.register("empty", lambda job: None)
    m.register("busy", busy)
    m.register("waiting", lambda job: started.append("waiting"))
    try:
        await m.enqueue("busy")
        await m.enqueue("busy")
        await m.enqueue("waiting")
        await m.start()
        rec = EventRecorder().attach(m, "job:complete")
        await poll_until(lambda: releases, message="the first busy job runs")
        releases[0].set()
        await rec.wait_for("job:complete", count=2)  # the first busy job, then the waiting one
        assert started[:2] == ["busy", "waiting"]
    finally:
        for release in releases:
            release.set()
        await m.close()


async def test_pausing_a_waiting_name_gives_its_turn_back(tmp_path: Path) -> None:
    """A name waiting for the cap holds the next free slot; paused, it must not keep it."""
    import asyncio

    # No poll to paper over a missed wake-up: only the processor's own wake-ups run jobs.
    options = {**SHORT_INTERVALS, "instance_concurrency": 1, "poll_interval": 60, "safety_poll_interval": 60}
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **options)
    await m.initialize()
    rec = EventRecorder().attach(m, "job:complete")
    release = asyncio.Event()

    async def long(job: Any) -> None:
        await release.wait()

    m.register("long", long)
    m.register("other", lambda job: None)
    try:
        first = await m.enqueue("long", 1)
        await m.start()
        await poll_until(lambda: m.running_job_count == 1, message="the long job runs")
        await m.enqueue("other")
        await poll_until(lambda: "other" in m._processor._starved, message="other waits for the cap")
        await m.pause("other")
        second = await m.enqueue("long", 2)
        release.set()
        await rec.wait_for("job:complete", where=lambda e: e.job.id == first.id)
        await rec.wait_for("job:complete", where=lambda e: e.job.id == second.id)
        assert [e.job.name for e in rec.of("job:complete")] == ["long", "long"]
    finally:
        release.set()
        await m.close()


async def test_a_replacement_registered_before_a_claimed_job_starts_handles_it(tmp_path: Path) -> None:
    """upstream tests/integration/worker-fairness.test.ts: 'uses a replacement registered
    before that worker is visited'. The handler is the one registered when the run starts."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **{**SHORT_INTERVALS, "instance_concurrency": 2})
    await m.initialize()
    rec = EventRecorder().attach(m, "job:complete")
    handled: list[str] = []

    async def first(job: Any) -> None:
        m.register("second", lambda job: handled.append("new"), replace=True)

    m.register("first", first, concurrency=1)
    m.register("second", lambda job: handled.append("old"))
    try:
        await m.enqueue("first")
        await m.enqueue("second")
        await m.start()
        await rec.wait_for("job:complete", count=2)
        assert handled == ["new"]
    finally:
        await m.close()


async def test_register_from_a_sync_handler_thread_works_while_running(tmp_path: Path) -> None:
    """It used to fail with 'no running event loop' half way, leaving the name registered
    without a claim loop: its jobs never ran again in this process."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **SHORT_INTERVALS)
    await m.initialize()
    rec = EventRecorder().attach(m, "job:complete", "job:fail")

    def adds_a_worker(job: Any) -> None:  # runs in a thread
        m.register("later", lambda job: None)
        m.register("spare", lambda job: None, replace=True)

    m.register("adds", adds_a_worker)
    m.register("spare", lambda job: None)
    try:
        await m.start()
        added = await m.enqueue("adds")
        await rec.wait_for("job:complete", where=lambda e: e.job.id == added.id)
        assert rec.of("job:fail") == []
        later, spare = await m.enqueue("later"), await m.enqueue("spare")
        await rec.wait_for("job:complete", where=lambda e: e.job.id == later.id)
        await rec.wait_for("job:complete", where=lambda e: e.job.id == spare.id)
    finally:
        await m.close()

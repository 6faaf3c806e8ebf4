"""A job this instance claimed but no longer runs must age out, even while it runs others.

Found by the acceptance probe (a real full disk, a 600 KB tmpfs): a job whose completion and then failure
could not be written (``database or disk is full``) stayed ``processing``, claimed by the
live instance. (A completion is now written again until the store takes it, ADR 0026; a
handler's failure that cannot be written, in full or plainly, is still left to recovery,
which is what this file drives.) The heartbeat refreshed *every* processing job of the owner whenever any job
ran, so on a busy worker such a job was never recovered. The heartbeat now covers only the
jobs the processor runs (ADR 0004 addendum); stale recovery returns the dropped one.

The failing outcome writes are simulated by wrapping the SQLite store's ``complete`` /
``fail`` (a fake failure on a real store and file); everything else is the real store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from monque_engine import ConnectionError, JobStatus, Monque
from monque_engine.timeutil import now_ms
from tests.conftest import SHORT_INTERVALS, EventRecorder


async def test_a_job_whose_outcome_could_not_be_written_is_recovered_while_the_instance_runs_others(
    tmp_path: Path,
) -> None:
    m = Monque(
        f"sqlite:///{tmp_path}/jobs.db",
        **{**SHORT_INTERVALS, "lock_timeout": 1.0, "stale_recovery_interval": 0.1},
    )
    await m.initialize()
    rec = EventRecorder().attach(m, "job:start", "job:complete", "job:error", "stale:recovered")
    store: Any = m.store
    broken: set[str] = set()
    real_complete, real_fail = store.complete, store.fail

    async def complete(job_id: str, *args: Any, **kwargs: Any) -> Any:
        if job_id in broken:
            raise ConnectionError("SQLite database jobs.db: database or disk is full")
        return await real_complete(job_id, *args, **kwargs)

    refused: dict[str, int] = {}

    async def fail(job_id: str, *args: Any, **kwargs: Any) -> Any:
        if job_id in broken:
            # The failure and its plain fallback record (ADR 0010) are both refused; the disk
            # has space again after that.
            refused[job_id] = refused.get(job_id, 0) + 1
            if refused[job_id] == 2:
                broken.discard(job_id)
            raise ConnectionError("SQLite database jobs.db: database or disk is full")
        return await real_fail(job_id, *args, **kwargs)

    store.complete, store.fail = complete, fail

    release_long = asyncio.Event()

    async def long_job(job: Any) -> None:
        await release_long.wait()

    m.register("long", long_job)
    quick_runs: list[str] = []

    def quick_job(job: Any) -> None:
        quick_runs.append(job.id)
        if len(quick_runs) == 1:
            raise RuntimeError("the first run fails, and its failure cannot be written")

    m.register("quick", quick_job)
    try:
        long = await m.enqueue("long")
        await m.start()
        await rec.wait_for("job:start", where=lambda j: j.id == long.id)
        quick = await m.enqueue("quick")
        broken.add(quick.id)
        # Every outcome write fails: the job is left processing under this live instance.
        await rec.wait_for("job:error", where=lambda e: e.job is not None and e.job.id == quick.id)
        # While "long" keeps the instance busy (and heartbeating), "quick" still ages out,
        # is recovered and runs again.
        await rec.wait_for("stale:recovered")
        await rec.wait_for("job:complete", where=lambda e: e.job.id == quick.id)
        assert len([j for j in rec.of("job:start") if j.id == quick.id]) == 2
        # The job that really runs was never taken from it.
        assert len([j for j in rec.of("job:start") if j.id == long.id]) == 1
        stored = await m.get_job(long.id)
        assert stored is not None and stored.status is JobStatus.PROCESSING
        release_long.set()
        await rec.wait_for("job:complete", where=lambda e: e.job.id == long.id)
    finally:
        release_long.set()
        await m.close()


async def test_the_heartbeat_refreshes_only_the_jobs_it_is_given(tmp_path: Path) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **SHORT_INTERVALS)
    await m.initialize()
    try:
        a, b = await m.enqueue("n"), await m.enqueue("n")
        t = now_ms()
        claimed = await m.store.claim("n", "me", t, 2, 50)
        assert {job.id for job in claimed} == {a.id, b.id}
        assert await m.store.heartbeat("me", t + 5_000, [a.id]) == 1
        assert await m.store.heartbeat("me", t + 5_000, []) == 0
        assert await m.store.heartbeat("other", t + 6_000, [b.id]) == 0
        beats = {job.id: job.last_heartbeat_ms for job in await m.get_jobs()}
        assert beats == {a.id: t + 5_000, b.id: t}
        assert await m.store.heartbeat("me", t + 7_000) == 2  # None: every job of the owner
    finally:
        await m.close()


def test_the_mongodb_heartbeat_filter_names_the_running_jobs() -> None:
    """MongoDB (query documents only: no server here): the same scoping as SQLite's."""
    from bson import ObjectId

    from monque_engine.store.mongo.liveness import heartbeat_filter

    job_id = "6b117c53867ec955fff4e5a9"
    assert heartbeat_filter("me") == {"claimedBy": "me", "status": "processing"}
    assert heartbeat_filter("me", [job_id]) == {
        "_id": {"$in": [ObjectId(job_id)]},
        "claimedBy": "me",
        "status": "processing",
    }

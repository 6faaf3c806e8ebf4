"""Stop requests and progress in one process on a real SQLite file (issue 37 parts 2 and 3):
the owners a stop cannot reach, the bulk stop, and progress reports' checks and throttle.
The cross-process paths are in ``test_multiprocess_running_jobs.py``."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from monque_engine import JobSelector, Monque, StopRefusedError
from monque_engine.job import InstanceRecord, Job, JobStatus
from monque_engine.run_progress import MAX_PROGRESS_MESSAGE, InvalidProgressError
from monque_engine.timeutil import now_ms


def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"


async def claimed_by(monque: Monque, owner: str) -> Job:
    await monque.enqueue("task", {})
    [job] = await monque.store.claim("task", owner, now_ms(), 1, 30_000)
    return job


async def test_a_job_whose_owner_is_not_registered_cannot_be_stopped(tmp_path: Path) -> None:
    async with Monque(url(tmp_path)) as monque:
        job = await claimed_by(monque, "node-worker-1")  # a Node worker: never in the registry
        with pytest.raises(StopRefusedError) as refused:
            await monque.cancel_job(job.id, running=True)
        assert refused.value.reason == "unknown_owner" and refused.value.owner == "node-worker-1"
        assert "not in the instance registry" in str(refused.value)
        after = await monque.get_job(job.id)
        assert after is not None and after.status is JobStatus.PROCESSING and after.stop_requested_at_ms is None


async def test_a_job_whose_owner_is_dead_points_to_the_dead_owner_release(tmp_path: Path) -> None:
    async with Monque(url(tmp_path)) as monque:
        beat = now_ms() - 600_000  # ten minutes without a beat at a 1 s interval
        await monque.store.upsert_instance(InstanceRecord("w-dead", "h", 1, "v", beat, 1_000, {}, 1, 0, 0, beat))
        job = await claimed_by(monque, "w-dead")
        with pytest.raises(StopRefusedError) as refused:
            await monque.cancel_job(job.id, running=True)
        assert refused.value.reason == "dead_owner" and "release-dead-owner w-dead" in str(refused.value)
        after = await monque.get_job(job.id)
        assert after is not None and after.stop_requested_at_ms is None


async def test_without_running_a_processing_job_is_still_refused_as_upstream(tmp_path: Path) -> None:
    from monque_engine import JobStateError

    async with Monque(url(tmp_path)) as monque:
        job = await claimed_by(monque, "node-worker-1")
        with pytest.raises(JobStateError, match="Cannot cancel job in status 'processing'"):
            await monque.cancel_job(job.id)


async def test_a_bulk_stop_reaches_the_running_jobs_of_its_selection_only(tmp_path: Path) -> None:
    hanging: dict[str, asyncio.Event] = {}
    started = asyncio.Event()

    async def hang(job: Job) -> None:
        hanging[job.id] = asyncio.Event()
        if len(hanging) == 2:
            started.set()
        await asyncio.Event().wait()

    async with Monque(url(tmp_path), poll_interval=0.05) as monque:
        monque.register("task", hang, concurrency=2)
        cancelled: list[str] = []
        done = asyncio.Event()

        def on_cancelled(event: Any) -> None:
            cancelled.append(event.job.id)
            if len(cancelled) == 2:
                done.set()

        monque.on("job:cancelled", on_cancelled)
        await monque.start()
        running = [await monque.enqueue("task", {"n": n}) for n in range(2)]
        await asyncio.wait_for(started.wait(), 30)
        waiting = await monque.enqueue("other", {})
        result = await monque.stop_jobs(JobSelector(name="task"))
        assert (result.count, result.errors) == (2, [])
        await asyncio.wait_for(done.wait(), 30)
        assert sorted(cancelled) == sorted(job.id for job in running)
        for job in running:
            now = await monque.get_job(job.id)
            assert now is not None and now.status is JobStatus.CANCELLED
            assert [a.outcome for a in now.attempts] == ["cancelled"]
        other = await monque.get_job(waiting.id)
        assert other is not None and other.status is JobStatus.PENDING  # not running: a stop is not a cancel


async def test_progress_is_checked_and_throttled_to_one_write_a_second(tmp_path: Path) -> None:
    problems: list[str] = []
    reported = asyncio.Event()
    release = asyncio.Event()

    async def handler(job: Job) -> None:
        for bad in (-0.1, 1.5, math.nan, True, "half"):
            try:
                await job.report_progress(bad)  # type: ignore[arg-type]
            except InvalidProgressError as error:
                problems.append(str(error))
        try:
            await job.report_progress(0.5, "x" * (MAX_PROGRESS_MESSAGE + 1))
        except InvalidProgressError as error:
            problems.append(str(error))
        for step in range(1, 101):
            await job.report_progress(step / 100, f"step {step}")
        reported.set()
        await release.wait()

    async with Monque(url(tmp_path), poll_interval=0.05) as monque:
        writes: list[float] = []
        wrote_last = asyncio.Event()
        original = monque.store.report_progress

        async def counted(job_id: str, owner: str, at: int, progress: Any) -> bool:
            writes.append(progress.fraction)
            written = await original(job_id, owner, at, progress)
            if progress.fraction == 1.0:
                wrote_last.set()  # once stored: get_job below reads it
            return written

        monque.store.report_progress = counted  # type: ignore[method-assign, assignment]
        monque.register("task", handler)
        await monque.start()
        job = await monque.enqueue("task", {})
        await asyncio.wait_for(reported.wait(), 30)
        assert len(problems) == 6 and all("progress" in problem for problem in problems)
        # A hundred reports in a row: the first is written at once, the latest after the second.
        assert writes == [0.01]
        await asyncio.wait_for(wrote_last.wait(), 30)
        assert writes == [0.01, 1.0]
        stored = await monque.get_job(job.id)
        assert stored is not None and stored.running_progress is not None
        assert (stored.running_progress.fraction, stored.running_progress.message) == (1.0, "step 100")
        release.set()


async def test_progress_outside_the_handler_is_refused(tmp_path: Path) -> None:
    async with Monque(url(tmp_path)) as monque:
        job = await monque.enqueue("task", {})
        with pytest.raises(InvalidProgressError, match="from that job's own handler"):
            await job.report_progress(0.5)
        with pytest.raises(InvalidProgressError, match="from that job's own handler"):
            job.report_progress_sync(0.5)


async def test_the_store_writes_a_stop_only_for_the_claim_it_names(tmp_path: Path) -> None:
    """The write's own guard (owner and lockedAt), for a request racing a new claim."""
    async with Monque(url(tmp_path)) as monque:
        job = await claimed_by(monque, "w-1")
        assert job.locked_at_ms is not None
        store = monque.store
        assert await store.request_stop(job.id, "w-1", job.locked_at_ms - 1, now_ms()) is None  # an earlier claim
        assert await store.request_stop(job.id, "w-2", job.locked_at_ms, now_ms()) is None  # another owner
        assert await store.stop_requests("w-1", [job.id]) == {}
        # Stamped no earlier than the claim, whatever this process's clock says.
        stopped = await store.request_stop(job.id, "w-1", job.locked_at_ms, job.locked_at_ms - 5_000)
        assert stopped is not None and stopped.stop_requested_at_ms == job.locked_at_ms and stopped.stop_pending
        assert await store.stop_requests("w-1", [job.id]) == {job.id: (job.locked_at_ms, job.locked_at_ms)}

"""Stopping running jobs and their progress, with real worker processes on one SQLite file
(issue 37 parts 2 and 3).

The workers are ``tests/procs/worker.py`` with ``--hang``: an async handler awaits an event
that never comes, a ``sync-poll`` one polls ``job.should_stop()``. The stop comes from this
test process (a ``Monque`` of its own on the same file), so the owner hears it through the
change feed across processes. The tests wait on the workers' JSON lines and on the stored
rows, never on sleeps or durations.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # the scripts are imported as tests.procs.*
    sys.path.insert(0, str(REPO_ROOT))

from monque_engine import Monque, StopRefusedError  # noqa: E402
from monque_engine.job import Job, JobStatus  # noqa: E402
from monque_engine.timeutil import ms_to_datetime  # noqa: E402
from tests.procs._common import read_run_logs, sqlite_url  # noqa: E402
from tests.procs.harness import Launcher, Proc, StoreProbe, wait_until  # noqa: E402
from tests.test_multiprocess import READY_TIMEOUT, enqueue_here  # noqa: E402

WAIT = 30.0  # a loaded 2-core machine


def start(procs: Launcher, db: Path, runs_dir: Path, instance: str, *extra: Any) -> Proc:
    args = ["--db", db, "--instance", instance, "--runs-dir", runs_dir, "--print-jobs", "--poll-interval", "0.1"]
    worker = procs.start(instance, "worker", *args, *extra)
    worker.wait_for("ready", READY_TIMEOUT)
    return worker


def stop(db: Path, job_id: str, claimed_at: datetime | None = None) -> Job | None:
    """``cancel_job(job_id, running=True)`` from this process."""

    async def go() -> Job | None:
        monque = Monque(sqlite_url(str(db)), recover_stale_jobs=False)
        await monque.initialize()
        try:
            return await monque.cancel_job(job_id, running=True, claimed_at=claimed_at)
        finally:
            await monque.close()

    return asyncio.run(go())


def get(db: Path, job_id: str) -> Job | None:
    async def go() -> Job | None:
        monque = Monque(sqlite_url(str(db)), recover_stale_jobs=False)
        await monque.initialize()
        try:
            return await monque.get_job(job_id)
        finally:
            await monque.close()

    return asyncio.run(go())


def outcomes(probe: StoreProbe, job_id: str) -> list[str]:
    row = probe.job(job_id)
    assert row is not None
    return [attempt["outcome"] for attempt in json.loads(row["attempts"] or "[]")]


def test_a_stop_from_another_process_ends_an_async_handler(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    worker = start(procs, db, runs_dir, "w-async", "--hang", "async")
    [job_id] = enqueue_here(db, "task", 1)
    worker.wait_for("hanging", WAIT, where=lambda line: line["job_id"] == job_id)

    requested = stop(db, job_id)
    assert requested is not None and requested.status is JobStatus.PROCESSING
    assert requested.stop_requested_at_ms is not None and requested.stop_pending

    [cancelled] = worker.wait_for("job:cancelled", WAIT, where=lambda line: line["job_id"] == job_id)
    assert cancelled["status"] == "cancelled"
    row = probe.job(job_id)
    assert row is not None and (row["status"], row["claimed_by"]) == ("cancelled", None)
    assert outcomes(probe, job_id) == ["cancelled"]
    kinds = [kind for kind, run_id, _ in read_run_logs(runs_dir) if run_id == job_id]
    assert kinds == ["start", "cancelled"]  # the handler saw its CancelledError, and never ran again
    assert worker.events("job:fail") == []


def test_a_sync_handler_is_asked_to_stop_and_ends_cancelled_when_it_returns(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    worker = start(procs, db, runs_dir, "w-sync", "--hang", "sync-poll")
    [job_id] = enqueue_here(db, "task", 1)
    worker.wait_for("hanging", WAIT, where=lambda line: line["job_id"] == job_id)
    stop(db, job_id)
    worker.wait_for("job:cancelled", WAIT, where=lambda line: line["job_id"] == job_id)
    assert outcomes(probe, job_id) == ["cancelled"]
    kinds = [kind for kind, run_id, _ in read_run_logs(runs_dir) if run_id == job_id]
    assert kinds == ["start", "stopped"]  # job.should_stop() turned true in its thread


def test_a_stop_for_an_attempt_that_moved_on_changes_nothing(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    # Every run hangs; each is timed out after 1 s and retried at once, so the job runs
    # again as a later attempt. A stop for the first attempt must not reach the second.
    worker = start(
        procs, db, runs_dir, "w-async", "--hang", "async", "--hang-every", "--timeout", 1,
        "--max-retries", 8, "--base-retry-interval", 0,
    )  # fmt: skip
    [job_id] = enqueue_here(db, "task", 1)
    [first, second] = worker.wait_for("hanging", WAIT, where=lambda line: line["job_id"] == job_id, count=2)
    assert second["locked_at"] != first["locked_at"]
    with pytest.raises(StopRefusedError) as refused:
        stop(db, job_id, claimed_at=ms_to_datetime(first["locked_at"]))
    assert refused.value.reason == "not_running" and "later attempt" in str(refused.value)
    row = probe.job(job_id)
    assert row is not None and row["stop_requested_at"] is None  # nothing was written
    assert worker.events("job:cancelled") == []

    # An attempt still running can be stopped (and is, so the worker does not retry for
    # ever). Each run times out on its own, so a stop may meet the one that just ended: it
    # says so, and the next run is stopped instead.
    for seen in range(2, 8):
        [*_, running] = worker.wait_for("hanging", WAIT, where=lambda line: line["job_id"] == job_id, count=seen)
        try:
            stop(db, job_id, claimed_at=ms_to_datetime(running["locked_at"]))
        except StopRefusedError as error:
            assert error.reason == "not_running"
            continue
        break
    worker.wait_for("job:cancelled", WAIT, where=lambda line: line["job_id"] == job_id)
    assert outcomes(probe, job_id)[-1] == "cancelled"


def test_a_stop_for_a_job_that_completed_says_so_and_changes_nothing(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    worker = start(procs, db, runs_dir, "w-plain")
    [job_id] = enqueue_here(db, "task", 1)
    worker.wait_for("job:complete", WAIT, where=lambda line: line["job_id"] == job_id)
    before = probe.job(job_id)
    assert before is not None
    with pytest.raises(StopRefusedError) as refused:
        stop(db, job_id, claimed_at=ms_to_datetime(1_700_000_000_000))
    assert refused.value.reason == "not_running" and "now 'completed'" in str(refused.value)
    assert probe.job(job_id) == before


def test_progress_of_a_running_job_shows_in_get_job(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    worker = start(procs, db, runs_dir, "w-progress", "--hang", "async", "--progress", 0.5)
    [job_id] = enqueue_here(db, "task", 1)
    worker.wait_for("progress", WAIT, where=lambda line: line["job_id"] == job_id)

    def reported() -> Job | None:
        job = get(db, job_id)
        return job if job is not None and job.progress is not None else None

    job = wait_until(reported, WAIT, "the progress report is stored", on_timeout=worker.describe)
    assert job.progress is not None and (job.progress.fraction, job.progress.message) == (0.5, "halfway")
    assert job.running_progress == job.progress and job.progress.percent == 50
    stop(db, job_id)
    worker.wait_for("job:cancelled", WAIT, where=lambda line: line["job_id"] == job_id)
    ended = get(db, job_id)
    assert ended is not None and ended.running_progress is None  # not a running attempt's any more

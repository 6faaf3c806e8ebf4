"""The job detail and time limits (issue 37 part 1), under Pilot: a processing job whose
sync handler passed its limit says "over its time limit, still running" with its ages; a
finished attempt that ran over reads ``timed_out`` in the timeline; a job's own limit is a
field. The jobs are stored as a worker leaves them (``import_jobs``: the console's clock is
frozen, so their instants are placed relative to it)."""

from __future__ import annotations

from monque_engine import Attempt, Job, JobStatus, Monque
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import open_detail, running_console
from .test_confirm_width import screen_text

HELD = "65a1b2c3d4e5f60718290001"
DONE = "65a1b2c3d4e5f60718290002"


async def _store(url: str) -> None:
    now = SEED_NOW_MS
    held = Job(
        HELD, "report.build", {"n": 1}, JobStatus.PROCESSING, now - 600_000, now - 600_000, now - 60_000,
        locked_at_ms=now - 600_000, claimed_by="worker-7", last_heartbeat_ms=now - 1_000,
        heartbeat_interval_ms=30_000, timeout_ms=240_000, over_limit_at_ms=now - 360_000,
    )  # fmt: skip
    attempt = Attempt(
        1, "timed_out", "worker-7", now - 900_000, now - 840_000, "TimeoutError",
        "Job ran past its time limit of 60 s; its handler was cancelled",
    )  # fmt: skip
    done = Job(
        DONE, "report.build", {"n": 2}, JobStatus.FAILED, now - 900_000, now - 900_000, now - 840_000,
        fail_count=1, fail_reason=attempt.error_message, attempts=(attempt,), error_type="TimeoutError",
    )  # fmt: skip
    m = Monque(url, recover_stale_jobs=False)
    await m.initialize()
    try:
        assert await m.import_jobs([held, done]) == 2
    finally:
        await m.close()


async def test_a_job_over_its_limit_and_a_timed_out_attempt_are_shown(store_url: str) -> None:
    await _store(store_url)
    async with running_console(store_url) as (app, pilot):
        await open_detail(app, pilot, HELD)
        lines = [line.strip(" │") for line in screen_text(app).splitlines()]
        [over] = [line for line in lines if "over its time limit" in line]
        assert over.split() == [
            "attempt",
            "over",
            "its",
            "time",
            "limit,",
            "still",
            "running",
            "running",
            "10m,",
            "over",
            "for",
            "6m",
        ]
        assert any(line.split() == ["time", "limit", "240", "s", "this", "job's", "own"] for line in lines), lines
        await pilot.press("escape")
        await open_detail(app, pilot, DONE)
        text = screen_text(app)
        assert "#1 timed_out" in text and "TimeoutError: Job ran past its time limit of 60 s" in text
        assert "over its time limit, still running" not in text

"""Running jobs in the console (issue 37 parts 2 and 3), under Pilot: a handler's progress
shows live in the PROGRESS column (a percentage at 80 columns, a bar at wide widths) and in
the job detail; ``c`` on a processing row asks to stop it and the owner (a worker in this
process, on the same file) ends it cancelled; a job whose owner is not in the instance
registry says it cannot be stopped, and a stop requested of a handler that goes on says
"stop requested, handler still running"."""

from __future__ import annotations

import asyncio

from monque_engine import Job, JobStatus, Monque
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import move_to, open_detail, running_console, store_jobs, wait_for
from .test_confirm_width import screen_text
from .toasts import said

FOREIGN = "65a1b2c3d4e5f60718290011"
ASKED = "65a1b2c3d4e5f60718290012"


def _row(app: object, job_id: str) -> str:
    [line] = [line for line in screen_text(app).splitlines() if job_id[-8:] in line]
    return line


async def test_progress_shows_live_and_c_stops_the_running_job(store_url: str) -> None:
    reported = asyncio.Event()

    async def handler(job: Job) -> None:
        await job.report_progress(0.42, "copying")
        reported.set()
        await asyncio.Event().wait()  # until stopped

    worker = Monque(store_url, poll_interval=0.05)
    worker.register("report.build", handler)
    await worker.initialize()
    await worker.start()
    try:
        job = await worker.enqueue("report.build", {"n": 1})
        await asyncio.wait_for(reported.wait(), 30)
        async with running_console(store_url, size=(80, 30), notifications=True) as (app, pilot):
            await wait_for(lambda: "42%" in screen_text(app))
            header = next(line for line in screen_text(app).splitlines() if "STATUS" in line)
            assert "PROGRESS" in header and "processing" in _row(app, job.id) and "42%" in _row(app, job.id)
            await open_detail(app, pilot, job.id)
            [line] = [line for line in screen_text(app).splitlines() if "progress" in line and "42%" in line]
            assert "copying" in line and "reported" in line
            await pilot.press("escape")
            # The Workers view names each instance's longest-running job, with its run time.
            await pilot.press("W")
            await wait_for(lambda: "LONGEST" in screen_text(app) and job.id[-8:] in screen_text(app))
            [line] = [line for line in screen_text(app).splitlines() if worker.instance_id[:20] in line]
            assert job.id[-8:] in line
            await pilot.press("escape")
            await wait_for(lambda: app.screen is app.jobs_screen)
            await move_to(app, pilot, job.id)
            await pilot.press("c")
            await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
            assert "Stop job" in screen_text(app)
            await pilot.press("y")
            await wait_for(lambda: said(app, "Asked 1 job to stop"))
            await wait_for(lambda: "cancelled" in _row(app, job.id))
        stored = await worker.get_job(job.id)
        assert stored is not None and stored.status is JobStatus.CANCELLED
        assert [attempt.outcome for attempt in stored.attempts] == ["cancelled"]
    finally:
        await worker.stop()


async def test_wide_the_progress_is_a_bar(store_url: str) -> None:
    now = SEED_NOW_MS
    from monque_engine.run_progress import Progress

    running = Job(
        FOREIGN, "report.build", {"n": 1}, JobStatus.PROCESSING, now - 600_000, now - 600_000, now - 5_000,
        locked_at_ms=now - 600_000, claimed_by="node-worker-1", last_heartbeat_ms=now - 1_000,
        heartbeat_interval_ms=30_000, progress=Progress(0.5, "half", now - 5_000),
    )  # fmt: skip
    asked = Job(
        ASKED, "report.build", {"n": 2}, JobStatus.PROCESSING, now - 600_000, now - 600_000, now - 60_000,
        locked_at_ms=now - 600_000, claimed_by="worker-7", last_heartbeat_ms=now - 1_000,
        heartbeat_interval_ms=30_000, stop_requested_at_ms=now - 60_000,
    )  # fmt: skip
    monque = Monque(store_url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        assert await monque.import_jobs([running, asked]) == 2
    finally:
        await monque.close()
    async with running_console(store_url, size=(160, 30), notifications=True) as (app, pilot):
        await wait_for(lambda: FOREIGN[-8:] in screen_text(app))
        assert "█████" in _row(app, FOREIGN) and "50%" in _row(app, FOREIGN)
        assert "stopping" in _row(app, ASKED)
        await open_detail(app, pilot, ASKED)
        [line] = [line for line in screen_text(app).splitlines() if "stop requested" in line]
        assert line.strip(" │").split() == [
            "stop",
            "stop",
            "requested,",
            "handler",
            "still",
            "running",
            "asked",
            "1m",
            "ago",
        ]
        await pilot.press("escape")
        # A Node worker's job: no stop can reach it, and the console says so (nothing changes).
        await move_to(app, pilot, FOREIGN)
        await pilot.press("c")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(lambda: said(app, "not in the instance registry"))
    after = (await store_jobs(store_url))[FOREIGN]
    assert after.status is JobStatus.PROCESSING and after.stop_requested_at_ms is None


def _running(job_id: str, n: int, locked_at_ms: int) -> Job:
    now = SEED_NOW_MS
    return Job(
        job_id, "report.build", {"n": n}, JobStatus.PROCESSING, now - 900_000, now - 900_000 + n, now - 1_000,
        locked_at_ms=locked_at_ms, claimed_by="node-worker-1", last_heartbeat_ms=now - 1_000,
        heartbeat_interval_ms=30_000,
    )  # fmt: skip


async def test_the_processing_tab_sorts_by_run_time_longest_first(store_url: str) -> None:
    from .conftest import table_ids

    now = SEED_NOW_MS
    ids = [f"65a1b2c3d4e5f607182900{n:02x}" for n in range(0x21, 0x24)]
    # Created in id order, claimed in the reverse: by run time the last created runs longest.
    jobs = [_running(job_id, n, now - 600_000 + (len(ids) - n) * 60_000) for n, job_id in enumerate(ids)]
    monque = Monque(store_url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        assert await monque.import_jobs(jobs) == 3
    finally:
        await monque.close()
    async with running_console(store_url) as (app, pilot):
        await pilot.press("3")
        await wait_for(lambda: len(table_ids(app)) == 3)
        await pilot.press("s", "s", "s")
        await wait_for(lambda: app.jobs_screen.window.query.sort_by == "locked_at")
        await wait_for(lambda: table_ids(app) == list(reversed(ids)))
        assert "sorted by run time" in screen_text(app)
        await pilot.resize_terminal(90, 24)  # type: ignore[attr-defined]
        await wait_for(lambda: app.size.width == 90)
        # Where "sorted by" no longer fits beside the count, the short form still names it.
        try:
            await wait_for(lambda: "processing, by run time ↑ — 3 matching" in screen_text(app))
        except AssertionError:
            raise AssertionError(screen_text(app)) from None
        await pilot.press("s")  # past the run time: back where the cycle began, newest first
        await wait_for(lambda: app.jobs_screen.window.query.sort_by == "created_at")
        assert app.jobs_screen.window.query.descending  # it came back as "ID ↑" (a docs probe)
        await wait_for(lambda: table_ids(app) == list(reversed(ids)))  # newest created first
        await pilot.press("s", "s", "s")
        await wait_for(lambda: app.jobs_screen.window.query.sort_by == "locked_at")
        await pilot.press("1")  # all statuses: no run time to sort by, back to created
        await wait_for(lambda: app.jobs_screen.window.query.sort_by == "created_at")

"""The Workers screen against real worker processes on one SQLite file (issue 13 item 2).

A worker subprocess claims jobs and is killed with SIGKILL; the console (a real Textual app
driven by Pilot, with the system clock so heartbeat ages are real) shows it dead with the
jobs it holds, and ``x`` releases them after a confirmation that carries the count. A live
worker's jobs are refused. Waits are on observable conditions, never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import DataTable

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from monque_engine import JobStatus, Monque  # noqa: E402
from monque_tui.console.app import MonqueConsole  # noqa: E402
from monque_tui.console.config import ConsoleConfig  # noqa: E402
from monque_tui.console.screens.ask import AskScreen  # noqa: E402
from monque_tui.console.screens.detail import JobDetailScreen, job_renderable  # noqa: E402
from monque_tui.console.screens.workers import WorkersScreen  # noqa: E402
from monque_tui.console.session.fleet import owner_is_dead  # noqa: E402
from tests.procs._common import sqlite_url  # noqa: E402
from tests.procs.harness import Launcher, Proc, StoreProbe, wait_until  # noqa: E402

from .conftest import wait_for  # noqa: E402

READY = 30.0


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Launcher]:
    launcher = Launcher(tmp_path)
    try:
        yield launcher
    finally:
        launcher.close_all()


def start_worker(procs: Launcher, db: Path, instance: str, heartbeat: float) -> Proc:
    runs = db.parent / f"runs-{instance}"
    runs.mkdir(exist_ok=True)
    return procs.start(
        instance,
        "worker",
        "--db",
        db,
        "--instance",
        instance,
        "--runs-dir",
        runs,
        "--concurrency",
        2,
        "--delay",
        600,
        "--heartbeat-interval",
        heartbeat,
    )


def _holding(db: Path, owner: str, count: int) -> None:
    probe = StoreProbe(db)
    try:
        wait_until(lambda: len(probe.processing_by(owner)) == count, 30, f"{owner} holds {count} jobs")
    finally:
        probe.close()


async def holding(db: Path, owner: str, count: int) -> None:
    await asyncio.to_thread(_holding, db, owner, count)


async def one_killed_one_live(procs: Launcher, db: Path, live_heartbeat: float) -> tuple[Proc, Proc]:
    """Two real workers on a fresh store, each holding 2 of 4 jobs; the first (``doomed``,
    beating every 0.5 s) then SIGKILLed while ``steady`` goes on: the dead owner the fleet
    views and the release are tested against. Returns (dead, live)."""
    url = sqlite_url(str(db))
    setup = Monque(url, recover_stale_jobs=False)
    await setup.initialize()
    await setup.close()
    dead = start_worker(procs, db, "doomed", heartbeat=0.5)
    live = start_worker(procs, db, "steady", heartbeat=live_heartbeat)
    await asyncio.to_thread(dead.wait_for, "ready", READY)
    await asyncio.to_thread(live.wait_for, "ready", READY)
    producer = Monque(url, recover_stale_jobs=False)
    await producer.initialize()
    try:
        for n in range(4):
            await producer.enqueue("task", {"n": n})
        await holding(db, "doomed", 2)
        await holding(db, "steady", 2)
    finally:
        await producer.close()
    dead.signal(signal.SIGKILL)
    assert await asyncio.to_thread(dead.wait_exit, 10) == -signal.SIGKILL
    return dead, live


@asynccontextmanager
async def live_console(url: str) -> AsyncIterator[tuple[MonqueConsole, Any, list[str]]]:
    app = MonqueConsole(ConsoleConfig(url=url))  # the system clock: heartbeat ages are real
    notes: list[str] = []
    original = app.notify

    def notify(message: str, **kwargs: Any) -> None:
        notes.append(message)
        original(message, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=(160, 36)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await pilot.pause()
        yield app, pilot, notes


async def workers_screen(app: MonqueConsole, pilot: Any) -> WorkersScreen:
    await pilot.press("W")
    await wait_for(lambda: isinstance(app.screen, WorkersScreen))
    screen = app.screen
    assert isinstance(screen, WorkersScreen)
    return screen


async def cursor_on(screen: WorkersScreen, pilot: Any, instance: str) -> None:
    await wait_for(lambda: instance in screen.rows, timeout=20)
    table = screen.query_one(DataTable)
    table.move_cursor(row=table.get_row_index(instance))
    await pilot.pause()


async def test_a_killed_worker_shows_dead_and_x_releases_its_jobs(tmp_path: Path, procs: Launcher) -> None:
    db = tmp_path / "jobs.db"
    url = sqlite_url(str(db))
    _dead, live = await one_killed_one_live(procs, db, live_heartbeat=2.0)
    reader = Monque(url, recover_stale_jobs=False)
    await reader.initialize()
    try:
        held = [job.id for job in await reader.get_jobs(limit=10) if job.claimed_by == "doomed"]
        assert len(held) == 2
    finally:
        await reader.close()

    async with live_console(url) as (app, pilot, notes):
        screen = await workers_screen(app, pilot)
        await cursor_on(screen, pilot, "doomed")
        await wait_for(lambda: screen.rows["doomed"].dead, timeout=20)  # 2 x 0.5 s of silence
        assert screen.rows["doomed"].info.jobs_held == 2
        assert not screen.rows["steady"].dead
        title = str(screen.query_one("#workers-title").render())
        assert "1 dead holding 2 jobs" in title
        # The view keeps the release watch going from when it first showed the owner dead, with
        # its countdown; once it has run, x needs no watch of its own (issue 40: it took 61 s).
        assert screen.release_in.get("doomed") is not None
        await wait_for(lambda: "x releases now" in str(screen.query_one("#workers-title").render()), timeout=20)

        # A live owner: nothing to release, and the store refuses it.
        await cursor_on(screen, pilot, "steady")
        await pilot.press("x")
        await wait_for(lambda: any("steady" in n and "alive" in n for n in notes))
        assert not isinstance(app.screen, AskScreen)

        # The dead one: the confirmation carries the count; y releases.
        await cursor_on(screen, pilot, "doomed")
        await pilot.press("x")
        await wait_for(lambda: isinstance(app.screen, AskScreen))
        assert app.screen.question == "Release 2 processing jobs of dead owner doomed?"
        await pilot.press("y")
        await wait_for(lambda: any(n.startswith("Released 2 jobs of doomed") for n in notes))
        await wait_for(
            lambda: screen.rows.get("doomed") is None or screen.rows["doomed"].info.jobs_held == 0, timeout=10
        )
        # Released: the title no longer offers x on nothing ("1 dead holding 0 jobs (x releases)").
        if screen.rows.get("doomed") is not None:
            title = str(screen.query_one("#workers-title").render())
            assert "1 dead, holding no jobs" in title and "x releases" not in title, title

    check = Monque(url, recover_stale_jobs=False)
    await check.initialize()
    try:
        jobs = {job.id: job for job in await check.get_jobs(limit=10)}
        # Released to pending; the live worker (concurrency 2, busy) cannot have taken them.
        assert all(jobs[job_id].status is JobStatus.PENDING and not jobs[job_id].claimed_by for job_id in held)
        assert sum(1 for job in jobs.values() if job.claimed_by == "steady") == 2
    finally:
        await check.close()
    live.signal(signal.SIGKILL)


async def test_the_detail_screen_says_the_owner_is_dead_and_x_releases(tmp_path: Path, procs: Launcher) -> None:
    db = tmp_path / "jobs.db"
    url = sqlite_url(str(db))
    setup = Monque(url, recover_stale_jobs=False)
    await setup.initialize()
    await setup.close()
    worker = start_worker(procs, db, "gone", heartbeat=0.5)
    await asyncio.to_thread(worker.wait_for, "ready", READY)
    producer = Monque(url, recover_stale_jobs=False)
    await producer.initialize()
    try:
        job = await producer.enqueue("task", {"n": 1})
    finally:
        await producer.close()
    await holding(db, "gone", 1)
    worker.signal(signal.SIGKILL)
    assert await asyncio.to_thread(worker.wait_exit, 10) == -signal.SIGKILL

    async with live_console(url) as (app, pilot, notes):
        app.show_job(job.id)
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
        detail = app.screen
        assert isinstance(detail, JobDetailScreen)

        await wait_for(lambda: detail.job is not None and owner_is_dead(detail.job, app.clock()), timeout=20)
        detail.load()
        await pilot.pause()
        assert detail.check_action("release_owner", ()) is True
        console = Console(width=200, record=True)
        console.print(job_renderable(detail.job, app.clock(), None))
        assert "dead: gone stopped beating; x releases its jobs now" in console.export_text()
        await pilot.press("x")
        await wait_for(lambda: isinstance(app.screen, AskScreen))
        await pilot.press("y")
        await wait_for(lambda: any(n.startswith("Released 1 job of gone") for n in notes))
        await wait_for(lambda: detail.job is not None and detail.job.status is JobStatus.PENDING)


async def test_read_only_greys_out_release(seeded_url: str) -> None:
    app = MonqueConsole(ConsoleConfig(url=seeded_url, read_only=True))
    async with app.run_test(size=(140, 36)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen))
        assert app.screen.check_action("release_owner", ()) is None

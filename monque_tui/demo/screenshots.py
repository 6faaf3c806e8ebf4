"""Deterministic scenes of the console, for snapshot tests and `make screenshots`.

Each scene opens the app on a seeded SQLite file with a frozen clock, no change feed and no
cursor blink, then drives it to one screen. ``python -m monque_tui.demo.screenshots [DIR]``
writes one SVG per scene (default ``screenshots/``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from monque_engine import JobStatus
from monque_engine.job import InstanceRecord

from ..console.app import MonqueConsole
from ..console.clock import frozen_clock
from ..console.config import ConsoleConfig
from ..console.screens.detail import JobDetailScreen
from ..console.screens.errors import ErrorsScreen
from ..console.screens.workers import WorkersScreen
from ..console.widgets.status_tabs import StatusTabs
from .seed import SEED_NOW_MS, SeedJob, seed_id, seed_job, seed_store

SIZE = (130, 32)
#: The URL scenes use, relative to the working directory, so no temporary path shows.
SCENE_URL = "sqlite:///monque.db"

Scene = Callable[[Pilot[int]], Awaitable[None]]


def scene_app(url: str = SCENE_URL, read_only: bool = False) -> MonqueConsole:
    return MonqueConsole(
        ConsoleConfig(url=url, read_only=read_only, label="snapshot"), clock=frozen_clock(SEED_NOW_MS), live=False
    )


async def _ready(pilot: Pilot[int]) -> MonqueConsole:
    app = pilot.app
    assert isinstance(app, MonqueConsole)
    await asyncio.wait_for(app.ready.wait(), 10)
    await pilot.pause()
    while app.jobs_screen.stats is None:
        await asyncio.sleep(0.01)
    await pilot.pause()
    return app


async def _move_to(pilot: Pilot[int], job_id: str) -> MonqueConsole:
    app = await _ready(pilot)
    position = app.jobs_screen.window.position(job_id)
    assert position is not None
    app.jobs_screen.table.move_cursor(position)
    await pilot.pause()
    return app


async def jobs_scene(pilot: Pilot[int]) -> None:
    app = await _move_to(pilot, seed_id(12))
    await pilot.press("space")
    await pilot.pause()
    assert app.jobs_screen.marks


async def detail_scene(pilot: Pilot[int]) -> None:
    app = await _move_to(pilot, seed_id(2))
    await pilot.press("enter")
    while not (isinstance(app.screen, JobDetailScreen) and app.screen.job is not None):
        await asyncio.sleep(0.01)
    await pilot.pause()


async def queues_scene(pilot: Pilot[int]) -> None:
    app = await _ready(pilot)
    await pilot.press("w")
    await pilot.pause(0.3)
    await app.workers.wait_for_complete()
    await pilot.pause()


async def workers_scene(pilot: Pilot[int]) -> None:
    """Two registered instances (one dead, holding a job) and the seed's inferred (Node) owners."""
    app = await _ready(pilot)
    assert app.session.monque is not None
    store = app.session.monque.store
    minute = 60_000
    await store.upsert_instance(
        InstanceRecord(
            id="worker-2:881:c01d5e",
            host="worker-2",
            pid=881,
            version="monque_engine 0.1.0",
            started_at_ms=SEED_NOW_MS - 90 * minute,
            heartbeat_interval_ms=30_000,
            workers={"send-email": 5, "resize-image": 2},
            running=1,
            processed=1_284,
            failed=12,
            last_heartbeat_ms=SEED_NOW_MS - 4_000,
        )
    )
    await store.upsert_instance(
        InstanceRecord(
            id="batch-7:3310:77ab01",
            host="batch-7",
            pid=3310,
            version="monque_engine 0.1.0",
            started_at_ms=SEED_NOW_MS - 300 * minute,
            heartbeat_interval_ms=30_000,
            workers={"nightly-report": 1, "sync-crm": 3},
            running=2,
            processed=311,
            failed=4,
            last_heartbeat_ms=SEED_NOW_MS - 6 * minute,
        )
    )
    held = [SeedJob(90 + n, "sync-crm", JobStatus.PROCESSING, 20, owner="batch-7:3310:77ab01") for n in range(2)]
    await app.session.monque.import_jobs(
        seed_job(job).replace(locked_at_ms=SEED_NOW_MS - 9 * minute, last_heartbeat_ms=SEED_NOW_MS - 6 * minute)
        for job in held
    )
    await pilot.press("W")
    while not (isinstance(app.screen, WorkersScreen) and app.screen.loads):
        await asyncio.sleep(0.01)
    await pilot.pause()


async def confirm_scene(pilot: Pilot[int]) -> None:
    app = await _ready(pilot)
    for job_id in (seed_id(1), seed_id(16), seed_id(2)):
        await _move_to(pilot, job_id)
        await pilot.press("space")
    await pilot.press("c")
    await pilot.pause()
    assert app.screen.__class__.__name__ == "ConfirmScreen"


async def filter_scene(pilot: Pilot[int]) -> None:
    """The `/` bar with a name and a time range applied (typed as an operator would)."""
    app = await _ready(pilot)
    await pilot.press("slash", *"send-email", "tab", "tab", *"created -1h..", "enter")
    screen = app.jobs_screen
    while not (screen.window.query.ranges and screen.query_one(StatusTabs).matching is not None):
        await asyncio.sleep(0.01)
    await pilot.pause()


async def errors_scene(pilot: Pilot[int]) -> None:
    """`e`: the seeded failures grouped, the cursor on the failed webhook group."""
    app = await _ready(pilot)
    await pilot.press("e")
    while not (isinstance(app.screen, ErrorsScreen) and app.screen.fetches > 0):
        await asyncio.sleep(0.01)
    screen = app.screen
    row = next(i for i, group in enumerate(screen.model.groups) if group.name == "webhook" and group.failed)
    screen.table.move_cursor(row=row)
    await pilot.pause()


async def help_scene(pilot: Pilot[int]) -> None:
    await _ready(pilot)
    await pilot.press("question_mark")
    await pilot.pause()


SCENES: dict[str, Scene] = {
    "jobs": jobs_scene,
    "detail": detail_scene,
    "queues": queues_scene,
    "workers": workers_scene,
    "confirm": confirm_scene,
    "filter": filter_scene,
    "help": help_scene,
    "errors": errors_scene,
    # At 80 columns, where a laptop terminal over SSH lands (issue 28).
    "jobs-80": jobs_scene,
    "errors-80": errors_scene,
}
#: Scenes drawn at another size than ``SIZE``.
SCENE_SIZES: dict[str, tuple[int, int]] = {"jobs-80": (80, 24), "errors-80": (80, 24)}


async def capture(scene: Scene, directory: Path, size: tuple[int, int] = SIZE) -> str:
    """Seed a store in ``directory``, run the scene there and return the SVG."""
    cwd = Path.cwd()
    os.chdir(directory)
    try:
        db = directory / "monque.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        await seed_store(SCENE_URL)
        app = scene_app()
        async with app.run_test(size=size) as pilot:
            await scene(pilot)
            return app.export_screenshot()
    finally:
        os.chdir(cwd)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    for name, scene in SCENES.items():
        with tempfile.TemporaryDirectory() as work:
            svg = asyncio.run(capture(scene, Path(work), SCENE_SIZES.get(name, SIZE)))
        (out / f"{name}.svg").write_text(svg)
        print(f"wrote {out / f'{name}.svg'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

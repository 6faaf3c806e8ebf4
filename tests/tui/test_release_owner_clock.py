"""The console's ``x`` (release a dead owner's jobs) with the console's clock an hour ahead (issue 25).

A worker subprocess beats every 0.5 s while it runs a long job. The console (a real Textual
app driven by Pilot) runs in this process with every clock it reads an hour ahead, the
engine's ``now_ms`` included, as on an operator's machine whose clock is wrong. By that clock
the worker's beats are an hour old, so the Workers screen marks it dead (a display of ages);
``x`` used to count its job as releasable, ask, and release it while it ran. Now ``x``
watches the worker's heartbeat move and says it is alive; nothing is asked or released.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from monque_engine import JobStatus, Monque, timeutil  # noqa: E402
from monque_tui.console.app import MonqueConsole  # noqa: E402
from monque_tui.console.config import ConsoleConfig  # noqa: E402
from monque_tui.console.screens.ask import AskScreen  # noqa: E402
from tests.procs._common import sqlite_url  # noqa: E402
from tests.procs.harness import Launcher  # noqa: E402

from .conftest import wait_for  # noqa: E402
from .test_fleet_workers import READY, cursor_on, holding, start_worker, workers_screen  # noqa: E402

HOUR_MS = 3_600_000


async def test_x_on_a_beating_worker_releases_nothing_when_the_consoles_clock_is_an_hour_ahead(
    tmp_path: Path, procs: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "jobs.db"
    url = sqlite_url(str(db))
    producer = Monque(url, recover_stale_jobs=False)
    await producer.initialize()
    await producer.close()
    worker = start_worker(procs, db, "steady", heartbeat=0.5)
    await asyncio.to_thread(worker.wait_for, "ready", READY)
    producer = Monque(url, recover_stale_jobs=False)
    await producer.initialize()
    try:
        job = await producer.enqueue("task", {"long": True})
    finally:
        await producer.close()
    await holding(db, "steady", 1)

    real = timeutil.now_ms

    def ahead() -> int:
        return real() + HOUR_MS

    for name, module in list(sys.modules.items()):
        if name.startswith("monque_engine") and getattr(module, "now_ms", None) is real:
            monkeypatch.setattr(module, "now_ms", ahead)

    app = MonqueConsole(ConsoleConfig(url=url), clock=ahead)
    notes: list[str] = []
    original = app.notify

    def notify(message: str, **kwargs: object) -> None:
        notes.append(message)
        original(message, **kwargs)  # type: ignore[arg-type]

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=(160, 36)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        screen = await workers_screen(app, pilot)
        await cursor_on(screen, pilot, "steady")
        await wait_for(lambda: screen.rows["steady"].dead, timeout=20)  # by the console's clock only
        await pilot.press("x")
        await wait_for(lambda: any("steady" in n and "alive" in n for n in notes), timeout=20)
        assert not isinstance(app.screen, AskScreen)

    check = Monque(url, recover_stale_jobs=False)
    await check.initialize()
    try:
        stored = await check.get_job(job.id)
        assert stored is not None and stored.status is JobStatus.PROCESSING and stored.claimed_by == "steady"
    finally:
        await check.close()
    worker.signal(signal.SIGKILL)

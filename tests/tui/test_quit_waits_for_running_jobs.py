"""q in a console that runs workers (``--demo``, ``--app``) while handlers are in flight.

The workers' stop waited for the handlers in ``on_unmount``, after Textual had cleared the
screen: quitting the demo showed a blank terminal for seconds (up to ``shutdown_timeout``),
with nothing to say why. The console now stays up, says what it waits for, and closes once
the handlers have finished; their jobs are completed, not left for stale recovery.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from monque_engine import Job, Monque
from monque_tui.app import MonqueConsole
from monque_tui.config import ConsoleConfig

from .conftest import store_jobs, wait_for


async def test_q_says_it_waits_for_running_jobs_and_closes_once_they_finish(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'quit.db'}"
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow(job: Job) -> None:
        started.set()
        await release.wait()

    async def setup(monque: Monque) -> None:
        monque.register("slow", slow)
        await monque.enqueue("slow", {})

    app = MonqueConsole(ConsoleConfig(url=url, setup=setup, start_workers=True, label="test"))
    async with app.run_test(size=(140, 36)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await asyncio.wait_for(started.wait(), 10)
        assert app.monque.running_job_count == 1
        await pilot.press("q")
        await wait_for(lambda: any("Stopping the workers: 1 running job" in n.message for n in app._notifications))
        assert app.is_running and app.return_code is None  # still up, saying why
        await pilot.press("q")
        await wait_for(lambda: any("Still waiting" in n.message for n in app._notifications))
        assert app.is_running
        release.set()
        await wait_for(lambda: not app.is_running)
    (job,) = (await store_jobs(url)).values()
    assert job.status == "completed"


async def test_q_without_running_jobs_closes_at_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'idle.db'}"

    async def setup(monque: Monque) -> None:
        monque.register("idle", lambda job: None)

    app = MonqueConsole(ConsoleConfig(url=url, setup=setup, start_workers=True, label="test"))
    async with app.run_test(size=(140, 36)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        assert app.monque.running_job_count == 0
        await pilot.press("q")
        await wait_for(lambda: not app.is_running)
    assert not any("Stopping" in n.message for n in app._notifications)

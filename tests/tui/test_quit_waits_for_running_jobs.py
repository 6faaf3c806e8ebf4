"""q in a console that runs workers (``--demo``, ``--app``) while handlers are in flight.

The workers' stop waited for the handlers in ``on_unmount``, after Textual had cleared the
screen: quitting the demo showed a blank terminal for seconds (up to ``shutdown_timeout``),
with nothing to say why. The console now stays up, says what it waits for, and closes once
the handlers have finished; their jobs are completed, not left for stale recovery.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.message import Message
from textual.notifications import Notify

from monque_engine import Job, Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig

from .conftest import store_jobs, wait_for
from .toasts import said


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
    async with app.run_test(size=(140, 36), notifications=True) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await asyncio.wait_for(started.wait(), 10)
        assert app.session.monque.running_job_count == 1
        await pilot.press("q")
        await wait_for(lambda: said(app, "Stopping the workers: 1 running job"))
        assert app.is_running and app.return_code is None  # still up, saying why
        await pilot.press("q")
        await wait_for(lambda: said(app, "Still waiting"))
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
    notified: list[str] = []  # every notification posted, read after the app has gone

    def record(message: Message) -> None:
        if isinstance(message, Notify):
            notified.append(message.notification.message)

    async with app.run_test(size=(140, 36), message_hook=record) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        assert app.session.monque.running_job_count == 0
        await pilot.press("q")
        await wait_for(lambda: not app.is_running)
    assert not any("Stopping" in message for message in notified)


async def test_q_while_a_claim_is_in_flight_stays_up_for_the_job_it_claims(tmp_path: Path) -> None:
    """q when no handler ran yet but a claim was on its way: the console exited at once, and
    the workers' stop then waited for the job that claim handed out on a cleared screen (the
    blank terminal this quit was meant to end; likely in the demo, whose workers claim all the
    time). The stop now runs with the console up, and says so once it takes a while.

    The claim is held until the stop is asked for (whenever the console asks), then returns
    its job: the order a claim finishing just as q is pressed meets."""
    url = f"sqlite:///{tmp_path / 'claiming.db'}"
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow(job: Job) -> None:
        started.set()
        await release.wait()

    async def setup(monque: Monque) -> None:
        monque.register("slow", slow)

    app = MonqueConsole(
        ConsoleConfig(url=url, setup=setup, start_workers=True, label="test", monque_options={"shutdown_timeout": 10})
    )
    async with app.run_test(size=(140, 36), notifications=True) as pilot:
        try:
            await asyncio.wait_for(app.ready.wait(), 10)
            monque = app.session.monque
            store, real_claim, real_stop = monque.store, monque.store.claim, monque.stop
            claimed, stopping = asyncio.Event(), asyncio.Event()

            async def held_claim(*args: object, **kwargs: object) -> object:
                jobs = await real_claim(*args, **kwargs)
                if jobs:
                    claimed.set()
                    await stopping.wait()
                return jobs

            async def stop() -> None:
                stopping.set()
                await real_stop()

            store.claim, monque.stop = held_claim, stop
            await monque.enqueue("slow", {})
            await asyncio.wait_for(claimed.wait(), 10)  # claimed in the store, not yet handed out
            assert monque.running_job_count == 0
            await pilot.press("q")
            await asyncio.wait_for(started.wait(), 10)
            await wait_for(lambda: said(app, "Stopping the workers"))
            assert app.is_running and app.screen is app.jobs_screen
        finally:
            stopping.set()
            release.set()
        await wait_for(lambda: not app.is_running)
    (job,) = (await store_jobs(url)).values()
    assert job.status == "completed"


async def test_q_again_while_idle_workers_stop_does_not_speak_of_running_jobs(tmp_path: Path) -> None:
    """With no handler running, the workers still stop before the console closes (a store slow
    to take the instance's leave holds it): a second q says it is still stopping, not that
    running jobs (there are none) are awaited."""
    url = f"sqlite:///{tmp_path / 'idle-stop.db'}"

    async def setup(monque: Monque) -> None:
        monque.register("idle", lambda job: None)

    app = MonqueConsole(ConsoleConfig(url=url, setup=setup, start_workers=True, label="test"))
    async with app.run_test(size=(140, 36), notifications=True) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        monque = app.session.monque
        store, leave = monque.store, asyncio.Event()
        real_remove = store.remove_instance

        async def slow_leave(*args: object) -> object:  # the instance's leave, the stop's last step
            await leave.wait()
            return await real_remove(*args)

        store.remove_instance = slow_leave
        try:
            await pilot.press("q")
            await wait_for(lambda: said(app, "Stopping the workers (at most"))
            await pilot.press("q")
            await wait_for(lambda: said(app, "Still stopping the workers"))
            assert not said(app, "running job")
        finally:
            leave.set()
        await wait_for(lambda: not app.is_running)

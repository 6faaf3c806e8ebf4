"""Fixtures for the console tests: a seeded SQLite file, the session core on its own
(``console_session``: no Textual, for the console's logic), and the real app under Pilot
(``running_console``: for what is UI)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from monque_engine import Job, Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.clock import frozen_clock
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.session import ConsoleSession
from monque_tui.console.session.events import Notice
from monque_tui.demo.seed import SEED_NOW_MS, seed_store


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'console.db'}"


@pytest.fixture
async def seeded_url(store_url: str) -> str:
    await seed_store(store_url)
    return store_url


async def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll ``predicate`` every 20 ms. The timeout is a deadline, not a delay: a passing test
    never waits it out, and under parallel workers on two cores an app can need seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def open_errors(app: MonqueConsole, pilot: Any, groups: int) -> ErrorsScreen:
    """Press ``e`` and wait until the Errors view lists ``groups`` groups; that screen."""
    await pilot.press("e")
    await wait_for(lambda: isinstance(app.screen, ErrorsScreen) and len(app.screen.model.groups) == groups)
    screen = app.screen
    assert isinstance(screen, ErrorsScreen)
    return screen


@asynccontextmanager
async def console_session(
    url: str, *, read_only: bool = False, live: bool = True, **config: Any
) -> AsyncIterator[tuple[ConsoleSession, list[object]]]:
    """The console's session core on ``url`` without Textual, with the app's frozen clock, and
    the events it emits (what the app would turn into messages). Nothing runs on a timer: a
    test loads, flushes and counts when it says so."""
    events: list[object] = []
    session = ConsoleSession(
        ConsoleConfig(url=url, read_only=read_only, **config),
        clock=frozen_clock(SEED_NOW_MS),
        live=live,
        emit=events.append,
    )
    await session.open()
    try:
        yield session, events
    finally:
        await session.close()


def notices(events: list[object]) -> list[str]:
    """The sentences the session said to the operator (the app shows each as a toast)."""
    return [event.message for event in events if isinstance(event, Notice)]


async def flush_until(session: ConsoleSession, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Apply the feed (what the app's flush timer does) until ``predicate`` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        await session.flush()
        if predicate():
            return
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


@asynccontextmanager
async def running_console(
    url: str,
    *,
    read_only: bool = False,
    live: bool = True,
    size: tuple[int, int] = (140, 36),
    notifications: bool = False,
) -> AsyncIterator[tuple[MonqueConsole, object]]:
    """The console on ``url`` under Pilot. ``notifications=True`` shows them as toasts, which
    ``tests/tui/toasts.py`` reads (Textual's ``run_test`` leaves them out by default)."""
    app = MonqueConsole(ConsoleConfig(url=url, read_only=read_only), clock=frozen_clock(SEED_NOW_MS), live=live)
    async with app.run_test(size=size, notifications=notifications) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await pilot.pause()
        yield app, pilot


async def store_jobs(url: str) -> dict[str, Job]:
    """Read the store with an independent Monque instance."""
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        return {job.id: job for job in await monque.get_jobs(limit=1000)}
    finally:
        await monque.close()


def table_ids(app: MonqueConsole) -> list[str]:
    return [job.id for job in app.jobs_screen.window.rows]


async def move_to(app: MonqueConsole, pilot: object, job_id: str) -> None:
    table = app.jobs_screen.table
    position = app.jobs_screen.window.position(job_id)
    assert position is not None, f"{job_id} is not in the table"
    table.move_cursor(position)
    await pilot.pause()  # type: ignore[attr-defined]


async def open_detail(app: MonqueConsole, pilot: Any, job_id: str) -> JobDetailScreen:
    """Enter on ``job_id``'s row; return its detail once the job, its payload and every read are in."""
    await move_to(app, pilot, job_id)
    await pilot.press("enter")
    await wait_for(
        lambda: (
            isinstance(app.screen, JobDetailScreen)
            and app.screen.job_id == job_id
            and app.screen.payload is not None
            and not app.screen.workers._workers
        )
    )
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, JobDetailScreen)
    return screen

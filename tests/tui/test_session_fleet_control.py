"""Pausing a name, releasing a dead owner and stopping this console's workers, on the session
core alone (no Textual, no Pilot): the app reaches the engine only through these (issue 35,
one hub). What the app draws around them (the question, the toasts) is
test_fleet_workers.py, test_fleet_queues.py and test_quit_waits_for_running_jobs.py.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from monque_engine import JobStatus, Monque  # noqa: E402
from monque_tui.console.session.events import Notice, PausedNamesChanged  # noqa: E402
from tests.procs._common import sqlite_url  # noqa: E402
from tests.procs.harness import Launcher  # noqa: E402

from .conftest import console_session, notices  # noqa: E402
from .test_fleet_workers import one_killed_one_live  # noqa: E402


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Launcher]:
    launcher = Launcher(tmp_path)
    try:
        yield launcher
    finally:
        launcher.close_all()


async def test_toggle_pause_pauses_then_resumes_a_name_and_says_so(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, events):
        await session.refresh_paused_names()
        assert session.paused_names == ()
        await session.toggle_pause("send-email")
        assert session.paused_names == ("send-email",)
        assert PausedNamesChanged(("send-email",)) in events
        pause = next(event for event in events if isinstance(event, Notice) and event.title == "Pause")
        assert pause.message.startswith("Paused 'send-email': Python workers stop claiming it")
        assert session.monque is not None and "send-email" in await session.monque.paused()

        await session.toggle_pause("send-email")
        assert session.paused_names == ()
        assert PausedNamesChanged(()) in events
        assert "Resumed 'send-email': workers claim it again." in notices(events)
        assert "send-email" not in await session.monque.paused()


async def test_a_read_only_session_neither_pauses_nor_releases(seeded_url: str) -> None:
    async with console_session(seeded_url, read_only=True) as (session, events):
        await session.toggle_pause("send-email")
        assert await session.check_owner("worker-1") is None
        assert await session.release_owner("worker-1") is False
        assert session.monque is not None and await session.monque.paused() == {}
        assert notices(events) == []


async def test_check_owner_tells_a_live_owner_from_a_dead_one_and_release_frees_only_the_dead(
    tmp_path: Path, procs: Launcher
) -> None:
    db = tmp_path / "jobs.db"
    url = sqlite_url(str(db))
    _dead, live = await one_killed_one_live(procs, db, live_heartbeat=0.5)

    async with console_session(url) as (session, events):
        assert await session.check_owner("steady") is None  # it beats while watched
        assert "Nothing to release for steady: the owner is alive (its heartbeat moved while watched)." in notices(
            events
        )
        watching = next(event for event in events if isinstance(event, Notice) and event.message.startswith("Watching"))
        assert watching.timeout == 4

        check = await session.check_owner("doomed")
        assert check is not None and not check.alive and check.releasable == 2
        assert await session.release_owner("doomed") is True
        assert "Released 2 jobs of doomed: pending again." in notices(events)
        assert session.monque is not None
        jobs = await session.monque.get_jobs(limit=10)
        assert sum(1 for job in jobs if job.status is JobStatus.PENDING and not job.claimed_by) == 2
        assert sum(1 for job in jobs if job.claimed_by == "steady") == 2
    live.signal(signal.SIGKILL)


async def test_a_console_without_workers_has_none_to_stop(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, _):
        assert not session.runs_workers
        assert session.running_job_count == 0
        assert not session.workers_claiming
        await session.stop_workers()  # nothing started: nothing to wait for


async def test_the_sessions_workers_run_a_job_and_stop_when_asked(store_url: str) -> None:
    """``--demo`` / ``--app``: the session started the workers; quitting stops them through it."""
    started = asyncio.Event()
    release = asyncio.Event()

    async def handler(job: object) -> None:
        started.set()
        await release.wait()

    async def setup(monque: Monque) -> None:
        monque.register("hold", handler)

    async with console_session(store_url, setup=setup, start_workers=True, live=False) as (session, _):
        assert session.runs_workers and session.workers_claiming
        assert session.monque is not None
        await session.monque.enqueue("hold")
        await asyncio.wait_for(started.wait(), 10)
        assert session.running_job_count == 1
        assert session.shutdown_timeout == float(session.monque.options.shutdown_timeout)
        release.set()
        await session.stop_workers()
        assert not session.workers_claiming
        assert session.running_job_count == 0

"""Pause and resume per job name, and queue health, in the console (issue 13 items 3 and 4).

Real SQLite files and a real Textual app driven by Pilot. Pauses are read back with an
independent ``Monque`` (what every worker on the store sees); health counters are written
by a real started ``Monque`` that processes jobs and stops (so the console reads them from
the store after a restart), plus counters placed eight hours ago (the night).
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

from textual.widgets import DataTable

from monque_engine import Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.widgets.console_header import ConsoleHeader

from .conftest import running_console, wait_for


async def stored_paused(url: str) -> set[str]:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        return set(await monque.paused())
    finally:
        await monque.close()


async def queues_screen(app: MonqueConsole, pilot: Any) -> QueuesScreen:
    await pilot.press("w")
    await wait_for(lambda: isinstance(app.screen, QueuesScreen) and app.screen.loads > 0)
    assert isinstance(app.screen, QueuesScreen)
    return app.screen


async def cursor_on(screen: QueuesScreen, pilot: Any, name: str) -> None:
    table = screen.query_one(DataTable)
    table.move_cursor(row=table.get_row_index(name))
    await pilot.pause()


async def test_p_on_the_queues_screen_pauses_and_resumes_the_name_in_the_store(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = await queues_screen(app, pilot)
        await cursor_on(screen, pilot, "send-email")
        await pilot.press("P")
        await wait_for(lambda: "send-email" in screen.paused_names)
        assert await stored_paused(seeded_url) == {"send-email"}
        await wait_for(lambda: "⏸ paused" in str(screen.query_one(DataTable).get_cell("send-email", "name")))
        assert "paused: send-email" in str(screen.query_one("#queues-title").render())
        # the header of the jobs screen shows it too
        header = app.jobs_screen.query_one(ConsoleHeader)
        await wait_for(lambda: header.paused_names == ("send-email",))
        assert "⏸ paused: send-email" in str(header.render())
        await pilot.press("P")
        await wait_for(lambda: not screen.paused_names)
        assert await stored_paused(seeded_url) == set()
        await wait_for(lambda: header.paused_names == ())


async def test_p_on_the_jobs_screen_pauses_the_name_filters_name_only(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        assert screen.check_action("toggle_name_pause", ()) is None  # no name filter: nothing to pause
        screen.apply_query(screen.query_state.__class__(name="resize-image"))
        await wait_for(lambda: screen.window.query.name == "resize-image")
        screen.table.focus()
        await pilot.press("P")
        await wait_for(lambda: app.paused_names == ("resize-image",))
        assert await stored_paused(seeded_url) == {"resize-image"}


async def test_a_pause_made_elsewhere_shows_on_the_next_stats_tick(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, _pilot):
        other = Monque(seeded_url, recover_stale_jobs=False)
        await other.initialize()
        try:
            await other.pause("send-email")
        finally:
            await other.close()
        header = app.jobs_screen.query_one(ConsoleHeader)
        await wait_for(lambda: header.paused_names == ("send-email",), timeout=10)


async def test_read_only_greys_out_pause(seeded_url: str) -> None:
    async with running_console(seeded_url, read_only=True) as (app, pilot):
        screen = app.jobs_screen
        screen.apply_query(screen.query_state.__class__(name="send-email"))
        await wait_for(lambda: screen.window.query.name == "send-email")
        assert screen.check_action("toggle_name_pause", ()) is None
        queues = await queues_screen(app, pilot)
        assert queues.check_action("toggle_name_pause", ()) is None
        await pilot.press("P")
        await pilot.pause()
        assert await stored_paused(seeded_url) == set()


async def test_queue_health_shows_due_latency_rates_and_the_night_after_a_restart(store_url: str) -> None:
    worker = Monque(store_url, recover_stale_jobs=False, poll_interval=0.05, heartbeat_interval=0.2)
    await worker.initialize()
    done = asyncio.Event()
    seen: list[str] = []

    async def handler(job: Any) -> None:
        seen.append(job.id)
        if job.data.get("fail"):
            raise RuntimeError("boom")
        if len(seen) >= 5:
            done.set()

    worker.register("report", handler)
    for n in range(5):
        await worker.enqueue("report", {"n": n, "fail": n == 0})
    await worker.start()
    await asyncio.wait_for(done.wait(), 20)
    await worker.stop()  # flushes its counters to the store
    # A night: 40 completions eight hours ago, written as a worker's heartbeat would.
    night_minute = time.time_ns() // 60_000_000_000 - 8 * 60
    await worker.store.add_outcome_counts({("report", night_minute): (40, 3)})
    # Due now and later, on another name.
    await worker.enqueue("digest", {})
    await worker.enqueue("digest", {"later": True}, run_at=timedelta(hours=1))
    await worker.close()

    app = MonqueConsole(ConsoleConfig(url=store_url))  # the system clock: minutes are real
    async with app.run_test(size=(200, 36)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        screen = await queues_screen(app, pilot)
        report = screen.health["report"]
        assert report.completed_last_window >= 44 and report.failed_last_window >= 3
        table = screen.query_one(DataTable)
        line = str(table.get_cell("report", "last 24h"))
        assert len(line) == 24
        assert line[-9] != "·"  # the night's hour (8 hours before the last bar) has a bar
        assert line[-1] != "·"  # and this hour's jobs
        assert float(str(table.get_cell("report", "done/m"))) > 0
        digest = screen.health["digest"]
        assert (digest.due, digest.scheduled) == (1, 1)
        assert str(table.get_cell("digest", "due")) == "1" and str(table.get_cell("digest", "later")) == "1"
        assert str(table.get_cell("digest", "oldest due")) != "-"


async def test_j_and_k_move_on_the_queues_screen_as_on_the_jobs_table(seeded_url: str) -> None:
    """Issue 40: the table screens bound only their own keys; ``j``/``k`` did nothing there."""
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        screen = await queues_screen(app, pilot)
        table = screen.query_one(DataTable)
        assert table.row_count > 2 and table.cursor_row == 0
        await pilot.press("j", "j", "k")
        assert table.cursor_row == 1
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("g")
        assert table.cursor_row == 0

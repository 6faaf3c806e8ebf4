"""Workers and Queues cells that grow after their row was added are drawn whole (probe 6).

Textual's ``DataTable.update_cell`` keeps the column at the width it had when the row was
added. The Workers and Queues screens refresh their rows in place every 2 s, so a value
that grew was cut at the old width: in a tmux soak the Workers screen read ``RATE 0.0/``
(a column sized for ``-``). A real console (Pilot) on a real SQLite file: a queue's due
count gains digits between two refreshes; a registered instance's heartbeat ages and it
turns dead (the console's clock moves).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.cells import cell_len
from textual.widgets import DataTable
from textual.widgets._data_table import ColumnKey

from monque_engine import JobStatus, Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.screens.workers import WorkersScreen

from .conftest import wait_for

RELEASE = asyncio.Event()


async def _hold(job: object) -> None:
    await RELEASE.wait()  # held (processing) until the test ends


def _cut_columns(table: DataTable[object], key: str) -> list[str]:
    """Columns whose drawn width is narrower than the row's cell text."""
    cut = []
    for column in table.columns.values():
        text = table.get_cell(key, column.key)
        if column.get_render_width(table) - 2 * table.cell_padding < cell_len(getattr(text, "plain", str(text))):
            cut.append(str(column.key.value))
    return cut


async def test_a_workers_cell_that_grows_is_not_cut(tmp_path: Path) -> None:
    """Cells are rewritten only when they change: a change of style alone must still be drawn."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    worker = Monque(url, scheduler_instance_id="w1", heartbeat_interval=3600, recover_stale_jobs=False)
    worker.register("task", _hold)
    await worker.initialize()
    await worker.start()  # registers the instance; its next heartbeat is an hour away
    RELEASE.clear()
    try:
        job = await worker.enqueue("task", {"n": 1})
        while (await worker.get_job(job.id)).status is not JobStatus.PROCESSING:  # type: ignore[union-attr]
            await asyncio.sleep(0.02)
        [info] = [i for i in await worker.instances() if i.id == "w1"]
        assert info.last_heartbeat is not None
        beat_ms = int(info.last_heartbeat.timestamp() * 1000)
        now = [beat_ms + 1_000]
        app = MonqueConsole(ConsoleConfig(url=url), clock=lambda: now[0])
        async with app.run_test(size=(160, 30)) as pilot:
            await asyncio.wait_for(app.ready.wait(), 10)
            await pilot.press("W")
            await wait_for(
                lambda: (
                    isinstance(app.screen, WorkersScreen)
                    and "w1" in app.screen.rows
                    and app.screen.rows["w1"].info.jobs_held == 1
                )
            )
            screen = app.screen
            assert isinstance(screen, WorkersScreen)
            assert str(screen.query_one(DataTable).get_cell("w1", ColumnKey("heartbeat"))) == "1s ago"
            assert _cut_columns(screen.query_one(DataTable), "w1") == []

            now[0] = beat_ms + 9 * 3_600_000  # nine hours without a beat: "9h00m ago", and dead
            loads = screen.loads
            await wait_for(lambda: screen.loads > loads and screen.rows["w1"].dead)
            await pilot.pause()
            table = screen.query_one(DataTable)
            assert str(table.get_cell("w1", ColumnKey("heartbeat"))) == "9h00m ago"
            assert str(table.get_cell("w1", ColumnKey("state"))) == "✖ DEAD"
            assert _cut_columns(screen.query_one(DataTable), "w1") == []
            # A change of style alone (the held count turns red on a dead owner) is redrawn too.
            assert str(table.get_cell("w1", ColumnKey("held"))) == "1"
            assert table.get_cell("w1", ColumnKey("held")).style == "bold red"
    finally:
        RELEASE.set()
        await worker.close()


async def test_a_queues_count_that_gains_digits_is_not_cut(tmp_path: Path) -> None:
    """DUE was sized for ``5`` (under a three-letter heading): 1,005 due jobs read ``1,0``."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    producer = Monque(url, recover_stale_jobs=False)
    await producer.initialize()
    try:
        await producer.enqueue_many([{"name": "task", "data": {"n": n}} for n in range(5)])
        app = MonqueConsole(ConsoleConfig(url=url))
        async with app.run_test(size=(200, 30)) as pilot:
            await asyncio.wait_for(app.ready.wait(), 10)
            await pilot.press("w")
            await wait_for(lambda: isinstance(app.screen, QueuesScreen) and "task" in app.screen.health)
            screen = app.screen
            assert isinstance(screen, QueuesScreen)
            table = screen.query_one(DataTable)
            await wait_for(lambda: str(table.get_cell("task", ColumnKey("due"))) == "5")

            await producer.enqueue_many([{"name": "task", "data": {"n": n}} for n in range(1_000)])
            await wait_for(lambda: str(table.get_cell("task", ColumnKey("due"))) == "1,005")
            await pilot.pause()
            assert _cut_columns(table, "task") == []
    finally:
        await producer.close()

"""The jobs table's ages move with the clock on a quiet queue (probe 6).

Rows were redrawn only when a change arrived, so on a queue gone quiet (in the probe, the
workers stopped by a full disk) every row kept "1s ago" for minutes under "● live". A real
console (Pilot) on a seeded SQLite file where nothing changes; its clock moves an hour. The
ages then read "1h03m a…" in UPDATED's 8 cells: they are now whole ("1h ago").
"""

from __future__ import annotations

import asyncio

from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.formatting import relative, short_id
from monque_tui.console.widgets.job_table import fit_age
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import wait_for
from .test_confirm_width import screen_text


def _line(app: MonqueConsole, job_id: str) -> str:
    return next(line for line in screen_text(app).splitlines() if short_id(job_id) in line)


async def test_row_ages_move_without_changes(seeded_url: str) -> None:
    now = [SEED_NOW_MS]
    app = MonqueConsole(ConsoleConfig(url=seeded_url), clock=lambda: now[0], live=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await pilot.pause()
        job = app.jobs_screen.window.rows[0]
        before = relative(job.updated_at_ms, now[0])
        await wait_for(lambda: before in _line(app, job.id))
        now[0] += 3_600_000  # an hour passes; nothing in the store changes
        after = fit_age(relative(job.updated_at_ms, now[0]), 8)
        assert after == "1h ago" and after != before  # 1h03m: whole in UPDATED's 8 cells
        await wait_for(lambda: after in _line(app, job.id))
        assert "…" not in _line(app, job.id)

"""An open job detail keeps its ages current (probe 5).

In tmux, a completed job's detail said "created … 1s ago" for as long as it stayed open, and
a processing job whose owner stopped beating never showed "owner status: dead" nor offered
`x`: the body was drawn when the job was read, and heartbeats are not in the change feed.
The detail now redraws its fields when their text would change.
"""

from __future__ import annotations

import asyncio

from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.demo.seed import SEED_NOW_MS, seed_id

from .conftest import move_to, wait_for
from .test_confirm_width import screen_text

PROCESSING = seed_id(4)  # heartbeat 20 s before the seed's now, every 30 s


def _body(app: MonqueConsole) -> str:
    return screen_text(app)


async def test_the_detail_redraws_ages_and_the_dead_owner_as_time_passes(seeded_url: str) -> None:
    now = [SEED_NOW_MS]
    app = MonqueConsole(ConsoleConfig(url=seeded_url), clock=lambda: now[0], live=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await pilot.pause()
        await move_to(app, pilot, PROCESSING)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
        screen = app.screen
        assert isinstance(screen, JobDetailScreen)
        await wait_for(lambda: "20s old" in _body(app))
        assert "owner status" not in _body(app)
        assert screen.check_action("release_owner", ()) is None  # the owner is alive: x greyed
        now[0] += 60_000  # a minute passes; nothing about the job changes in the store
        await wait_for(lambda: "1m old" in _body(app))
        assert "owner status" in _body(app) and "dead" in _body(app)
        assert screen.check_action("release_owner", ()) is True

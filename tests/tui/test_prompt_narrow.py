"""The reschedule prompt at 60 columns fits the terminal (probe finding).

Its dialog was 72 cells wide whatever the terminal: at 60 columns its right part was off
screen and the hint read "…such as 2030-01-02T15" with "(UTC unless an offset is given)"
lost. Real app driven by Pilot at 60x20.
"""

from __future__ import annotations

from textual.containers import Vertical

from monque_tui.console.screens.when import WhenScreen
from monque_tui.demo.seed import seed_id

from .conftest import move_to, running_console, wait_for
from .test_confirm_width import screen_text


async def test_the_reschedule_prompt_fits_60_columns(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(60, 20)) as (app, pilot):
        await move_to(app, pilot, seed_id(1))  # pending: reschedulable
        await pilot.press("t")
        await wait_for(lambda: isinstance(app.screen, WhenScreen))
        await pilot.pause()
        dialog = app.screen.query_one(Vertical)
        assert dialog.region.right <= 60, dialog.region
        flat = " ".join(" ".join(line.strip(" █▌▐") for line in screen_text(app).splitlines()).split())
        assert "(UTC unless an offset is given)" in flat, flat
        await pilot.press("escape")

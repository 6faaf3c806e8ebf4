"""The filter bar's four fields are not part of the console's first frame (issue 40: launch to
first rows): nine widgets styled and laid out for a hidden bar. They mount a frame later, and
``/`` pressed at once, before they are there, still lands in the name field. Real app driven by
Pilot over a seeded SQLite file."""

from __future__ import annotations

import asyncio

from textual.screen import Screen
from textual.widgets import Input

from monque_tui.console.app import MonqueConsole
from monque_tui.console.clock import frozen_clock
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.console.widgets.job_table import JobTable
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import running_console, wait_for


async def test_the_first_frame_has_no_filter_fields_and_they_mount_after_it(seeded_url: str) -> None:
    app = MonqueConsole(ConsoleConfig(url=seeded_url), clock=frozen_clock(SEED_NOW_MS), live=True)
    #: Per frame handed to the terminal: (the table had drawn a job, the filter fields mounted).
    frames: list[tuple[bool, int]] = []
    display = app._display

    def recording_display(screen: Screen[object], renderable: object) -> None:
        display(screen, renderable)
        if renderable is not None:
            frames.append((app.jobs_screen.query_one(JobTable)._painted, len(screen.query(Input))))

    app._display = recording_display  # type: ignore[method-assign]
    await app.start_opening()  # as ``launch.py`` does: the first frame holds the first rows
    async with app.run_test(size=(140, 36)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        first_rows = next(fields for painted, fields in frames if painted)
        assert first_rows == 0
        bar = app.jobs_screen.query_one(FilterBar)
        await wait_for(lambda: len(bar.query(Input)) == 4)
        assert not bar.has_class("-open")
        await pilot.press("slash", *"send")
        await wait_for(lambda: bar.query_one("#filter-name", Input).value == "send")


async def test_slash_before_the_fields_mount_focuses_the_name_field(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        bar = app.jobs_screen.query_one(FilterBar)
        # As if ``/`` came before the fields' mount: a fresh bar state, the old fields removed.
        await bar.query_one("Horizontal").remove()
        bar._inputs.clear()
        bar._mounting = None
        bar.open()
        await wait_for(lambda: bool(bar._inputs) and bar._inputs["filter-name"].has_focus)
        await pilot.press(*"email")
        await wait_for(lambda: bar._inputs["filter-name"].value == "email")
        assert bar.values == ("email", None)

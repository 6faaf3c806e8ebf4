"""The filter bar below 110 columns: two rows of two fields, each wide enough to show its value.

Probe 7 at 60x15: in one row the name and id/key fields had no room for a character (the
name filter in force, ``email.send``, showed as an empty box, so the view looked unfiltered
while it was not), and "contains" had no field on screen at all. Real app driven by Pilot.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input

from monque_tui.console.widgets.filter_bar import FilterBar

from .conftest import running_console, wait_for


@pytest.mark.parametrize("size", [(60, 15), (80, 24), (100, 30)])
async def test_every_field_shows_what_was_typed(seeded_url: str, size: tuple[int, int]) -> None:
    async with running_console(seeded_url, size=size) as (app, pilot):
        await pilot.press("slash")
        bar = app.jobs_screen.query_one(FilterBar)
        await wait_for(lambda: bar.has_class("-open") and bar.query_one("#filter-name", Input).content_size.width > 0)
        await pilot.pause()
        typed = {"#filter-name": "email.send", "#filter-search": "8a2a8d4d", "#filter-text": "smtp refused"}
        for field_id, value in typed.items():
            bar.query_one(field_id, Input).value = value
        await pilot.pause()
        for field in bar.query(Input):
            region = field.content_region
            assert region.width >= 16, (field.id, region)  # "email.send", an id, "created -2h.."
            assert app.screen.region.contains_region(field.region), (field.id, field.region)  # on screen, whole
        for field_id, value in typed.items():
            assert bar.query_one(field_id, Input).content_size.width >= len(value)


async def test_a_wide_terminal_keeps_one_row(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(140, 36)) as (app, pilot):
        await pilot.press("slash")
        bar = app.jobs_screen.query_one(FilterBar)
        await wait_for(lambda: bar.has_class("-open"))
        await pilot.pause()
        rows = {field.region.y for field in bar.query(Input)}
        assert len(rows) == 1, rows

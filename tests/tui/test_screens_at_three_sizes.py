"""What each screen keeps on screen at 80×24, 100×30 and 160×45 (issue 28).

At 80 columns the jobs table cut the name (``webhook.de…``) and kept the owner, every error
group read ``POST https://hooks.example…``, the Queues view's health columns were off screen
and the footer kept ``s Sort`` over ``t Reschedule``. Real app driven by Pilot over SQLite
files: the seeded store, and two groups failed by a real worker whose messages differ only
at their end.
"""

from __future__ import annotations

import pytest

from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.screens.workers import WorkersScreen
from monque_tui.demo.seed import SEED_JOBS, seed_id

from .conftest import move_to, open_errors, running_console, table_ids, wait_for
from .test_confirm_width import screen_text
from .test_errors_widths import MESSAGES, _fail_two_groups

SIZES = [(80, 24), (100, 30), (160, 45)]
IDS = [f"{w}x{h}" for w, h in SIZES]


def _line_with(app: object, needle: str) -> str:
    return next((line for line in screen_text(app).splitlines() if needle in line), "")


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_jobs_view_shows_names_whole_and_error_types(seeded_url: str, size: tuple[int, int]) -> None:
    async with running_console(seeded_url, size=size) as (app, _pilot):
        await wait_for(lambda: len(table_ids(app)) == len(SEED_JOBS))
        text = screen_text(app)
        for name in ("nightly-report", "resize-image", "send-email", "webhook"):
            assert f" {name} " in text, text
        assert "ConnectTimeout: timed out" in _line_with(app, seed_id(12)[-8:]), text
        assert "ReadTimeout: read timed out" in _line_with(app, seed_id(13)[-8:]), text
        assert "UnidentifiedImageError" in text
        if size[0] < 120:
            assert "OWNER" not in text  # the owner is the first column to go
        footer = text.splitlines()[-1]
        assert "t Reschedule" in footer, footer


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_errors_view_shows_type_count_and_the_part_that_differs(store_url: str, size: tuple[int, int]) -> None:
    await _fail_two_groups(store_url)
    async with running_console(store_url, size=size) as (app, pilot):
        await open_errors(app, pilot, groups=2)
        await wait_for(lambda: all(_line_with(app, m.split("/")[-1].split()[0]) for m in MESSAGES))
        text = screen_text(app)
        assert "COUNT" in text and "RETRY" in text and "FIRST" in text, text  # RETRY(ING): narrow labels
        for message in MESSAGES:
            differing = message.split("/")[-1].split()[0]  # "orders", "users"
            line = _line_with(app, differing)
            assert line, text
            assert "RuntimeError" in line and " 1 " in line, line


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_queues_view_keeps_its_health_and_consumers(seeded_url: str, size: tuple[int, int]) -> None:
    async with running_console(seeded_url, size=size) as (app, pilot):
        await pilot.press("w")
        await wait_for(lambda: isinstance(app.screen, QueuesScreen) and app.screen.loads > 0)

        def report_row() -> str | None:
            # Its table row, not the name anywhere: the header's alerts line names it too
            # ("no consumer"), drawn before the table's rows (seen under a full suite's load).
            lines = screen_text(app).splitlines()
            return next((line for line in lines if line.strip().startswith("nightly-report")), None)

        try:
            await wait_for(lambda: report_row() is not None)  # loaded is not yet drawn
        except AssertionError:
            raise AssertionError(f"no nightly-report row on screen:\n{screen_text(app)}") from None
        text = screen_text(app)
        header = _line_with(app, "NAME")
        for column in ("DUE", "OLDEST DUE", "CONSUMERS", "FAILED/M"):
            assert column in header, header
        row = report_row()
        assert row is not None, text
        assert "⚠ none" in row, text  # due, and no worker consumes it
        assert "no live consumer" in text


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_workers_and_detail_keep_what_identifies(seeded_url: str, size: tuple[int, int]) -> None:
    async with running_console(seeded_url, size=size) as (app, pilot):
        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and app.screen.loads > 0)
        await wait_for(lambda: bool(_line_with(app, "STATE")))
        header = _line_with(app, "STATE")
        assert "ID" in header and "NAMES" in header, screen_text(app)
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        await move_to(app, pilot, seed_id(12))
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
        await wait_for(lambda: "ConnectTimeout" in screen_text(app))
        text = screen_text(app)
        assert "webhook" in text and "ConnectTimeout" in text, text


async def test_the_wide_toggle_shows_a_cut_cell_whole(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) == len(SEED_JOBS))
        whole = "httpx.ConnectTimeout: timed out connecting to hooks.example.com:443"
        assert whole not in screen_text(app)
        await pilot.press("z")
        table = app.jobs_screen.table
        await wait_for(lambda: table.wide and table.virtual_size.width > 80)
        for _ in range(10):
            if whole in screen_text(app):
                break
            await pilot.press("right")
        assert whole in screen_text(app)
        await pilot.press("z")
        await wait_for(lambda: not table.wide and table.scroll_x == 0)
        assert "ConnectTimeout: timed out" in screen_text(app)

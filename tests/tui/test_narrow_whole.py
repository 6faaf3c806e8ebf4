"""At any width the jobs table and the tabs line show whole columns, counts and filter words (probe 5).

Driving the console in tmux at 60x20 and 40x12 (and after resizing from 200x60 down to 40x12)
showed the table's last column cut at the screen edge (``OWNE``, a lone ``i`` of "in 5s"),
the "↑ N above (g)" hint gone with the error column, the sixth tab's count cut off
(``6`` without its number), and at 120 columns a filtered view described as
``pending named 'be…`` while its sort text stayed whole.
"""

from __future__ import annotations

import re

import pytest

from monque_engine import JobStatus, QueueStats
from monque_tui.console.formatting import due_or_finished

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text

HEADER_WORDS = {"ID", "↓", "↑", "NAME", "STATUS", "ATT", "NEXT", "RUN", "UPDATED", "OWNER", "ERROR"}
STATS = QueueStats(pending=11_426, processing=3, completed=15_554, failed=97, cancelled=1_130)


def _tabs_line(app: object) -> str:
    return next(line for line in screen_text(app).splitlines() if "│" in line and re.search(r"\b[1-6] ", line))


@pytest.mark.parametrize("size", [(40, 12), (60, 20), (66, 20), (80, 24)])
async def test_the_table_shows_whole_columns_only(seeded_url: str, size: tuple[int, int]) -> None:
    async with running_console(seeded_url, size=size) as (app, pilot):
        table = app.jobs_screen.table
        await wait_for(lambda: len(table.rows) > 3)
        await pilot.pause()
        header = table.render_line(0).text
        assert set(header.split()) <= HEADER_WORDS, header
        assert {"ID", "NAME", "STATUS"} <= set(header.split()), header
        for y in range(1, 4):
            row = table.render_line(y).text
            job = table.rows[int(table.scroll_y) + y - 1]
            # Each shown cell whole: the status word, and a next-run cell never cut to "i" of "in 5s".
            assert job.status.value in row.split(), row
            if "NEXT" in header:
                assert due_or_finished(job, app.clock()) in row, row


@pytest.mark.parametrize("size", [(40, 12), (60, 14)])
async def test_rows_above_are_announced_without_an_error_column(seeded_url: str, size: tuple[int, int]) -> None:
    async with running_console(seeded_url, size=size) as (app, pilot):
        table = app.jobs_screen.table
        await wait_for(lambda: len(table.rows) > 12)
        await pilot.press("G")
        await wait_for(lambda: int(table.scroll_y) > 0)
        await pilot.pause()
        header = table.render_line(0).text
        assert f"↑ {int(table.scroll_y):,} above (g)" in header, header
        assert len(header.rstrip()) <= table.scrollable_content_region.width


async def test_a_resize_from_200x60_to_40x12_and_back_keeps_every_count_whole(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(200, 60)) as (app, pilot):
        tabs = app.jobs_screen.query_one("StatusTabs")
        await pilot.press("6")
        await wait_for(lambda: app.jobs_screen.window.query.status is JobStatus.CANCELLED)
        await pilot.pause()
        for size in ((40, 12), (200, 60)):
            await pilot.resize_terminal(*size)
            await wait_for(lambda width=size[0]: app.size.width == width)
            tabs.stats = STATS  # big counts (a stats refresh may put the seed's back: compared below)
            await pilot.pause()
            line = _tabs_line(app)
            stats = tabs.stats
            assert stats is not None
            counts = {
                str(i): f"{stats.total if s is None else stats.count(s):,}"
                for i, s in enumerate((None, *JobStatus), start=1)
            }
            assert "│ cancelled" in line, line
            # Every tab shown has its whole count; the active one (6) is always shown.
            shown = re.findall(r"(\d) (?:[A-Za-z]+ )?([\d,]+)", line.split("│")[0])
            assert shown and all(counts[index] == count for index, count in shown), line
            assert ("6", counts["6"]) in shown, line


@pytest.mark.parametrize("width", [80, 100, 120])
async def test_a_filtered_view_names_its_filter_whole(seeded_url: str, width: int) -> None:
    async with running_console(seeded_url, size=(width, 24)) as (app, pilot):
        app.jobs_screen.query_one("StatusTabs").stats = STATS
        await pilot.press("2", "slash", *"send-email", "enter")
        await wait_for(lambda: app.jobs_screen.window.query.name == "send-email")
        app.jobs_screen.query_one("StatusTabs").stats = STATS
        await pilot.pause()
        line = _tabs_line(app)
        assert "│ pending named 'send-email'" in line, line
        assert "'send-e…" not in line and not line.rstrip().endswith("…'"), line

"""The top lines at 80 columns say whole things (probe findings, 80x24 and 60x20 in tmux).

- The header ended "workers: email.send," (at 60 "workers:" alone) and pushed the marked
  count off the line: the names now take what room is left, then ``+N``, after the marks.
- The throughput line ended "failed attempts/s" without its number: it now drops the
  legend, shortens the sparklines, then drops parts whole.
- The sorted column's header read "UPDATED…": the arrow now fits ("UPDATED↓").

Real app driven by Pilot over a seeded SQLite file, read as the terminal shows it.
"""

from __future__ import annotations

import re

from monque_tui.console.widgets.console_header import ConsoleHeader, workers_text
from monque_tui.console.widgets.throughput_graph import ThroughputGraph, throughput_text

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text

NAMES = ("email.send", "image.resize", "metrics.rollup", "report.generate", "webhook.deliver")


async def test_header_keeps_the_marked_count_and_whole_worker_names(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        app.jobs_screen.query_one(ConsoleHeader).worker_names = NAMES
        await pilot.press("space")
        await wait_for(lambda: "1 marked" in screen_text(app).splitlines()[0])
        for width in (80, 60, 100, 200):
            await pilot.resize_terminal(width, 24)  # type: ignore[attr-defined]
            await wait_for(lambda w=width: app.size.width == w)
            await pilot.pause()
            header = screen_text(app).splitlines()[0].rstrip()
            assert "1 marked" in header, f"{width}: {header!r}"
            tail = header.rsplit(" · ", 1)[-1]
            if tail.startswith("workers: ") and not tail.endswith(" names"):
                # Whole names, the first ones, then how many more: never a name or list cut short.
                match = re.fullmatch(r"workers: (.*?)(?: \+(\d+))?", tail)
                assert match is not None, tail
                names = tuple(match.group(1).split(", "))
                assert names == NAMES[: len(names)], f"{width}: {header!r}"
                assert int(match.group(2) or 0) == len(NAMES) - len(names), f"{width}: {header!r}"
            if width == 200:
                assert tail.startswith("workers: email.send"), header  # room for names at 200 columns


async def test_throughput_line_never_ends_in_a_label(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        graph = app.jobs_screen.query_one(ThroughputGraph)
        for width in (80, 100, 60, 160):
            await pilot.resize_terminal(width, 24)  # type: ignore[attr-defined]
            await wait_for(lambda w=width: app.size.width == w)
            graph.show([1.0] * 30, [0.5] * 30)
            await pilot.pause()
            line = screen_text(app).splitlines()[graph.region.y].rstrip()  # (the alerts line may sit above it)
            assert re.search(r"(\d|\))$", line), f"{width}: {line!r}"  # a number (or the legend) ends it
            assert len(line) <= width


async def test_the_sorted_column_keeps_its_arrow(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):

        def heading() -> str:
            """The table's heading line, found by the table's place (the alerts line may sit above)."""
            return screen_text(app).splitlines()[app.jobs_screen.table.region.y]

        await pilot.press("s")  # created -> updated
        await wait_for(lambda: "UPDATED" in heading() and "ID ↓" not in screen_text(app))
        assert re.search(r"UPDATED ?[↑↓]", heading()), heading()
        await pilot.press("s")  # -> next run
        await wait_for(lambda: re.search(r"NEXT RUN ?[↑↓]", heading()) is not None)


def test_workers_text_fits_the_room() -> None:
    assert workers_text(NAMES, None) == "workers: " + ", ".join(NAMES)
    assert workers_text(NAMES, 25) == "workers: email.send +4"
    assert workers_text(NAMES, 16) == "workers: 5 names"
    assert workers_text(NAMES, 5) == ""
    assert workers_text((), 80) == ""
    assert throughput_text([1.0] * 30, [1.0] * 30, 78).plain.endswith("failed attempts/s    1.0")

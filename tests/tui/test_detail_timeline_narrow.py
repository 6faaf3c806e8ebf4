"""The attempt timeline at 60 and 80 columns keeps whole cells (probe finding).

At 60 columns every cell of the timeline was squeezed to an ellipsis ("… retry…
worker-1:881:c01d… 2026-01-15 11:45:58.… 1."): neither the attempt number nor its
duration could be read. A narrow terminal now drops the start's date, then the instance,
then the start; the number, outcome and duration stay whole, and the message takes the
rest. Real app driven by Pilot at 60x20, 80x24 and 160x40.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from monque_tui.demo.seed import seed_id

from .conftest import open_detail, running_console, wait_for

FAILED = seed_id(2)  # attempts #8 retrying 1.57s, #9 retrying 1.61s, #10 failed 1.65s


def _timeline(screen: Any) -> list[str]:
    rendered = screen.query_one("#detail-attempts", Static)
    lines = [str(line.text) for line in rendered.render_lines(rendered.region.reset_offset)]
    return [line.strip(" │╭╮╰╯─") for line in lines]


async def test_the_timeline_keeps_number_outcome_and_duration_whole(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(60, 20)) as (app, pilot):
        screen = await open_detail(app, pilot, FAILED)
        for width, started, instance in ((60, False, False), (80, True, False), (160, True, True)):
            await pilot.resize_terminal(width, 30)  # type: ignore[attr-defined]
            await wait_for(lambda w=width: app.size.width == w)
            await pilot.pause()
            rows = [line for line in _timeline(screen) if line.lstrip("▶ ").startswith("#")]
            assert len(rows) == 3, (width, _timeline(screen))
            for row, (number, outcome, duration) in zip(
                rows,
                (("#8", "retrying", "1.57s"), ("#9", "retrying", "1.61s"), ("#10", "failed", "1.65s")),
                strict=True,
            ):
                assert f"{number} " in row and outcome in row and duration in row, (width, row)
                assert ("11:45:58" in row or "11:46:58" in row or "11:47:58" in row) is started, (width, row)
                assert ("worker-" in row) is instance, (width, row)
                assert "aiosmtplib" in row, (width, row)  # the message keeps its room

"""Inside an error group the tabs line names the group and its counts at every width (issue 28).

It showed bare global counts (``1 332 2 2 3 3 …``) and at 80 columns only ``│ all …``, just
before ``D`` deleted the group. Real app driven by Pilot over a seeded SQLite file.
"""

from __future__ import annotations

import pytest

from .conftest import running_console, table_ids, wait_for
from .test_confirm_width import screen_text
from .test_errors_view import WEBHOOK_FAILED, _cursor_to, _open_errors


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_group_and_its_counts_are_on_screen(seeded_url: str, size: tuple[int, int]) -> None:
    async with running_console(seeded_url, size=size) as (app, pilot):
        screen = await _open_errors(app, pilot)
        await _cursor_to(screen, pilot, "httpx.ConnectTimeout")
        await pilot.press("enter")
        jobs = app.jobs_screen
        await wait_for(lambda: app.screen is jobs and table_ids(app) == [WEBHOOK_FAILED])
        await wait_for(lambda: "1 failed · 0 retrying" in screen_text(app))
        line = next(line for line in screen_text(app).splitlines() if "1 failed · 0 retrying" in line)
        assert "group webhook httpx.Conn" in line, line
        await pilot.press("5")  # a status inside the group: still named, and which status shows
        await wait_for(lambda: "showing failed" in screen_text(app))
        assert "group webhook httpx.Conn" in screen_text(app)

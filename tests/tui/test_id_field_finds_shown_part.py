"""The console's id field finds a job by 7 of the 8 characters the table shows, and an
empty result says what the field matches (issue 28). Real app driven by Pilot."""

from __future__ import annotations

from monque_engine import Monque
from monque_tui.console.formatting import short_id

from .conftest import running_console, table_ids, wait_for
from .test_confirm_width import screen_text


async def _store(url: str) -> list[str]:
    m = Monque(url)
    await m.initialize()
    try:
        return [(await m.enqueue("s", {"i": i})).id for i in range(6)]
    finally:
        await m.close()


async def test_the_console_finds_seven_of_the_eight_and_says_why_when_nothing_matches(store_url: str) -> None:
    ids = await _store(store_url)
    target = ids[2]
    async with running_console(store_url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) == len(ids))
        fragment = short_id(target)[:7]  # neighbours share it: each of them is found
        await pilot.press("slash", "tab", *fragment)
        expected = [job_id for job_id in reversed(ids) if fragment in job_id[-8:]]
        await wait_for(lambda: app.jobs_screen.window.query.search == fragment and table_ids(app) == expected)
        assert target in expected
        await pilot.press("ctrl+u", *"fff")
        await wait_for(lambda: table_ids(app) == [] and "at least 4" in screen_text(app))

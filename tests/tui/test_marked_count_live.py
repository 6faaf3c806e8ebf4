"""The header's "all N matching marked" follows the view's count (probe 5).

In tmux, with a worker and a producer on the file: after `A` the header kept the count taken
when the key was pressed ("all 19,190 matching marked") while the Pending tab beside it
moved on (19,123, then 19,562). The header now follows the view's count as the tabs do;
the confirmation still counts again, and the action never exceeds what it confirms.
"""

from __future__ import annotations

from monque_tui.console.query import JobQuery
from monque_tui.console.widgets.console_header import ConsoleHeader

from .conftest import running_console, wait_for
from .test_fleet_bulk import enqueue


async def test_the_marked_count_follows_the_view(seeded_url: str) -> None:
    await enqueue(seeded_url, "bulk", 30)
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        screen.apply_query(JobQuery(name="bulk"))
        await wait_for(lambda: screen.window.query.name == "bulk" and len(screen.window) == 30)
        screen.table.focus()
        await pilot.press("A")
        header = screen.query_one(ConsoleHeader)
        await wait_for(lambda: header.marked_all and header.marked == 30)
        await enqueue(seeded_url, "bulk", 7)  # another process adds to the marked view
        await wait_for(lambda: header.marked == 37)
        assert header.marked_all and "all 37 matching marked" in str(header.render())

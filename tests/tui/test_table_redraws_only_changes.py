"""A reloaded window redraws the jobs table only when what the screen shows differs (issue 40).

Beside a drain of 5,000 jobs/s every feed flush overflows and reloads the window around the
cursor, twice a second; the rows on screen were nearly always the ones already drawn, and
each reload redrew the whole table. The skip must never hide a change: a row on screen whose
status moved, or another job in a row's place, is redrawn. Real store, real console, Pilot.
"""

from __future__ import annotations

from typing import Any

from monque_engine import JobStatus
from monque_tui.console.widgets.job_table import JobTable
from monque_tui.console.window import JobWindow

from .conftest import running_console, wait_for


def _count_refreshes(table: JobTable) -> list[int]:
    calls: list[int] = []
    original = table.refresh

    def counted(*regions: Any, **options: Any) -> JobTable:
        calls.append(1)
        return original(*regions, **options)

    table.refresh = counted  # type: ignore[method-assign]
    return calls


def _reloaded(table: JobTable, rows: list[Any]) -> JobWindow:
    """The window as a reload around the cursor makes it: a new window of the rows read again."""
    shown = table.window
    assert shown is not None
    window = JobWindow(shown.query)
    window.replace(rows, shown.has_before, shown.has_after, shown.offset)
    return window


async def test_a_reload_showing_the_same_rows_draws_nothing_and_a_changed_row_is_drawn(seeded_url: str) -> None:
    async with running_console(seeded_url, live=False) as (app, pilot):
        table = app.jobs_screen.table
        await wait_for(lambda: len(table.rows) > 5)
        await pilot.pause()
        cursor = table.cursor_job
        assert cursor is not None
        calls = _count_refreshes(table)

        # The same jobs, read again (new objects, same updates): nothing to draw.
        same = [job.replace() for job in table.rows]
        table.show_window(_reloaded(table, same), cursor.id)
        assert calls == []

        # A row on screen changed status (same id): drawn, and the screen shows it.
        row = 2
        changed = list(table.rows)
        job = changed[row]
        status = JobStatus.CANCELLED if job.status is not JobStatus.CANCELLED else JobStatus.PENDING
        changed[row] = job.replace(status=status)
        table.show_window(_reloaded(table, changed), cursor.id)
        assert calls, "a visible row's new status was not drawn"
        await pilot.pause()
        assert status.value in table.render_line(row + 1 - int(table.scroll_y)).text

        # Another job in a row's place (the same count of rows): drawn.
        calls.clear()
        swapped = list(table.rows)
        swapped[3], swapped[4] = swapped[4], swapped[3]
        table.show_window(_reloaded(table, swapped), cursor.id)
        assert calls, "rows that changed places were not drawn"

        # Back to rows the screen no longer shows (it shows the swap): drawn again.
        calls.clear()
        table.show_window(_reloaded(table, changed), cursor.id)
        assert calls, "the rows drawn before the last redraw were taken for the ones on screen"

        # A redraw asked for elsewhere (a mark, a live diff, the ages' second) counts as shown.
        calls.clear()
        table.refresh()
        table.show_window(_reloaded(table, [job.replace() for job in table.rows]), cursor.id)
        assert len(calls) == 1

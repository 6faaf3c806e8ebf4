"""A job row damaged by hand (its payload is not JSON) in the console (probe finding).

Opening its detail crashed the console (WorkerFailed: JSONDecodeError). The table reads
rows without their payload, so it still lists the job; its detail now says in place of
the fields why the row cannot be read and how to fix it, and the operator can delete the
job from there (the keys act on the table's row). Real app, driven by Pilot,
on a real SQLite file damaged with plain ``sqlite3``.
"""

from __future__ import annotations

import sqlite3

from textual.widgets import Static

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.demo.seed import seed_id

from .conftest import move_to, running_console, table_ids, wait_for

DAMAGED = seed_id(2)


def _body(app: object) -> str:
    screen = app.screen  # type: ignore[attr-defined]
    return str(screen.query_one("#detail-body", Static).render())


async def test_detail_of_an_unreadable_job_shows_why_and_the_console_keeps_running(seeded_url: str) -> None:
    path = seeded_url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE monque_jobs SET data = 'not json{' WHERE id = ?", (DAMAGED,))
    conn.commit()
    conn.close()
    async with running_console(seeded_url) as (app, pilot):
        assert DAMAGED in table_ids(app)
        await move_to(app, pilot, DAMAGED)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and "not a readable Monque job" in _body(app))
        body = _body(app)
        assert DAMAGED in body and "column data is not JSON" in body and "fix or delete it" in body
        # The table's row (read without the payload) is what the keys act on: delete works.
        await pilot.press("d")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(lambda: app.screen is app.jobs_screen and DAMAGED not in table_ids(app))
        assert app.is_running
    conn = sqlite3.connect(path)  # not through a listing: those skip unreadable rows
    try:
        assert conn.execute("SELECT count(*) FROM monque_jobs WHERE id = ?", (DAMAGED,)).fetchone() == (0,)
    finally:
        conn.close()


async def test_a_row_with_a_text_instant_is_left_out_of_the_table_and_the_rest_is_shown(seeded_url: str) -> None:
    """Issue 34: a hand edit of ``created_at`` to text made a Job whose age the table could
    not compute. The row is unreadable now (as a payload that is not JSON is), so the table
    lists every other job, and the console keeps running."""
    path = seeded_url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE monque_jobs SET created_at = 'soon', updated_at = 'later' WHERE id = ?", (DAMAGED,))
    conn.commit()
    conn.close()
    async with running_console(seeded_url) as (app, _pilot):
        await wait_for(lambda: seed_id(1) in table_ids(app) and seed_id(3) in table_ids(app))
        assert DAMAGED not in table_ids(app) and app.is_running

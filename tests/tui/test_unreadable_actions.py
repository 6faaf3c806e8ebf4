"""Cancel, retry and reschedule of unreadable (hand-damaged) rows from the jobs table (probe finding).

The engine reads a job before it cancels, retries or reschedules it, and refuses a row it
cannot read. The console said only "Cancel failed: Stored row … fix or delete it", and with
several marked jobs one damaged row made the whole batch read as failed although the others
had been cancelled. Now each damaged row is left alone and counted, the rest are acted on,
and one warning says what works: delete (d), or repairing the row. Stored rows other than
the acted-on ones are untouched. Real app driven by Pilot over a real SQLite file damaged
with plain ``sqlite3``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.demo.seed import seed_id

from .conftest import move_to, running_console, wait_for
from .toasts import message_of, toasts

DAMAGED_PENDING = seed_id(1)
DAMAGED_FAILED = seed_id(2)
PENDING = seed_id(5)


def _damage(url: str, *ids: str) -> sqlite3.Connection:
    conn = sqlite3.connect(url.removeprefix("sqlite:///"))
    for job_id in ids:
        conn.execute("UPDATE monque_jobs SET data = 'not json{' WHERE id = ?", (job_id,))
    conn.commit()
    return conn


def _statuses(conn: sqlite3.Connection) -> dict[str, tuple[str, int]]:
    return {row[0]: (row[1], row[2]) for row in conn.execute("SELECT id, status, next_run_at FROM monque_jobs")}


def _new_toasts(app: Any, before: list[Any]) -> list[Any]:
    return [toast for toast in toasts(app) if toast not in before]


async def _confirm(app: Any, pilot: Any, *keys: str) -> None:
    await pilot.press(*keys)
    await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
    await pilot.press("y")
    await wait_for(lambda: app.screen is app.jobs_screen)


async def test_cancel_and_retry_of_a_damaged_row_say_only_delete_works(seeded_url: str) -> None:
    conn = _damage(seeded_url, DAMAGED_PENDING, DAMAGED_FAILED)
    before = _statuses(conn)
    try:
        async with running_console(seeded_url, notifications=True) as (app, pilot):
            for job_id, key, verb in ((DAMAGED_PENDING, "c", "cancel"), (DAMAGED_FAILED, "r", "retry")):
                shown = toasts(app)
                await move_to(app, pilot, job_id)
                await _confirm(app, pilot, key)
                await wait_for(lambda shown=shown: bool(_new_toasts(app, shown)))
                notice = _new_toasts(app, shown)[-1]
                message = message_of(notice, verb.capitalize())
                assert notice.has_class("-warning"), message
                assert message.startswith(f"Cannot {verb} job "), message
                assert "stored row is damaged (column data is not JSON" in message, message
                assert "only delete works on it (d)" in message, message
                assert "Traceback" not in message and "\n" not in message
            assert _statuses(conn) == before  # nothing changed
            # And delete does work on it.
            await move_to(app, pilot, DAMAGED_PENDING)
            await _confirm(app, pilot, "d")
            await wait_for(lambda: DAMAGED_PENDING not in _statuses(conn))
    finally:
        conn.close()


async def test_a_marked_batch_acts_on_the_readable_jobs_and_counts_the_damaged_one(seeded_url: str) -> None:
    conn = _damage(seeded_url, DAMAGED_PENDING)
    try:
        async with running_console(seeded_url, notifications=True) as (app, pilot):
            for job_id in (PENDING, DAMAGED_PENDING):
                await move_to(app, pilot, job_id)
                await pilot.press("space")
            before = toasts(app)
            await _confirm(app, pilot, "c")
            await wait_for(lambda: bool(_new_toasts(app, before)))
            message = message_of(_new_toasts(app, before)[-1], "Cancel")
            assert message.startswith("Cancelled 1 job; could not cancel job "), message
            assert "only delete works on it (d)" in message, message
            statuses = _statuses(conn)
            assert statuses[PENDING][0] == "cancelled" and statuses[DAMAGED_PENDING][0] == "pending"
    finally:
        conn.close()

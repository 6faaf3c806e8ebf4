"""A job's detail offers only keys that can act (probe finding).

When the job shown was deleted by another process (or by retention), the detail said so but
its footer still offered Cancel, Retry, Reschedule and Delete (greyed or not), the palette
too, and its old payload and attempt history stayed on screen as if current; the paging keys
stayed enabled and did nothing. Now the job keys are withdrawn (Back, Help, Commands, Quit
remain) and the stale parts are cleared. On an unreadable (damaged) row only Delete is
offered: cancel, retry and reschedule read the job first and fail on it. Real app driven by
Pilot over a real SQLite file; the deletion is made by a second Monque instance on the file,
the damage with plain ``sqlite3``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from textual.widgets import Static
from textual.widgets._footer import FooterKey

from monque_engine import Monque
from monque_tui.console.palette import palette_commands
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.widgets.console_footer import ConsoleFooter
from monque_tui.demo.seed import seed_id

from .conftest import open_detail, running_console, wait_for

FAILED = seed_id(2)  # retryable, with an attempt history and a payload
PENDING = seed_id(1)  # cancellable and reschedulable

JOB_KEY_ACTIONS = {"act('cancel')", "act('retry')", "act('reschedule')", "act('delete')", "release_owner"}


def _footer_actions(screen: Any) -> set[str]:
    return {key.action for key in screen.query_one(ConsoleFooter).query(FooterKey)}


def _body(screen: Any) -> str:
    return str(screen.query_one("#detail-body", Static).render())


async def test_a_deleted_jobs_detail_offers_only_back(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 40)) as (app, pilot):
        screen = await open_detail(app, pilot, FAILED)
        assert screen.attempts and screen.payload is not None
        await wait_for(lambda: "act('retry')" in _footer_actions(screen))
        other = Monque(seeded_url, recover_stale_jobs=False)  # another process's view of the file
        await other.initialize()
        try:
            assert await other.delete_job(FAILED)
        finally:
            await other.close()
        await wait_for(lambda: "no longer exists" in _body(screen))
        # The footer recomposes when the bindings change: wait for the new set to be drawn
        # (an empty footer mid-recompose also has no job keys).
        remaining = {"back", "show_help", "command_palette", "quit"}
        await wait_for(lambda: remaining <= _footer_actions(screen) and not _footer_actions(screen) & JOB_KEY_ACTIONS)
        actions = _footer_actions(screen)
        assert not actions & {"payload_page(1)", "payload_page(-1)", "attempt(1)", "attempt(-1)", "copy_traceback"}
        for kind in ("cancel", "retry", "reschedule", "delete"):
            assert screen.check_action("act", (kind,)) is False
        titles = {command.title for command in palette_commands(app, screen)}
        assert not {t for t in titles if t.split(" [")[0] in {"Cancel", "Retry", "Reschedule", "Delete"}}, titles
        # What was shown of the job is cleared, not left as if it were current.
        assert not screen.query_one("#detail-attempts").display and screen.payload is None
        assert "Esc goes back" in _body(screen)
        await pilot.press("r", "d", "y")  # nothing opens, nothing breaks
        await pilot.pause()
        assert app.screen is screen and app.is_running
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)


async def test_an_unreadable_jobs_detail_offers_only_delete(seeded_url: str) -> None:
    path = seeded_url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE monque_jobs SET data = 'not json{' WHERE id = ?", (PENDING,))
    conn.commit()
    conn.close()
    async with running_console(seeded_url, size=(160, 40)) as (app, pilot):
        position = app.jobs_screen.window.position(PENDING)
        assert position is not None
        app.jobs_screen.table.move_cursor(position)
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and "not a readable" in _body(app.screen))
        screen = app.screen
        assert "d deletes it" in _body(screen)
        await wait_for(
            lambda: "act('delete')" in _footer_actions(screen) and "act('cancel')" not in _footer_actions(screen)
        )
        actions = _footer_actions(screen)
        assert "act('delete')" in actions and not actions & {"act('reschedule')", "act('retry')"}, actions
        titles = {command.title.split(" [")[0] for command in palette_commands(app, screen)}
        assert "Delete" in titles and not titles & {"Cancel", "Reschedule", "Retry"}, titles

"""The console keeps one job detail screen and reuses it (issue 10: composing it anew on every
open was the slowest key under load). Reuse must never show the previous job: open A, Esc,
open B, and every part of the screen (title, fields, attempts, traceback pane, payload) is
B's. Real app driven by Pilot over a seeded SQLite file."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from rich.console import Console
from textual.widgets import Static, TextArea

from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.demo.seed import seed_id

from .conftest import move_to, open_detail, running_console, wait_for

FAILED = seed_id(2)  # send-email, failed, with a kept attempt history and traceback
PENDING = seed_id(1)  # no attempts


def _text(screen: JobDetailScreen, selector: str) -> str:
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(screen.query_one(selector, Static).content)
    return console.export_text()


async def _open(app: Any, pilot: Any, job_id: str) -> JobDetailScreen:
    screen = await open_detail(app, pilot, job_id)
    return screen


async def test_reopening_shows_the_new_job_never_the_previous_one(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        first = await _open(app, pilot, FAILED)
        assert first.attempts and first.query_one("#detail-attempts").display
        assert FAILED in _text(first, "#detail-title") and FAILED in _text(first, "#detail-body")
        assert first.query_one("#detail-traceback", TextArea).text
        failed_payload = _text(first, "#detail-payload")
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)

        second = await _open(app, pilot, PENDING)
        assert second is first  # the same screen, reused
        assert second.job is not None and second.job.id == PENDING
        assert PENDING in _text(second, "#detail-title") and FAILED not in _text(second, "#detail-title")
        body = _text(second, "#detail-body")
        assert PENDING in body and FAILED not in body
        assert second.attempts == () and not second.query_one("#detail-attempts").display
        assert not second.query_one("#detail-traceback", TextArea).display
        assert second.query_one("#detail-traceback", TextArea).text == ""
        assert _text(second, "#detail-payload") != failed_payload
        assert second.check_action("copy_traceback", ()) is None

        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        third = await _open(app, pilot, FAILED)  # and back: the history is B's again, freshly read
        assert third is first and [a.number for a in third.attempts] == [8, 9, 10]
        assert len(third._result_callbacks) == 1  # reuse leaves nothing behind per open
        assert third.query_one("#detail-traceback", TextArea).text.startswith("aiosmtplib.SMTPServerDisconnected")


async def test_a_slow_read_of_the_previous_job_never_lands_on_the_next(seeded_url: str) -> None:
    """Esc while A's read is held, open B: A's read, released late, must not draw A over B."""
    async with running_console(seeded_url) as (app, pilot):
        release = asyncio.Event()
        original = app.session.job

        async def held(job_id: str):  # type: ignore[no-untyped-def]
            if job_id == FAILED:
                await release.wait()
            return await original(job_id)

        app.session.job = held
        await move_to(app, pilot, FAILED)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen))
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        screen = await _open(app, pilot, PENDING)
        release.set()
        await pilot.pause()
        await pilot.pause()
        assert screen.job is not None and screen.job.id == PENDING and screen.attempts == ()
        assert FAILED not in _text(screen, "#detail-body") and FAILED not in _text(screen, "#detail-title")
        assert app.is_running and app.return_code is None

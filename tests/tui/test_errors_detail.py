"""The detail screen's attempt timeline and traceback pane, the copy key, and the table's
``Type: message`` error column. Real app driven by Pilot over a seeded SQLite file."""

from __future__ import annotations

import io
import json
import sqlite3
import threading

import pytest
from rich.console import Console
from textual.widgets import Static, TextArea

from monque_tui.console.screens import detail as detail_module
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.demo.seed import seed_id

from .conftest import move_to, running_console, wait_for
from .toasts import said

SMTP_FAILED = seed_id(2)  # send-email, failed after 10 attempts; the last 3 are kept by the seed
PENDING = seed_id(1)


async def _open(app: object, pilot: object, job_id: str) -> JobDetailScreen:
    await move_to(app, pilot, job_id)  # type: ignore[arg-type]
    await pilot.press("enter")  # type: ignore[attr-defined]
    await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.payload is not None)  # type: ignore[attr-defined]
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, JobDetailScreen)
    await pilot.pause()  # type: ignore[attr-defined]
    return screen


def _timeline(screen: JobDetailScreen) -> str:
    """The timeline as the screen draws it, one line per attempt."""
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(screen.query_one("#detail-attempts", Static).content)
    return "\n".join(line.strip("│ ") for line in console.export_text().splitlines()[1:-1])


async def test_timeline_lists_attempts_and_the_pane_shows_the_selected_traceback(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = await _open(app, pilot, SMTP_FAILED)
        assert [a.number for a in screen.attempts] == [8, 9, 10]
        lines = _timeline(screen).splitlines()
        assert len(lines) == 3
        assert (
            lines[2].startswith("▶ #10 failed")
            and "aiosmtplib.SMTPServerDisconnected: Connection unexpectedly" in lines[2]
        )
        assert lines[0].startswith("#8  retrying") and "2026-01-15" in lines[0] and "1.57s" in lines[0]
        pane = screen.query_one("#detail-traceback", TextArea)
        assert pane.display and pane.read_only
        assert pane.text.startswith("aiosmtplib.SMTPServerDisconnected: Connection unexpectedly closed\n\nTraceback")
        assert 'File "handlers/email.py", line 42, in send' in pane.text
        # [ selects the older attempt, ] the newer one; ] at the newest is greyed out.
        assert screen.check_action("attempt", (1,)) is None
        await pilot.press("left_square_bracket")
        assert screen.selected == 1 and _timeline(screen).splitlines()[1].startswith("▶ #9 ")
        assert pane.border_title is not None and "Attempt 9 (retrying)" in str(pane.border_title)
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert screen.selected == 0
        await pilot.press("right_square_bracket")
        assert screen.selected == 1
        # y copies type, message and the whole traceback of the selected attempt.
        await pilot.press("y")
        assert app.clipboard == pane.text and "aiosmtplib/smtp.py" in app.clipboard
        await wait_for(lambda: said(app, "Copied attempt 9's traceback"))
        # The keys work with the traceback pane focused too (it is read-only: keys are not typed into it).
        pane.focus()
        await pilot.press("right_square_bracket", "y")
        assert screen.selected == 2 and app.clipboard == screen.query_one("#detail-traceback", TextArea).text
        await pilot.press("escape")  # Back works from the pane too
        await wait_for(lambda: app.screen is app.jobs_screen)


async def test_a_job_without_attempts_hides_the_timeline_and_greys_out_its_keys(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = await _open(app, pilot, PENDING)
        assert screen.attempts == ()
        assert not screen.query_one("#detail-traceback", TextArea).display
        assert screen.check_action("copy_traceback", ()) is None
        assert screen.check_action("attempt", (-1,)) is None


async def test_a_huge_traceback_is_prepared_off_the_ui_thread(
    seeded_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    path = seeded_url.removeprefix("sqlite:///")
    frames = "".join(f'  File "deep.py", line {n}, in f{n}\n    f{n + 1}()\n' for n in range(40_000))
    record = {
        "attempt": 1,
        "outcome": "failed",
        "instanceId": "w-1",
        "startedAt": 1,
        "endedAt": 2,
        "errorType": "RecursionError",
        "errorMessage": "maximum recursion depth exceeded",
        "traceback": "Traceback (most recent call last):\n" + frames,
    }
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE monque_jobs SET attempts = ?, error_type = 'RecursionError' WHERE id = ?",
            (json.dumps([record]), SMTP_FAILED),
        )
    threads: list[str] = []
    prepare = detail_module._prepare_attempts

    def spy(job: object) -> object:
        threads.append(threading.current_thread().name)
        return prepare(job)  # type: ignore[arg-type]

    monkeypatch.setattr(detail_module, "_prepare_attempts", spy)
    async with running_console(seeded_url) as (app, pilot):
        screen = await _open(app, pilot, SMTP_FAILED)
        pane = screen.query_one("#detail-traceback", TextArea)
        await wait_for(lambda: len(screen.attempts) == 1)
        assert threads and threading.main_thread().name not in threads
        # The 2.4 MB traceback is shown a page at a time (whole, it cost the UI thread ~0.3 s
        # to load into the pane), and } pages on to its very end.
        assert 0 < len(pane.text) <= detail_module.TRACEBACK_PAGE_CHARS and "f39999()" not in pane.text
        assert "page 1 of" in str(pane.border_title)
        await pilot.press("right_curly_bracket")
        assert screen.trace_page == 1
        screen.trace_page = screen.traceback_pages - 2
        await pilot.press("right_curly_bracket")
        assert "f39999()" in pane.text and screen.check_action("traceback_page", (1,)) is None


async def test_the_error_column_shows_type_and_message(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(180, 36)) as (app, _pilot):
        table = app.jobs_screen.table
        lines = [table.render_line(y).text for y in range(1, len(app.jobs_screen.window.rows) + 1)]
        text = "\n".join(lines)
        assert "httpx.ConnectTimeout: timed out connecting to hooks.example.com:443" in text
        assert "PIL.UnidentifiedImageError: cannot identify image file 'banner.tiff'" in text
        assert "httpx.ReadTimeout: read timed out" in text  # a retrying (pending) job too
        assert "aiosmtplib.SMTPServerDisconnected: Connection unexpectedly closed" in text

"""Pilot tests: press keys in the real app on a real SQLite file, then check the store."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from monque_engine import JobStatus, Monque
from monque_tui.console.actions import ActionKind
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.launch import run_console
from monque_tui.console.palette import palette_commands
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.screens.help import HelpScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.demo.seed import SEED_JOBS, SEED_NOW_MS, seed_id

from .conftest import move_to, running_console, store_jobs, table_ids, wait_for
from .toasts import said, said_first

PENDING_EMAIL = seed_id(1)
PENDING_EMAIL_2 = seed_id(16)
FAILED_EMAIL = seed_id(2)
FAILED_WEBHOOK = seed_id(12)
FAILED_IMAGE = seed_id(6)


async def test_confirmation_can_be_refused(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, FAILED_WEBHOOK)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")
        await pilot.pause()
    assert await store_jobs(seeded_url) == before


async def test_deleting_everything_needs_the_count_typed(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.needs_typed_confirmation  # type: ignore[attr-defined]
        await pilot.press("y", "enter")  # "y" is text in the field; enter with the wrong count does nothing
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert len(await store_jobs(seeded_url)) == len(SEED_JOBS)
        await pilot.press("backspace", *str(len(SEED_JOBS)), "enter")
        await wait_for(lambda: said_first(app, f"Deleted {len(SEED_JOBS)} jobs"))
        await wait_for(lambda: table_ids(app) == [])
    assert await store_jobs(seeded_url) == {}


async def test_reschedule_moves_the_next_run(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await move_to(app, pilot, PENDING_EMAIL)
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("plus", "2", "h", "enter")
        await wait_for(lambda: said_first(app, "Rescheduled 1 job"))
    job = (await store_jobs(seeded_url))[PENDING_EMAIL]
    assert job.next_run_at_ms == SEED_NOW_MS + 2 * 3600_000


async def test_actions_invalid_for_the_status_are_unavailable(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, FAILED_EMAIL)
        screen = app.jobs_screen
        assert screen.check_action("act", ("cancel",)) is None
        assert screen.check_action("act", ("retry",)) is True
        await pilot.press("c")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)


async def test_read_only_refuses_every_mutation(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, read_only=True, notifications=True) as (app, pilot):
        screen = app.jobs_screen
        await move_to(app, pilot, PENDING_EMAIL)
        for kind in ("cancel", "retry", "reschedule", "delete"):
            assert screen.check_action("act", (kind,)) is None
            assert screen.check_action("act_all", (kind,)) is None
        await pilot.press("c", "d", "C", "R", "D", "t")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        app.act_on_jobs(ActionKind.DELETE, screen.targets[0], False)  # e.g. from the palette
        await pilot.pause()
        assert said(app, "Read-only")
    assert await store_jobs(seeded_url) == before


async def test_status_tabs_and_sorts_show_the_right_rows(seeded_url: str) -> None:
    jobs = {job.id: job for job in SEED_JOBS}
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("2")
        await wait_for(
            lambda: (
                app.jobs_screen.query_state.status is JobStatus.PENDING
                and app.jobs_screen.window.query.status is JobStatus.PENDING
            )
        )
        pending = [job for job in SEED_JOBS if job.status is JobStatus.PENDING]
        assert set(table_ids(app)) == {job.id for job in pending}
        await pilot.press("s")  # updated
        await wait_for(lambda: app.jobs_screen.window.query.sort_by == "updated_at")
        by_updated = sorted(pending, key=lambda j: (j.updated_min, -j.index))
        assert table_ids(app) == [job.id for job in by_updated]
        await pilot.press("s")  # next run
        await wait_for(lambda: app.jobs_screen.window.query.sort_by == "next_run_at")
        await pilot.press("S")  # ascending
        await wait_for(lambda: not app.jobs_screen.window.query.descending)
        by_due = sorted(pending, key=lambda j: (j.due_min, j.id))
        assert table_ids(app) == [job.id for job in by_due]
        await pilot.press("1", "slash", "tab", *"crm-7731", "enter", "escape")
        await wait_for(lambda: table_ids(app) == [seed_id(9)])
        await pilot.press("escape")
        await wait_for(lambda: len(table_ids(app)) == len(jobs))


async def test_a_change_from_another_process_appears_and_the_cursor_stays(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, PENDING_EMAIL)
        script = (
            "import asyncio\nfrom monque_engine import Monque\n"
            "async def main():\n"
            f"    m = Monque({seeded_url!r}, recover_stale_jobs=False)\n"
            "    await m.initialize()\n"
            "    await m.enqueue_many([{'name': 'other-process', 'data': {'i': i}} for i in range(3)])\n"
            "    await m.close()\n"
            "asyncio.run(main())\n"
        )
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", script)
        assert await process.wait() == 0
        await wait_for(lambda: sum(1 for j in app.jobs_screen.window.rows if j.name == "other-process") == 3)
        # The rows are in the window before the screen has moved its cursor: a key pressed
        # now must still act on the job the operator chose, not the row now at its old index.
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job_id is not None)
        assert isinstance(app.screen, JobDetailScreen)
        assert app.screen.job_id == PENDING_EMAIL
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        assert app.jobs_screen.table.cursor_job is not None
        assert app.jobs_screen.table.cursor_job.id == PENDING_EMAIL


async def test_a_key_between_a_live_edit_and_its_redraw_takes_the_chosen_job(seeded_url: str) -> None:
    """A live change edits the window in place; the screen moves its cursor when the change's
    message is handled. A key handled in between read the row now at the cursor's old index:
    rows inserted above it made Enter open (and ``space`` mark) a neighbour."""
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, PENDING_EMAIL)
        monque = Monque(seeded_url, recover_stale_jobs=False)
        await monque.initialize()
        try:
            added = [await monque.enqueue("other-process", {"i": i}) for i in range(3)]
        finally:
            await monque.close()
        screen = app.jobs_screen
        diff = screen.window.apply({job.id: job for job in added})  # the session's edit, no message yet
        assert diff.inserted == {job.id for job in added}
        assert screen.table.cursor_job is not None and screen.table.cursor_job.id != PENDING_EMAIL
        screen.action_open_job()
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job_id is not None)
        assert isinstance(app.screen, JobDetailScreen)
        assert app.screen.job_id == PENDING_EMAIL


async def test_the_session_knows_the_cursor_job_as_soon_as_the_table_moves(seeded_url: str) -> None:
    """Actions and live flushes read the session's cursor. It used to follow the table only
    when the table's CursorMoved message was handled, so a flush that ran first put the
    cursor back on the previous job, and an action could apply to it."""
    async with running_console(seeded_url) as (app, _pilot):
        screen = app.jobs_screen
        position = screen.window.position(PENDING_EMAIL)
        assert position is not None
        screen.table.move_cursor(position)  # no pause: no message has been handled yet
        assert screen.session.cursor is not None and screen.session.cursor.id == PENDING_EMAIL
        assert screen.session.cursor_row == position
        jobs, everything = screen.session.targets()
        assert [job.id for job in jobs] == [PENDING_EMAIL] and not everything


async def test_screens_open_and_close(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, FAILED_EMAIL)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
        await pilot.press("r")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(
            lambda: (
                isinstance(app.screen, JobDetailScreen)
                and app.screen.job is not None
                and app.screen.job.status is JobStatus.PENDING
            )
        )
        await pilot.press("escape", "w")
        await wait_for(lambda: isinstance(app.screen, QueuesScreen))
        await pilot.press("escape", "question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.jobs_screen


def test_an_unusable_store_is_one_line_and_exit_code_3(tmp_path: Path, capsys: object) -> None:
    code = run_console(ConsoleConfig(url=f"sqlite:///{tmp_path / 'missing-dir' / 'x.db'}"), terminal_required=False)
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert code == 3  # the store cannot be opened (as --help lists), not 1, the code for a bug
    assert err.count("\n") == 1 and "does not exist" in err


def test_the_engine_never_imports_textual() -> None:
    code = "import sys, monque_engine; assert not any(m.startswith('textual') for m in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_palette_offers_the_registry_actions_that_apply(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, FAILED_EMAIL)
        titles = [command.title for command in palette_commands(app, app.jobs_screen)]
        assert "Retry [r]" in titles and "Queues [w]" in titles and "Help [?]" in titles
        assert "Cancel [c]" not in titles  # a failed job cannot be cancelled
    async with running_console(seeded_url, read_only=True) as (app, pilot):
        titles = [command.title for command in palette_commands(app, app.jobs_screen)]
        assert not {"Retry [r]", "Delete [d]", "Cancel [c]", "Reschedule [t]", "Retry all [R]"} & set(titles)
        assert "Quit [q]" in titles


async def test_a_handler_printing_with_flush_does_not_break_the_console(seeded_url: str) -> None:
    """Handlers run in-process with --app/--demo may print(..., flush=True). Textual routes that
    to App._flush(stderr=...), which the console once shadowed with a method of its own."""
    async with running_console(seeded_url) as (app, pilot):
        print("a handler's progress line", flush=True)
        print("and one on stderr", file=sys.stderr, flush=True)
        await pilot.pause()
        assert app.is_running

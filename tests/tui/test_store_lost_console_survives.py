"""The store going away under a running console: one notice, the console stays up
(found by the acceptance probe).

Found in tmux: the console on a SQLite file that was deleted while it ran died within
seconds with a Textual traceback wall (``FileLostError`` from the stats timer), and again
from the Queues screen's load. A store outage is an operational state, not a bug.
"""

from __future__ import annotations

from pathlib import Path

from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.widgets.console_header import ConsoleHeader

from .conftest import running_console, wait_for
from .toasts import toast_lines, toast_messages


def _store_notices(app: object) -> list[str]:
    return toast_messages(app, "Store error")


async def test_console_survives_its_sqlite_file_being_deleted(seeded_url: str) -> None:
    path = Path(seeded_url.removeprefix("sqlite:///"))
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        first = app.jobs_screen.window.rows[0].id
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        app.session.buffer.must_reload()  # as after any burst: the next flush reads the store
        await wait_for(lambda: bool(_store_notices(app)))
        assert "was deleted while this process had it open" in _store_notices(app)[0]
        # A lost file does not come back in this process: no "keeps trying" (it never would).
        assert _store_notices(app)[0].endswith("restart the process to open the current file (q quits)")
        header = app.jobs_screen.query_one(ConsoleHeader)
        await wait_for(lambda: "✗ store file lost: restart the console" in header.render().plain)
        # The rows it shows stay (a new view, 2 / 1 below, shows none and says why: probe 5).
        app.jobs_screen.table.move_cursor(app.jobs_screen.window.position(first) or 0)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen))
        await wait_for(lambda: "cannot be read" in str(app.screen.query_one("#detail-body").render()))
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        for key in ("g", "G", "2", "1", "A", "R"):  # keys that read the store: counts, pages, bulk plans
            await pilot.press(key)
            await pilot.pause()
        await pilot.press("escape")
        await pilot.press("w")  # the Queues screen reads per-name counts on open
        await wait_for(lambda: isinstance(app.screen, QueuesScreen) and app.screen.loads == 0)
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        assert app.is_running and app._exception is None
        assert len(_store_notices(app)) == 1  # once per outage, not per timer tick
        await pilot.press("ctrl+q")
    assert app.return_code in (0, None)


async def test_a_store_outage_is_reported_once_and_its_end_too(seeded_url: str) -> None:
    """A transient outage (a MongoDB election, a full disk), faked by making the engine's reads
    raise its ``ConnectionError`` for a while: one notice, no crash, and one when reads work again."""
    from monque_engine import ConnectionError as StoreConnectionError

    async with running_console(seeded_url, notifications=True) as (app, pilot):
        monque = app.session.monque
        real_page, real_stats = monque.get_jobs_with_cursor, monque.get_queue_stats

        async def down(*args: object, **kwargs: object) -> object:
            raise StoreConnectionError("MongoDB at mongodb://u:***@db1/app is unreachable")

        monque.get_jobs_with_cursor, monque.get_queue_stats = down, down
        for key in ("2", "3", "1", "G", "g"):
            await pilot.press(key)
            await pilot.pause()
        await wait_for(lambda: len(_store_notices(app)) == 1)
        assert "unreachable (the console keeps trying; q quits)" in _store_notices(app)[0]
        monque.get_jobs_with_cursor, monque.get_queue_stats = real_page, real_stats
        await pilot.press("2")
        await wait_for(lambda: "The store answers again." in toast_lines(app))
        await wait_for(lambda: len(app.jobs_screen.window.rows) > 0)
        assert app.is_running and app._exception is None
        assert len(_store_notices(app)) == 1

"""Keys pressed while the store fails answer for themselves (probe 5).

In tmux, with the console's SQLite file deleted under it: after the once-per-outage "Store
error" notice had gone, `C`, `R`, `D` and `A` did nothing and said nothing; `2` put
"pending" on the tabs line over the old view's completed rows; the Queues screen (`w`)
showed bare headings. Each key now says in one line that the store cannot be read and that
nothing was done, a new view shows no rows but why, and the Queues title says so.
"""

from __future__ import annotations

from pathlib import Path

from monque_engine import JobStatus
from monque_tui.console.screens.queues import QueuesScreen

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text
from .toasts import toast_lines, toast_messages


def _messages(app: object, title: str | None = None) -> list[str]:
    return toast_lines(app) if title is None else toast_messages(app, title)  # type: ignore[arg-type]


async def test_keys_on_a_deleted_store_say_why_they_did_nothing(seeded_url: str) -> None:
    path = Path(seeded_url.removeprefix("sqlite:///"))
    async with running_console(seeded_url, size=(200, 30), notifications=True) as (app, pilot):
        assert any(job.status is JobStatus.COMPLETED for job in app.jobs_screen.window.rows)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        app.session.buffer.must_reload()
        await wait_for(lambda: bool(_messages(app, "Store error")))
        app.clear_notifications()  # as after its timeout: the keys below must answer themselves

        await pilot.press("C")
        await wait_for(
            lambda: any(m.startswith("Nothing to cancel yet: the store cannot be read") for m in _messages(app))
        )
        await pilot.press("A")
        await wait_for(lambda: any(m.startswith("Nothing marked: the store cannot be read") for m in _messages(app)))
        assert not app.jobs_screen.session.marked_view

        await pilot.press("2")
        await wait_for(lambda: app.jobs_screen.window.query.status is JobStatus.PENDING)
        await wait_for(lambda: not app.jobs_screen.window.rows)  # not the old view's rows under "pending"
        await pilot.pause()
        assert "the store cannot be read" in app.jobs_screen.table.placeholder
        assert "this view loads when it answers" in screen_text(app)

        await pilot.press("w")
        await wait_for(lambda: isinstance(app.screen, QueuesScreen))
        await wait_for(lambda: "cannot be read" in screen_text(app).splitlines()[0])
        assert app.is_running and app._exception is None
        assert len(_messages(app, "Store error")) == 0  # still once per outage (cleared above)
        await pilot.press("escape")
        await pilot.press("ctrl+q")


async def test_marking_all_of_an_empty_view_marks_nothing_and_says_so(store_url: str) -> None:
    async with running_console(store_url, size=(80, 24), notifications=True) as (app, pilot):
        await pilot.press("A")
        await wait_for(lambda: "Nothing to mark: no job matches this view." in _messages(app))
        assert app.jobs_screen.session.marked_view is None
        assert "0 matching marked" not in screen_text(app)
        await pilot.press("D")
        await wait_for(lambda: any(m.startswith("Nothing to delete") for m in _messages(app)))
        assert "Nothing to delete: no job matches (every job)." in _messages(app)


async def test_a_view_chosen_during_an_outage_loads_when_the_store_answers(seeded_url: str) -> None:
    """A transient outage, faked by making the engine's reads raise its ``ConnectionError``."""
    from monque_engine import ConnectionError as StoreConnectionError

    async with running_console(seeded_url) as (app, pilot):
        monque = app.session.monque
        real_page = monque.get_jobs_with_cursor

        async def down(*args: object, **kwargs: object) -> object:
            raise StoreConnectionError("MongoDB at mongodb://u:***@db1/app is unreachable")

        monque.get_jobs_with_cursor = down
        await pilot.press("5")
        await wait_for(lambda: "cannot be read" in app.jobs_screen.table.placeholder)
        assert not app.jobs_screen.window.rows
        monque.get_jobs_with_cursor = real_page  # no key pressed after this
        await wait_for(lambda: len(app.jobs_screen.window.rows) > 0)
        assert all(job.status is JobStatus.FAILED for job in app.jobs_screen.window.rows)

"""A read that lands between a key and its frame waits for that frame (issue 10: key p95).

Under the soak a sort's page read often returned before the key's frame, and the frame then
drew a whole table of new rows with the tabs line: 13-67 ms of the UI thread before the key
showed. Now the key's frame goes out with what the key changed, and the read's rows (or the
detail's store read) follow in the next frame. Real app driven by Pilot over a seeded file.
"""

from __future__ import annotations

import asyncio

from monque_engine import JobStatus
from monque_tui.console.session.events import WindowLoaded
from monque_tui.console.widgets.status_tabs import StatusTabs

from .conftest import running_console, wait_for


async def test_a_page_read_landing_before_the_keys_frame_is_drawn_after_it(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, _pilot):
        screen = app.jobs_screen
        table = screen.table
        before = table.window
        assert before is not None and before.rows
        assert app.session.set_query(app.session.query.with_status(JobStatus.PENDING))
        assert await app.session.load_top()  # the read; its WindowLoaded is now queued for the screen
        loaded = app.session.window
        assert loaded is not before
        frames: list[object] = []
        hook = app.post_display_hook

        def recording() -> None:
            frames.append(table.window)
            hook()

        app.post_display_hook = recording  # type: ignore[method-assign]
        app._key_since_frame = True  # a key was read; its frame is not written yet
        screen.query_one(StatusTabs).refresh()  # what the key changed (the tabs line)
        screen._apply(WindowLoaded(loaded, at="top"))
        assert table.window is before  # not drawn into the key's frame
        await wait_for(lambda: table.window is loaded)  # but in the next one
        assert frames and frames[0] is before
        assert [job.id for job in table.rows] == [job.id for job in loaded.rows]
        assert all(job.status is JobStatus.PENDING for job in table.rows)


async def test_without_a_pending_key_a_read_is_drawn_at_once(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await pilot.pause()
        assert not app.key_frame_pending
        assert app.session.set_query(app.session.query.with_status(JobStatus.PENDING))
        assert await app.session.load_top()
        screen._apply(WindowLoaded(app.session.window, at="top"))
        assert screen.table.window is app.session.window


async def test_after_key_frame_returns_once_a_frame_is_drawn(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await pilot.pause()
        await asyncio.wait_for(app.after_key_frame(), 5)  # no key pending: at once
        drawn: list[int] = []
        hook = app.post_display_hook

        def recording() -> None:
            drawn.append(1)
            hook()

        app.post_display_hook = recording  # type: ignore[method-assign]
        app._key_since_frame = True
        app.jobs_screen.table.refresh()  # something to draw
        await asyncio.wait_for(app.after_key_frame(), 10)
        assert drawn  # it waited for a frame


async def test_a_display_with_nothing_to_draw_is_not_the_keys_frame(seeded_url: str) -> None:
    """Textual runs ``post_display_hook`` after empty displays too; a key keeps awaiting a real frame."""
    async with running_console(seeded_url) as (app, pilot):
        await pilot.pause()
        app._key_since_frame = True
        app._display(app.screen, None)  # what Textual does when a refresh finds no dirty region
        assert app.key_frame_pending
        app.jobs_screen.table.refresh()
        await wait_for(lambda: not app.key_frame_pending)  # a real frame ends the wait


async def test_rows_of_a_view_left_while_they_waited_are_never_drawn(seeded_url: str) -> None:
    """Tab 4 then 1 at once: 4's rows, waiting for 4's frame, must not be drawn into 1's."""
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        table = screen.table
        before = table.window
        assert app.session.set_query(app.session.query.with_status(JobStatus.COMPLETED))
        assert await app.session.load_top()
        completed = app.session.window
        app._key_since_frame = True
        screen.query_one(StatusTabs).refresh()
        screen._apply(WindowLoaded(completed, at="top"))  # waits for the key's frame
        assert app.session.set_query(app.session.query.with_status(None))  # the next key, before that frame
        await pilot.pause()
        await wait_for(lambda: not app.key_frame_pending)
        await pilot.pause()
        assert table.window is before  # the completed rows were skipped
        assert await app.session.load_top()  # the next key's own read
        await wait_for(lambda: table.window is app.session.window)
        assert table.window is not completed

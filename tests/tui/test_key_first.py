"""A key's frame goes before the live flush (issue 10: key p95). Between a key's event and the
next frame written, the flush timer gives way once, never twice in a row, so the live view is
never starved by a stream of keys. Real app driven by Pilot over a seeded SQLite file."""

from __future__ import annotations

from .conftest import running_console, wait_for


async def test_the_flush_gives_way_once_to_a_key_awaiting_its_frame(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await app.ready.wait()
        flushes: list[int] = []
        original = app.session.flush

        async def counted() -> None:
            flushes.append(1)
            await original()

        app.session.flush = counted  # type: ignore[method-assign]
        for timer in list(app._timers):  # the app's own flush timer must not flush between the steps
            timer.pause()
        await pilot.pause()
        assert not app._key_since_frame  # the frame after any earlier key was written
        flushes.clear()

        app._key_since_frame = True  # a key read, its frame not yet written
        await app._apply_changes()
        assert flushes == []  # gave way
        await app._apply_changes()
        assert flushes == [1]  # but only once in a row

        app._key_since_frame = False
        await app._apply_changes()
        assert flushes == [1, 1]


async def test_a_key_marks_itself_until_its_frame_is_written(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await app.ready.wait()
        frames: list[bool] = []
        hook = app.post_display_hook

        def recording() -> None:
            frames.append(app._key_since_frame)
            hook()

        app.post_display_hook = recording  # type: ignore[method-assign]
        await pilot.press("4")
        await wait_for(lambda: True in frames)  # a frame was written with the key pending
        await wait_for(lambda: not app._key_since_frame)  # and that frame cleared it

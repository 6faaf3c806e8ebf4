"""The header says the store is not answering for as long as it is not (probe finding).

After the SQLite file was deleted under the console, the error notice went after 10 s and
the header went on saying "● live" over rows the store no longer had. Now it reads
"✗ store error, retrying" until a read succeeds again, then the feed state returns (a
deleted file: "✗ store file lost: restart the console", since it never comes back).
Real app driven by Pilot over a real SQLite file; the outage is the file deleted, and
(for the recovery) the engine's reads made to raise its ``ConnectionError`` for a while.
"""

from __future__ import annotations

from pathlib import Path

from monque_engine import ConnectionError as StoreConnectionError

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text


def _header(app: object) -> str:
    return screen_text(app).splitlines()[0]


async def test_a_deleted_file_shows_in_the_header_not_live(seeded_url: str) -> None:
    path = Path(seeded_url.removeprefix("sqlite:///"))
    async with running_console(seeded_url, size=(100, 30)) as (app, _pilot):
        await wait_for(lambda: "● live" in _header(app))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        app.session.buffer.must_reload()  # as after any burst: the next flush reads the store
        # Not "retrying": a deleted file never comes back in this process.
        await wait_for(lambda: "✗ store file lost: restart the console" in _header(app))
        assert "● live" not in _header(app) and "retrying" not in _header(app)


async def test_the_header_returns_to_live_when_the_store_answers(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(100, 30)) as (app, pilot):
        monque = app.session.monque
        real_page, real_stats = monque.get_jobs_with_cursor, monque.get_queue_stats

        async def down(*args: object, **kwargs: object) -> object:
            raise StoreConnectionError("MongoDB at mongodb://u:***@db1/app is unreachable")

        monque.get_jobs_with_cursor, monque.get_queue_stats = down, down
        await pilot.press("2")
        await wait_for(lambda: "✗ store error, retrying" in _header(app))
        monque.get_jobs_with_cursor, monque.get_queue_stats = real_page, real_stats
        await pilot.press("1")
        await wait_for(lambda: "● live" in _header(app) and "store error" not in _header(app))

"""The console on a SQLite file damaged while it runs says so (issue 25, point 8).

Bytes written over the file's header: the console's store notices (on its maintenance tick,
or at its next read), the notice says the file is damaged and how to check it, and the
header says so for as long as it lasts, instead of "store file lost: restart the console"
(a restart does not mend a damaged file).
"""

from __future__ import annotations

import os
from pathlib import Path

from monque_tui.console.widgets.console_header import ConsoleHeader

from .conftest import running_console, wait_for
from .toasts import toast_messages


def _store_notices(app: object) -> list[str]:
    return toast_messages(app, "Store error")


async def test_console_says_its_sqlite_file_is_damaged(seeded_url: str) -> None:
    path = Path(seeded_url.removeprefix("sqlite:///"))
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        with open(path, "r+b") as file:
            file.write(os.urandom(100))  # the header: SQLite's pages themselves are intact
        app.session.buffer.must_reload()  # as after any burst: the next flush reads the store
        await wait_for(lambda: bool(_store_notices(app)))
        notice = _store_notices(app)[0]
        assert f"{path} is damaged" in notice and "PRAGMA integrity_check" in notice, notice
        assert notice.endswith("(q quits)"), notice
        header = app.jobs_screen.query_one(ConsoleHeader)
        await wait_for(lambda: "✗ store file damaged" in header.render().plain)
        assert app.is_running and app._exception is None
        await pilot.press("ctrl+q")

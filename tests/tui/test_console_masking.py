"""The console's "cannot open" line never shows the URL's password (the real app, driven by Pilot)."""

from __future__ import annotations

import asyncio

from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig

SECRET = "pa@ss-w0rd-9f3k"


async def test_cannot_open_line_masks_the_password() -> None:
    # Nothing listens on port 9 of loopback: the store's open fails within the 300 ms given.
    url = f"mongodb://alice:{SECRET}@127.0.0.1:9/app?serverSelectionTimeoutMS=300"
    app = MonqueConsole(ConsoleConfig(url=url))
    async with app.run_test() as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while app.error is None and loop.time() < deadline:
            await pilot.pause(0.05)
    assert app.error is not None and "cannot open" in app.error
    assert "alice:***@127.0.0.1:9/app" in app.error
    for fragment in ("pa@ss", "w0rd"):
        assert fragment not in app.error

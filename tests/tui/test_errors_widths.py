"""The errors view widens its name, message and type columns when the screen has room (probe 7).

At 220 columns the columns kept their 130-column widths: five rows read ``webhook.deliv…``
and two different groups both read ``POST https://crm.ex…``. Real jobs failed by a real
worker on a SQLite file (messages longer than the 130-column widths), then the real app
driven by Pilot, resized from 130 to 220 columns and back.
"""

from __future__ import annotations

import asyncio

from monque_engine import Job, Monque
from monque_tui.console.screens.errors import WIDTHS

from .conftest import open_errors, running_console, wait_for
from .test_confirm_width import screen_text

NAME = "webhook.deliver-to-partner"
MESSAGES = ("POST https://crm.example.org/hooks/orders refused", "POST https://crm.example.org/hooks/users refused")


async def _fail_two_groups(url: str) -> None:
    failed = asyncio.Event()
    seen: list[str] = []

    async def handler(job: Job) -> None:
        seen.append(job.data["m"])
        if len(seen) == len(MESSAGES):
            failed.set()
        raise RuntimeError(job.data["m"])

    monque = Monque(url, recover_stale_jobs=False, max_retries=1)
    await monque.initialize()
    monque.register(NAME, handler)
    for message in MESSAGES:
        await monque.enqueue(NAME, {"m": message})
    await monque.start()
    try:
        await asyncio.wait_for(failed.wait(), 20)
        for _ in range(1000):
            groups = await monque.error_groups()
            if sum(group.count for group in groups) == len(MESSAGES):
                break
            await asyncio.sleep(0.02)
    finally:
        await monque.stop()
        await monque.close()


async def test_a_wide_screen_shows_names_and_messages_whole(store_url: str) -> None:
    await _fail_two_groups(store_url)
    async with running_console(store_url, size=(130, 30)) as (app, pilot):
        screen = await open_errors(app, pilot, groups=2)
        await pilot.pause()
        narrow = dict(screen.widths)
        assert narrow["pattern"] < len(MESSAGES[0])  # 130 columns: about the designed widths, cut with "…"
        await pilot.resize_terminal(220, 30)
        await wait_for(lambda: screen.widths["pattern"] > WIDTHS["pattern"])
        await pilot.pause()
        text = screen_text(app)
        for message in MESSAGES:
            assert message in text, text
        assert f"{NAME} " in text
        await pilot.resize_terminal(130, 30)
        await wait_for(lambda: screen.widths == narrow)
        await pilot.pause()
        assert screen.table.row_count == 2

"""``z`` on the Errors view: every message whole, the table scrolling sideways (issue 40:
"on every table screen: j/k, z"; the probe found ``z`` did nothing there, and at 80 columns a
message long enough to be told apart was cut)."""

from __future__ import annotations

from .conftest import open_errors, running_console, wait_for
from .test_confirm_width import screen_text
from .test_errors_widths import MESSAGES, _fail_two_groups


async def test_z_shows_every_message_whole_and_z_again_fits_the_screen(store_url: str) -> None:
    await _fail_two_groups(store_url)
    async with running_console(store_url, size=(80, 24)) as (app, pilot):
        screen = await open_errors(app, pilot, groups=2)
        whole = "RuntimeError"
        assert not any(message in screen_text(app) for message in MESSAGES)  # cut at 80 columns
        await pilot.press("z")
        await wait_for(lambda: screen.wide and screen.table.virtual_size.width > 80)
        assert screen.widths["pattern"] >= max(len(message) for message in MESSAGES)
        seen = set()
        for _ in range(40):  # scroll sideways until both messages have been on screen whole
            seen |= {message for message in MESSAGES if message in screen_text(app)}
            if len(seen) == len(MESSAGES):
                break
            await pilot.press("right")
        assert seen == set(MESSAGES), screen_text(app)
        assert whole in screen.table.get_row_at(0)[1].plain  # the full type column is back too
        await pilot.press("z")
        await wait_for(lambda: not screen.wide and screen.table.virtual_size.width <= 80)

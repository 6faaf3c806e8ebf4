"""Keys that need a row say why on an empty Workers or Queues screen (probe 5).

On an empty store `x` on the Workers screen and `P` on the Queues screen did nothing
and said nothing (the footer offered them). They are greyed now and say why in one line.
"""

from __future__ import annotations

import pytest

from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.screens.workers import WorkersScreen

from .conftest import running_console, wait_for
from .toasts import toast_lines


def _messages(app: object) -> list[str]:
    return toast_lines(app)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("screen_key", "screen", "key", "says"),
    [
        ("W", WorkersScreen, "x", "No instance under the cursor"),
        ("w", QueuesScreen, "P", "No job name under the cursor"),
    ],
)
async def test_a_row_key_on_an_empty_table_says_why(
    store_url: str, screen_key: str, screen: type, key: str, says: str
) -> None:
    async with running_console(store_url, size=(100, 24), notifications=True) as (app, pilot):
        await pilot.press(screen_key)
        await wait_for(lambda: isinstance(app.screen, screen) and app.screen.loads > 0)
        await pilot.pause()
        await pilot.press(key)
        await wait_for(lambda: any(m.startswith(says) for m in _messages(app)))
        assert isinstance(app.screen, screen) and app.is_running

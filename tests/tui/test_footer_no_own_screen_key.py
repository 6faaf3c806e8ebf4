"""A screen's footer does not offer the key that opens that very screen (probe 7).

The Errors screen's footer ended ``w Queues e Errors``: ``e`` there did nothing at all, with
nothing said. Each screen key is offered everywhere else, and still listed by ``?``. Real app
driven by Pilot at a width where every key fits.
"""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.screens.workers import WorkersScreen
from monque_tui.console.widgets.console_footer import ConsoleFooter

from .conftest import running_console, wait_for

SCREENS = {"w": (QueuesScreen, "show_queues"), "e": (ErrorsScreen, "show_errors"), "W": (WorkersScreen, "show_workers")}


def _footer_actions(app: object) -> set[str]:
    return {key.action for key in app.screen.query_one(ConsoleFooter).query(FooterKey)}  # type: ignore[attr-defined]


@pytest.mark.parametrize("key", list(SCREENS))
async def test_the_footer_leaves_out_the_key_of_the_screen_shown(seeded_url: str, key: str) -> None:
    screen_class, action = SCREENS[key]
    async with running_console(seeded_url, size=(220, 40)) as (app, pilot):
        await pilot.press(key)
        await wait_for(lambda: isinstance(app.screen, screen_class) and bool(_footer_actions(app)))
        await pilot.pause()
        shown = _footer_actions(app)
        assert action not in shown, shown
        assert "back" in shown and "quit" in shown, shown
        others = {"show_queues", "show_errors", "show_workers"} - {action}
        assert others <= shown, shown  # the other screens stay one key away
        screen = app.screen
        await pilot.press("ctrl+p")  # the palette over it: the footer below stays the screen's
        await wait_for(lambda: app.screen is not screen)
        await pilot.pause()
        assert action not in {key.action for key in screen.query_one(ConsoleFooter).query(FooterKey)}
        await pilot.press("escape")
        await wait_for(lambda: app.screen is screen)
        await pilot.pause()
        assert action not in _footer_actions(app)
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        await pilot.pause()
        # Workers too: its key was left out of every footer, found only through ``?`` (review).
        assert {"show_queues", "show_errors", "show_workers"} <= _footer_actions(app)

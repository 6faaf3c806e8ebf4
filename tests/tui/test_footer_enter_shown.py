"""Enter is shown in the footer of the Queues and Errors screens, and runs from there (console probe).

DataTable binds Enter itself (``select_cursor``, not shown), and the footer takes the focused
table's binding of a key before the screen's: the main key of both screens, "show this
queue's / group's jobs", was missing from their footers at every width. Real app, Pilot.
"""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.screens.jobs import JobsScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.widgets.console_footer import ConsoleFooter

from .conftest import running_console, wait_for

SCREENS = {"w": (QueuesScreen, "open_queue"), "e": (ErrorsScreen, "open_group")}


def _footer_actions(app: object) -> set[str]:
    return {key.action for key in app.screen.query_one(ConsoleFooter).query(FooterKey)}  # type: ignore[attr-defined]


@pytest.mark.parametrize("key", list(SCREENS))
async def test_enter_is_in_the_footer_and_opens_the_rows_jobs(seeded_url: str, key: str) -> None:
    screen_class, action = SCREENS[key]
    async with running_console(seeded_url, size=(160, 40)) as (app, pilot):
        await pilot.press(key)
        await wait_for(lambda: isinstance(app.screen, screen_class) and app.screen.query_one("DataTable").row_count > 0)
        await wait_for(lambda: action in _footer_actions(app))
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobsScreen))
        assert app.jobs_screen.query_state.has_filter

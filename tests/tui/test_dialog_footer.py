"""A dialog's footer shows the dialog's keys, not the dead ones of the screen below (console probe).

With the confirmation of ``R`` open, the footer still read ``⏎ Detail / Filter c Cancel r Retry
t Reschedule d Delete``: the jobs screen's keys, none of which does anything while the dialog
is up. Real app under Pilot at 80x24; nothing is confirmed, nothing changes.
"""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.when import WhenScreen
from monque_tui.console.widgets.console_footer import ConsoleFooter

from .conftest import running_console, store_jobs, wait_for


def _shown(app: object) -> set[str]:
    footers = list(app.screen.query(ConsoleFooter))  # type: ignore[attr-defined]
    return {key.action for footer in footers for key in footer.query(FooterKey)}


async def test_the_confirmation_and_the_prompt_show_their_own_keys(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        await pilot.press("R")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await wait_for(lambda: {"accept", "refuse"} <= _shown(app))
        assert not {"act('cancel')", "act('delete')", "filter"} & _shown(app), _shown(app)
        await pilot.press("n")
        await wait_for(lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.press("D")  # everything, unfiltered: the count is typed, so y is text, Esc keeps
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await wait_for(lambda: "refuse" in _shown(app))
        assert not {"act_all('delete')", "filter"} & _shown(app), _shown(app)
        await pilot.press("escape")
        await wait_for(lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.press("t")
        await wait_for(lambda: isinstance(app.screen, WhenScreen))
        await wait_for(lambda: "cancel" in _shown(app))
        assert not {"act('cancel')", "act('delete')", "filter"} & _shown(app), _shown(app)
        await pilot.press("escape")
    assert await store_jobs(seeded_url) == before

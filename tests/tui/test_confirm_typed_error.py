"""Enter on a wrong typed count says what is expected (probe finding).

Deleting every job asks for the count typed back; Enter with another number (or none) did
nothing at all, with no word on why. Now a line under the field says what to type and that
Esc keeps the jobs; typing clears it; nothing is deleted until the count is right. Real app
driven by Pilot over a seeded SQLite file.
"""

from __future__ import annotations

from textual.widgets import Static

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.demo.seed import SEED_JOBS

from .conftest import running_console, store_jobs, wait_for


async def test_a_wrong_count_is_explained_and_changes_nothing(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        screen = app.screen
        error = lambda: str(screen.query_one("#confirm-typed-error", Static).render())  # noqa: E731
        await pilot.press("1", "5", "enter")
        await wait_for(lambda: error() != "")
        assert error() == f"Type {len(SEED_JOBS)} exactly to delete (not '15'); Esc keeps the jobs as they are."
        await pilot.press("backspace")  # typing again clears it
        await wait_for(lambda: error() == "")
        await pilot.press("backspace", "enter")
        await wait_for(lambda: "the field is empty" in error())
        assert app.screen is screen and len(await store_jobs(seeded_url)) == len(SEED_JOBS)
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)

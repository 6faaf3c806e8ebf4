"""The footer rebuilds its keys once per change of what it shows, never once per bindings update.

Opening the detail screen for the first time sends several bindings updates in a row (the
row drawn, the store read, the attempt history); each one found the previous rebuild still
pending (no keys yet) and scheduled another (~35 ms each under the soak, issue 10). A
pending rebuild reads the bindings when it runs, so the later updates now wait for it; a
reopen rebuilds nothing. Real app driven by Pilot over a seeded SQLite file.
"""

from __future__ import annotations

from typing import Any

from textual.widgets._footer import FooterKey

from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.widgets.console_footer import ConsoleFooter
from monque_tui.demo.seed import seed_id

from .conftest import open_detail, running_console, wait_for

FAILED = seed_id(2)
PENDING = seed_id(1)


async def _open(app: Any, pilot: Any, job_id: str) -> JobDetailScreen:
    screen = await open_detail(app, pilot, job_id)
    await pilot.pause()
    return screen


async def test_the_detail_footer_is_built_once_and_reopens_rebuild_nothing(seeded_url: str) -> None:
    composed: list[ConsoleFooter] = []
    original = ConsoleFooter.compose

    def counting(self: ConsoleFooter) -> Any:
        if self._bindings_ready:
            composed.append(self)
        return original(self)

    ConsoleFooter.compose = counting  # type: ignore[method-assign]
    try:
        async with running_console(seeded_url, size=(160, 45)) as (app, pilot):
            detail = await _open(app, pilot, FAILED)
            footer = detail.query_one(ConsoleFooter)
            await wait_for(lambda: len(footer.query(FooterKey)) > 0)
            assert composed.count(footer) == 1, f"the detail's footer was built {composed.count(footer)} times"
            await pilot.press("escape")
            await wait_for(lambda: app.screen is app.jobs_screen)
            await _open(app, pilot, PENDING)
            await _open_back(app, pilot)
            await _open(app, pilot, FAILED)
            assert composed.count(footer) == 1  # reopens restyle keys in place
            assert "Help" in {key.description for key in footer.query(FooterKey)}
    finally:
        ConsoleFooter.compose = original  # type: ignore[method-assign]


async def _open_back(app: Any, pilot: Any) -> None:
    await pilot.press("escape")
    await wait_for(lambda: app.screen is app.jobs_screen)

"""Footer and header layout (issue 10, last nits): Help and Commands never cut, the footer
rebuilt only when its keys change (restyled in place when only which are enabled changes),
and a visible separator before the marked count."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from monque_tui.console.widgets.console_footer import ConsoleFooter

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text


@pytest.mark.parametrize("width", [80, 100, 130, 160, 200])
async def test_help_and_commands_are_whole_at_any_width(seeded_url: str, width: int) -> None:
    async with running_console(seeded_url, size=(width, 30)) as (app, _pilot):
        label = "Commands" if width >= 90 else "Cmds"  # shorter below 90 columns (issue 28)
        await wait_for(lambda: label in screen_text(app).splitlines()[-1])
        footer = screen_text(app).splitlines()[-1]
        assert "? Help" in footer and f"^p {label}" in footer, footer
        assert footer.count(label) == 1, footer
        if width >= 140:
            assert "e Errors" in footer, footer  # every key fits from 140 columns


async def test_the_footer_is_rebuilt_only_when_its_keys_change(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        footer = screen.query_one(ConsoleFooter)
        rebuilds = 0
        original = footer.recompose

        async def counted() -> None:
            nonlocal rebuilds
            rebuilds += 1
            await original()

        footer.recompose = counted  # type: ignore[method-assign]
        for _ in range(5):
            screen.refresh_bindings()  # what live changes under the cursor used to trigger
            await pilot.pause()
        assert rebuilds == 0
        # A key whose state changes is shown changed: cancel is offered for pending, not for completed.
        cancel = lambda: next(k for k in footer.query(FooterKey) if k.action == "act('cancel')")  # noqa: E731
        await pilot.press("2")
        await wait_for(
            lambda: screen.table.cursor_job is not None and screen.table.cursor_job.status.value == "pending"
        )
        await wait_for(lambda: not cancel().has_class("-disabled"))
        await pilot.press("4")
        await wait_for(
            lambda: screen.table.cursor_job is not None and screen.table.cursor_job.status.value == "completed"
        )
        await wait_for(lambda: cancel().has_class("-disabled"))
        assert rebuilds == 0  # restyled in place: the same keys, only which are enabled changed
        assert "Cancel" in screen_text(app).splitlines()[-1]


async def test_the_header_separates_the_marked_count(seeded_url: str) -> None:
    async with running_console(seeded_url, live=False) as (app, pilot):
        await pilot.press("space")
        await wait_for(lambda: "marked" in screen_text(app).splitlines()[0])
        header = screen_text(app).splitlines()[0]
        assert "feed off · 1 marked" in header, header

"""A key whose action does not apply now says why (probe finding: keys did nothing, silently).

``c`` on a completed job, any action key in a read-only console, ``R`` on a pending view,
``P`` without a name filter: the footer greys them, and pressing one did nothing at all.
Now one warning names what the key applies to and what is here. Typing the same letters
into the filter bar or the palette says nothing. Real app driven by Pilot.
"""

from __future__ import annotations

from typing import Any

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.demo.seed import seed_id

from .conftest import move_to, open_detail, running_console, wait_for
from .toasts import text_of, toasts

COMPLETED = seed_id(3)
PENDING = seed_id(1)


def _new_messages(app: Any, before: list[Any]) -> list[str]:
    return [text_of(toast) for toast in toasts(app) if toast not in before]


async def _press(app: Any, pilot: Any, key: str) -> list[str]:
    before = toasts(app)
    await pilot.press(key)
    await pilot.pause()
    return _new_messages(app, before)


async def test_greyed_keys_say_why(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await move_to(app, pilot, COMPLETED)
        assert await _press(app, pilot, "c") == ["Cancel applies to pending jobs; job 00000003 is completed."]
        assert await _press(app, pilot, "t") == ["Reschedule applies to pending jobs; job 00000003 is completed."]
        assert await _press(app, pilot, "t") == []  # a held key: one toast while the first is on screen
        assert not isinstance(app.screen, ConfirmScreen)
        said = await _press(app, pilot, "P")
        assert len(said) == 1 and "filter by one name first" in said[0], said
        await pilot.press("2")  # the pending view: retry all has nothing to act on
        await wait_for(lambda: app.jobs_screen.query_state.status is not None)
        said = await _press(app, pilot, "R")
        assert said == [
            "Retry all applies to failed or cancelled jobs; this view shows pending jobs. "
            "C cancels pending ones, D deletes the jobs listed."
        ], said
        assert await _press(app, pilot, "escape") == []  # no filter to clear: nothing worth a line
        # Letters typed into the filter bar are text, not keys.
        await pilot.press("slash")
        await wait_for(lambda: app.focused is not None and app.focused.id == "filter-name")
        before = toasts(app)
        await pilot.press(*"ctR")
        await pilot.pause()
        assert _new_messages(app, before) == []


async def test_detail_keys_say_why(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await open_detail(app, pilot, PENDING)
        assert await _press(app, pilot, "r") == ["Retry applies to failed or cancelled jobs; this job is pending."]
        assert await _press(app, pilot, "y") == ["This job has no attempts yet."]


async def test_read_only_keys_say_read_only(seeded_url: str) -> None:
    async with running_console(seeded_url, read_only=True, notifications=True) as (app, pilot):
        await move_to(app, pilot, PENDING)
        said = await _press(app, pilot, "c")
        assert len(said) == 1 and said[0].startswith("Read-only console (started with --read-only)"), said
        for key in ("d", "D"):  # the same line, still on screen: not stacked again
            assert await _press(app, pilot, key) == []
        assert not isinstance(app.screen, ConfirmScreen)


async def test_an_empty_store_says_there_is_nothing_under_the_cursor(store_url: str) -> None:
    async with running_console(store_url, notifications=True) as (app, pilot):
        assert await _press(app, pilot, "c") == ["No job under the cursor."]
        await pilot.press("e")
        await wait_for(lambda: type(app.screen).__name__ == "ErrorsScreen")
        said = await _press(app, pilot, "R")
        assert said == ["No error group under the cursor: no job has failed or is retrying."], said

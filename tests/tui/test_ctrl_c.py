"""Ctrl+C in the console (probe 5, in tmux).

At a confirmation, the reschedule or export prompt, or the typed "delete everything" prompt,
Ctrl+C did nothing and said nothing (an input's copy took it, or no binding did). On the
jobs screen it showed Textual's hint with its markup as text: "Press [b]ctrl+q[/b] to quit".
Now Ctrl+C aborts any prompt, as in any terminal program, with nothing changed; elsewhere it
says in plain words how to quit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.export import ExportScreen
from monque_tui.console.screens.when import WhenScreen
from monque_tui.demo.seed import seed_id

from .conftest import move_to, running_console, store_jobs, wait_for
from .toasts import toast_lines

PENDING = seed_id(1)


def _messages(app: object) -> list[str]:
    return toast_lines(app)  # type: ignore[arg-type]


@pytest.mark.parametrize(("key", "screen"), [("c", ConfirmScreen), ("t", WhenScreen), ("D", ConfirmScreen)])
async def test_ctrl_c_aborts_a_prompt_and_changes_nothing(seeded_url: str, key: str, screen: type) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url) as (app, pilot):
        await move_to(app, pilot, PENDING)
        await pilot.press(key)
        await wait_for(lambda: isinstance(app.screen, screen))
        await pilot.pause()
        await pilot.press("ctrl+c")
        await wait_for(lambda: app.screen is app.jobs_screen)
        assert app.is_running
    assert await store_jobs(seeded_url) == before


async def test_ctrl_c_aborts_the_export_prompt_without_writing(
    seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("E")
        await wait_for(lambda: isinstance(app.screen, ExportScreen))
        await pilot.pause()
        await pilot.press("ctrl+c")
        await wait_for(lambda: app.screen is app.jobs_screen)
    assert not list(tmp_path.glob("monque-export-*"))


async def test_ctrl_c_on_the_jobs_screen_says_how_to_quit_in_plain_words(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("ctrl+c")
        await wait_for(lambda: any("to quit" in m for m in _messages(app)))
        hint = next(m for m in _messages(app) if "to quit" in m)
        assert "[b]" not in hint and "Press q to quit" in hint, hint
        assert app.is_running

"""The command freezes start-up objects after its first paint, and gives them back on exit.

Why (``monque_tui/console/heap.py``): the collector's full passes over start-up objects were the
console's key-latency tail under the soak. Freezing is the whole process's collector state,
so it must be undone when the app ends, or a process that goes on (this test run) would keep
every later cycle among those objects forever.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

from monque_tui.console import launch as console
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig

from .conftest import SEED_NOW_MS, frozen_clock, wait_for


@pytest.fixture(autouse=True)
def _unfrozen() -> None:
    gc.unfreeze()  # whatever an earlier test left


async def _run(url: str, *, freeze_heap: bool) -> tuple[int, MonqueConsole]:
    app = MonqueConsole(ConsoleConfig(url=url), clock=frozen_clock(SEED_NOW_MS), freeze_heap=freeze_heap)
    async with app.run_test(size=(120, 30)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        if freeze_heap:
            await wait_for(lambda: gc.get_freeze_count() > 0)
        await pilot.pause()
        frozen = gc.get_freeze_count()
        await pilot.press("1")  # the console still works with a frozen heap
        await pilot.pause()
        assert app.is_running
    return frozen, app


async def test_the_console_freezes_after_first_paint_and_thaws_on_exit(seeded_url: str) -> None:
    frozen, app = await _run(seeded_url, freeze_heap=True)
    assert frozen > 10_000  # Textual, Rich and our screens at least
    assert app.first_paint_at is not None
    assert gc.get_freeze_count() == 0


async def test_without_the_flag_the_collector_is_left_alone(seeded_url: str) -> None:
    frozen, _ = await _run(seeded_url, freeze_heap=False)
    assert frozen == 0 and gc.get_freeze_count() == 0


def test_the_command_asks_for_the_frozen_heap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bool] = []

    class Recording(MonqueConsole):
        def __init__(self, config: ConsoleConfig, **options: bool) -> None:
            asked.append(options.get("freeze_heap", False))
            super().__init__(config, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(console, "MonqueConsole", Recording)
    url = f"sqlite:///{tmp_path / 'missing-dir' / 'x.db'}"  # fails fast: the flag is what is checked
    assert console.run_console(ConsoleConfig(url=url), terminal_required=False) == 3
    assert asked == [True]

"""The cyclic collector is off while ``monque-tui`` starts, and on again for everything after.

Why (``monque_tui/common/startup_gc.py``): its passes over the start-up objects cost 30-40 ms
of the console's launch to first rows (issue 40). The risk is the opposite one, a collector
left off for a worker's or a console's whole life: each path that must turn it on is checked.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from monque_tui import cli
from monque_tui.cli import commands
from monque_tui.common import startup_gc
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig

from .conftest import SEED_NOW_MS, frozen_clock, wait_for


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    startup_gc.release()
    gc.enable()
    gc.unfreeze()
    yield
    startup_gc.release()
    gc.enable()
    gc.unfreeze()


class Recording(MonqueConsole):
    """Notes whether the collector was on when the first rows were drawn."""

    collector_at_first_rows: bool | None = None

    def first_paint(self) -> None:
        if self.collector_at_first_rows is None:
            self.collector_at_first_rows = gc.isenabled()
        super().first_paint()


async def test_the_console_turns_the_collector_on_after_its_first_rows(
    seeded_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(startup_gc, "HOLD_LIMIT_S", 3600.0)  # only the first rows may turn it on here
    startup_gc.hold()  # what cli.main does on its first line
    app = Recording(ConsoleConfig(url=seeded_url), clock=frozen_clock(SEED_NOW_MS), freeze_heap=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await wait_for(gc.isenabled)
        assert app.collector_at_first_rows is False  # off until the rows were drawn
        assert gc.get_freeze_count() > 10_000  # and start-up's objects frozen before it came on
        await pilot.press("1")
        await pilot.pause()
        assert app.is_running
    assert gc.isenabled() and not startup_gc.held()


async def test_a_console_without_the_hold_leaves_the_collector_alone(seeded_url: str) -> None:
    app = Recording(ConsoleConfig(url=seeded_url), clock=frozen_clock(SEED_NOW_MS))
    async with app.run_test(size=(120, 30)):
        await asyncio.wait_for(app.ready.wait(), 10)
        assert app.collector_at_first_rows is True
    assert gc.isenabled()


def test_a_script_command_runs_with_the_collector_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    run_parsed = commands.run_parsed

    def recording(args: object) -> int:
        seen.append(gc.isenabled())
        return run_parsed(args)  # type: ignore[arg-type]

    monkeypatch.setattr(commands, "run_parsed", recording)
    cli.main(["paused", f"sqlite:///{tmp_path / 'jobs.db'}"])  # (no such file: its one-line error)
    assert seen == [True]
    assert gc.isenabled()


def test_a_console_that_cannot_start_gives_the_collector_back(tmp_path: Path) -> None:
    """No rows ever come (the store cannot be opened): cli.main turns it on as it returns."""
    url = f"sqlite:///{tmp_path / 'missing-dir' / 'jobs.db'}"
    assert cli.main([url]) != 0
    assert gc.isenabled() and not startup_gc.held()

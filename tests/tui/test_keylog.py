"""MONQUE_TUI_KEYLOG: the console's own key-to-frame times, for the soak benchmark.

The bench reads the screen over tmux, which adds the terminal's share; this log says how
much of a key's latency is the console's. Off unless the variable names a file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from monque_tui.keylog import ENV

from .conftest import running_console, wait_for


async def test_each_key_that_runs_an_action_gets_one_line(
    seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "keys.tsv"
    monkeypatch.setenv(ENV, str(log))
    async with running_console(seeded_url) as (_app, pilot):
        await pilot.press("4", "s")
        await wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == 2)
    lines = [line.split("\t") for line in log.read_text().splitlines()]
    assert [key for key, _ in lines] == ["4", "s"]
    assert all(float(ms) >= 0 for _, ms in lines)


async def test_off_by_default(seeded_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    async with running_console(seeded_url) as (app, pilot):
        assert app._keylog is None
        await pilot.press("4")

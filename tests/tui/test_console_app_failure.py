"""The console's ``--app`` setup failing, or its store not opening, exits with the command's own
codes and one clean line (probe finding).

``monque-tui --app mod:setup`` (the console, workers in-process) whose setup raised printed
"monque-tui: setup failed: CliError: --app 'mod:setup': setup raised …" and exited 1, the
code for a bug; ``--worker`` with the same app exits 4 with the line alone. The console now
exits 4 with "monque-tui: error: --app …: setup raised …", and 3 when the store cannot be
opened. Real app driven by Pilot (the console needs a terminal, so not a subprocess), with
the setup loaded by the real ``--app`` loader from a real module file.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig
from monque_tui.worker.app_loader import load_app


async def _run_until_it_exits(app: MonqueConsole) -> None:
    """Run the real app headless until it exits by itself, as it must on these failures (a
    ``run_test`` block that ends at once would stop it before its store had even opened)."""
    await asyncio.wait_for(app.run_async(headless=True, size=(100, 30)), 60)


SETUP_RAISES = """
def setup(monque):
    monque.register("x", lambda job: None)
    raise ValueError("setup exploded")
"""


async def test_a_raising_setup_exits_4_with_one_clean_line(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "exploding_app.py").write_text(SETUP_RAISES)
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = load_app("exploding_app:setup")
    config = ConsoleConfig(url=store_url, setup=loaded.setup, start_workers=True, label="exploding_app:setup")
    app = MonqueConsole(config)
    await _run_until_it_exits(app)
    sys.modules.pop("exploding_app", None)
    assert app.return_code == 4, (app.return_code, app.error)
    assert app.error is not None
    assert app.error.startswith(
        "monque-tui: error: --app 'exploding_app:setup': setup raised ValueError: setup exploded ("
    ), app.error
    assert app.error.endswith("exploding_app.py:4)") and "CliError" not in app.error, app.error


async def test_a_store_that_cannot_be_opened_exits_3(tmp_path: Path) -> None:
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("not a database, just text\n" * 10)
    app = MonqueConsole(ConsoleConfig(url=f"sqlite:///{not_a_db}"))
    await _run_until_it_exits(app)
    assert app.return_code == 3, (app.return_code, app.error)
    assert app.error is not None and app.error.startswith("monque-tui: cannot open ")

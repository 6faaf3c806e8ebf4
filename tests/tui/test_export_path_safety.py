"""The console's export dialog (`E`): the same store-file guard and CSV default as `monque-tui export` (issue 25).

A path that leads to the store's own files (through a symlinked folder, a new
``console.db-journal`` is still the store's) is refused under the input, the dialog stays
open and nothing is made; a CSV it writes guards formula cells as the command does by
default. A real app driven by Pilot on a real SQLite file.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from textual.widgets import Input

from monque_engine import Monque
from monque_tui.console.screens.export import ExportScreen

from .conftest import running_console, store_jobs, wait_for
from .toasts import said_first


async def _refused(app: Any, pilot: Any, typed: str) -> str:
    """Type ``typed`` into a fresh export dialog; what it says under the input (it stays open)."""
    await pilot.press("E")
    await wait_for(lambda: isinstance(app.screen, ExportScreen))
    dialog = app.screen
    dialog.query_one(Input).value = typed
    await pilot.press("enter")
    await wait_for(lambda: bool(str(dialog.query_one("#export-error").content)))
    assert app.screen is dialog
    shown = str(dialog.query_one("#export-error").content)
    await pilot.press("escape")
    await wait_for(lambda: not isinstance(app.screen, ExportScreen))
    return shown


async def test_the_dialog_refuses_a_path_that_leads_to_the_stores_files(seeded_url: str, tmp_path: Path) -> None:
    jobs = await store_jobs(seeded_url)
    store = tmp_path / "console.db"
    linked = tmp_path / "elsewhere"
    linked.mkdir()
    (linked / "store").symlink_to(tmp_path, target_is_directory=True)
    (linked / "wal.jsonl").symlink_to(store.with_name("console.db-wal"))
    cases = {
        str(linked / "store" / "console.db-journal"): f"the store's rollback journal {store}-journal",
        str(linked / "wal.jsonl"): f"the store's write-ahead log {store}-wal",
    }
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        for typed, said in cases.items():
            shown = await _refused(app, pilot, typed)
            assert f"{typed} cannot be used: it leads to {said} through a symlink" in shown, shown
    assert not store.with_name("console.db-journal").exists()
    assert (await store_jobs(seeded_url)).keys() == jobs.keys()


async def test_a_csv_from_the_console_guards_formula_cells(store_url: str, tmp_path: Path) -> None:
    monque = Monque(store_url, recover_stale_jobs=False)
    await monque.initialize()
    formula = await monque.enqueue("=1+1", {"n": 1}, unique_key="@SUM(A1:A9)")
    number = await monque.enqueue("numbers", -5)
    await monque.close()
    target = tmp_path / "view.csv"
    async with running_console(store_url, notifications=True) as (app, pilot):
        await pilot.press("E")
        await wait_for(lambda: isinstance(app.screen, ExportScreen))
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await wait_for(lambda: said_first(app, "Exported 2 jobs"), timeout=20)
    with target.open(newline="") as handle:
        rows = {row["_id"]: row for row in csv.DictReader(handle)}
    assert rows[formula.id]["name"] == "'=1+1" and rows[formula.id]["uniqueKey"] == "'@SUM(A1:A9)"
    assert rows[number.id]["data"] == "-5"

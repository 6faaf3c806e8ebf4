"""The console's export (`E`) writes through the command's file writer (issue 35 item 5).

It had its own: ``open(path, "x")`` after the dialog's check. A folder swapped for a symlink
between that check and the open sent a new file into the store's folder (here the store's
``-journal``, a hot journal to SQLite), and a failure part-way left half a file, whose path
then read "already exists". Now ``monque_engine.export_file.write_export`` writes it, as for
``monque-tui export --output``: checked again when it writes, a temporary file renamed into
place, and a dangling symlink followed as the command follows it. A real app driven by Pilot
on a real SQLite file; the swap and the full disk are made at the moment they must happen
(the export's own store connection opening, the second job written).
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from monque_engine import Monque
from monque_engine import export as engine_export
from monque_tui.console.screens.export import ExportScreen

from .conftest import running_console, store_jobs, wait_for
from .toasts import said_first, toast_lines


async def _export(app: Any, pilot: Any, typed: str) -> None:
    """Type ``typed`` into the export dialog and accept it (the dialog's own check passes)."""
    await pilot.press("E")
    await wait_for(lambda: isinstance(app.screen, ExportScreen))
    app.screen.query_one(Input).value = typed
    await pilot.press("enter")
    await wait_for(lambda: not isinstance(app.screen, ExportScreen))


async def test_a_folder_swapped_for_a_symlink_to_the_store_after_the_dialog_is_refused(
    seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = await store_jobs(seeded_url)
    store = tmp_path / "console.db"
    folder = tmp_path / "exports"
    folder.mkdir()
    typed = folder / "console.db-journal"  # an ordinary name in an ordinary folder, when asked
    initialize = Monque.initialize

    async def swap_then_initialize(self: Monque) -> None:
        await initialize(self)
        if folder.is_dir() and not folder.is_symlink():  # once: the export's own connection
            folder.rmdir()
            folder.symlink_to(tmp_path, target_is_directory=True)

    async with running_console(seeded_url, notifications=True) as (app, pilot):
        monkeypatch.setattr(Monque, "initialize", swap_then_initialize)
        await _export(app, pilot, str(typed))
        await wait_for(lambda: said_first(app, "Export:") or said_first(app, "Exported"), timeout=20)
        said = " ".join(toast_lines(app))
    assert folder.is_symlink()
    assert not store.with_name("console.db-journal").exists(), said
    assert f"{typed} cannot be used: it leads to the store's rollback journal {store}-journal" in said, said
    assert (await store_jobs(seeded_url)).keys() == jobs.keys()


async def test_an_export_that_fails_part_way_leaves_no_file_and_the_path_can_be_used_again(
    seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = await store_jobs(seeded_url)
    target = tmp_path / "view.jsonl"
    write = engine_export._Writer.write
    written: list[str] = []

    def fill_the_disk(self: Any, job: Any) -> None:
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(job.id)
        write(self, job)

    async with running_console(seeded_url, notifications=True) as (app, pilot):
        with monkeypatch.context() as patch:
            patch.setattr(engine_export._Writer, "write", fill_the_disk)
            await _export(app, pilot, str(target))
            await wait_for(lambda: said_first(app, "Export:"), timeout=20)
        said = " ".join(toast_lines(app))
        assert f"Export: cannot write {target}: No space left on device" in said, said
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("view")) == [], "half a file was left"
        await _export(app, pilot, str(target))  # the same path: not "already exists"
        await wait_for(lambda: said_first(app, "Exported"), timeout=20)
    assert {json.loads(line)["_id"] for line in target.read_text().splitlines()} == jobs.keys()


async def test_a_dangling_symlink_is_followed_as_the_command_follows_it(seeded_url: str, tmp_path: Path) -> None:
    """It passed the dialog, then failed with "File exists" after the dialog had closed."""
    jobs = await store_jobs(seeded_url)
    real = tmp_path / "exports" / "latest.jsonl"
    real.parent.mkdir()
    link = tmp_path / "latest.jsonl"
    link.symlink_to(real)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await _export(app, pilot, str(link))
        await wait_for(lambda: said_first(app, "Export:") or said_first(app, "Exported"), timeout=20)
        said = " ".join(toast_lines(app))
    assert link.is_symlink() and real.is_file(), said
    assert {json.loads(line)["_id"] for line in real.read_text().splitlines()} == jobs.keys()

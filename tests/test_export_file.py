"""``export_file.write_export``: the one file writer of the command and the console (issue 35 item 5).

What the command's tests check through a subprocess (tests/cli/test_cli_export_path_safety.py,
test_cli_special_files.py, test_cli_command_signals.py) holds here for both callers' modes:
``replace=True`` (the command: an earlier export is replaced whole) and ``replace=False`` (the
console: nothing is ever overwritten, even a file that appears while the export runs). And no
part of ``monque_tui`` writes an export file any other way.
"""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from monque_engine import Monque
from monque_engine.export_file import ExportFileError, check_export_path, write_export

ROOT = Path(__file__).resolve().parent.parent


async def _monque(tmp_path: Path, jobs: int = 3) -> tuple[Monque, str]:
    url = f"sqlite:///{tmp_path}/jobs.db"
    m = Monque(url, recover_stale_jobs=False)
    await m.initialize()
    await m.enqueue_many([{"name": "email", "data": {"n": n}} for n in range(jobs)])
    return m, url


async def test_without_replace_a_file_that_appears_meanwhile_is_kept_and_nothing_else_is_left(
    tmp_path: Path,
) -> None:
    m, url = await _monque(tmp_path)
    target = tmp_path / "out.jsonl"

    def someone_writes_it(written: int, total: int) -> None:
        if written and not target.exists():
            target.write_text("theirs\n")

    try:
        with pytest.raises(ExportFileError) as info:
            await write_export(m, str(target), store_url=url, replace=False, progress=someone_writes_it)
    finally:
        await m.close()
    assert (info.value.problem, info.value.reason) == ("exists", "it already exists")
    assert target.read_text() == "theirs\n"
    assert sorted(p.name for p in tmp_path.iterdir() if "out" in p.name) == ["out.jsonl"]  # no .partial left


async def test_with_replace_an_earlier_export_is_replaced_whole_keeping_its_mode(tmp_path: Path) -> None:
    m, url = await _monque(tmp_path)
    target = tmp_path / "out.jsonl"
    target.write_text("yesterday\n")
    target.chmod(0o600)
    try:
        assert await write_export(m, str(target), store_url=url, replace=True) == 3
    finally:
        await m.close()
    assert len(target.read_text().splitlines()) == 3 and stat.S_IMODE(target.stat().st_mode) == 0o600


@pytest.mark.parametrize("replace", [False, True])
async def test_the_stores_files_and_a_folder_are_refused_in_both_modes(tmp_path: Path, replace: bool) -> None:
    m, url = await _monque(tmp_path)
    link = tmp_path / "wal.jsonl"
    link.symlink_to(tmp_path / "jobs.db-wal")
    cases = {
        str(link): ("refused", f"it leads to the store's write-ahead log {tmp_path}/jobs.db-wal through a symlink"),
        str(tmp_path): ("directory", "it is a directory"),
        str(tmp_path / "missing" / "out.jsonl"): ("no-folder", "No such file or directory"),
    }
    try:
        for path, (problem, reason) in cases.items():
            with pytest.raises(ExportFileError) as info:
                await write_export(m, path, store_url=url, replace=replace)
            assert (info.value.problem, info.value.reason) == (problem, reason), path
    finally:
        await m.close()


def test_without_replace_a_fifo_is_refused_and_with_replace_it_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ExportFileError) as info:
        check_export_path(str(fifo), None, replace=False)
    assert info.value.problem == "exists"
    check_export_path(str(fifo), None, replace=True)  # the command writes into it (its own test reads it)


def test_no_part_of_monque_tui_writes_an_export_file_but_through_write_export() -> None:
    """One writer: the command's and the console's own file handling are gone."""
    offenders = []
    for path in sorted((ROOT / "monque_tui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            attribute = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            if attribute and node.value.id == "os" and node.attr in {"replace", "rename", "link", "O_EXCL"}:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} os.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module == "monque_engine.export_target":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} export_target (write_export checks)")
    assert offenders == []

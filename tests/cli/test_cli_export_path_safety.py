"""``export --output`` never lands on the store's own files, however the path reaches them (issue 25).

The guard compared the name given: ``--output out.jsonl``, a symlink to ``jobs.db-wal``,
replaced the store's write-ahead log while a worker had it open, and acknowledged jobs were
gone at the next open. Now the path is resolved first and compared, as a file, with the
database and its ``-wal``, ``-shm`` and ``-journal`` files (existing or not), hard links
included: exit 2, one line naming the file, nothing replaced. Real SQLite files, a real
reader holding the store open, real ``monque-tui export`` processes.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_helpers import enqueue
from test_cli_fleet import cli

JOBS = 6


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Path, str, set[str]]]:
    """A store in ``store/`` with jobs still in its WAL, held open as a running worker holds it.

    The reader's open snapshot keeps the later commits out of the database file, so
    replacing ``jobs.db-wal`` would lose them, as it did.
    """
    folder = tmp_path / "store"
    folder.mkdir()
    (tmp_path / "out").mkdir()
    db = folder / "jobs.db"
    url = f"sqlite:///{db}"
    ids = {enqueue(url, "fast", {"n": 0})}
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN")
    holder.execute("SELECT count(*) FROM sqlite_master").fetchone()
    ids |= {enqueue(url, "fast", {"n": n}) for n in range(1, JOBS)}
    assert (folder / "jobs.db-wal").stat().st_size > 0
    try:
        yield db, url, ids
    finally:
        holder.close()


def _symlink(tmp_path: Path, db: Path, suffix: str) -> Path:
    link = tmp_path / "out" / "export.jsonl"
    link.symlink_to(f"../store/{db.name}{suffix}")  # relative, as people make them
    return link


def _hard_link(tmp_path: Path, db: Path, suffix: str) -> Path:
    link = tmp_path / "out" / "export.jsonl"
    os.link(f"{db}{suffix}", link)
    return link


def _through_folder_link(tmp_path: Path, db: Path, suffix: str) -> Path:
    folder = tmp_path / "out" / "linked"
    folder.symlink_to(db.parent, target_is_directory=True)
    return folder / f"{db.name}{suffix}"


ROLES = {"": "database", "-wal": "write-ahead log", "-shm": "shared-memory index", "-journal": "rollback journal"}
CASES: list[tuple[str, Callable[[Path, Path, str], Path], str, str]] = [
    ("symlink to -wal", _symlink, "-wal", "it leads to the store's {role} {file} through a symlink"),
    ("symlink to -shm", _symlink, "-shm", "it leads to the store's {role} {file} through a symlink"),
    # Dangling: a WAL store has no -journal, and the export would have made one.
    ("symlink to -journal", _symlink, "-journal", "it leads to the store's {role} {file} through a symlink"),
    ("symlink to the db", _symlink, "", "it leads to the store's {role} {file} through a symlink"),
    ("hard link to the db", _hard_link, "", "it is a hard link to the store's {role} {file}"),
    ("hard link to -wal", _hard_link, "-wal", "it is a hard link to the store's {role} {file}"),
    ("folder link, db", _through_folder_link, "", "it leads to the store's {role} {file} through a symlink"),
    ("folder link, -wal", _through_folder_link, "-wal", "it leads to the store's {role} {file} through a symlink"),
    ("folder link, -journal", _through_folder_link, "-journal", "it leads to the store's {role} {file} through a symlink"),
]  # fmt: skip


def _files(folder: Path) -> dict[str, int]:
    """Each file in the store's folder by inode: replaced or added ones show."""
    return {entry.name: entry.stat().st_ino for entry in folder.iterdir()}


@pytest.mark.parametrize(("case", "make", "suffix", "said"), CASES, ids=[case[0] for case in CASES])
def test_export_refuses_a_path_that_leads_to_a_store_file(
    tmp_path: Path,
    store: tuple[Path, str, set[str]],
    case: str,
    make: Callable[[Path, Path, str], Path],
    suffix: str,
    said: str,
) -> None:
    db, url, ids = store
    target = make(tmp_path, db, suffix)
    before = _files(db.parent)
    done = cli("export", "--output", str(target), "--url", url)
    assert done.returncode == 2, (case, done.stderr)
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, line
    expected = said.format(role=ROLES[suffix], file=f"{db}{suffix}")
    assert line == (
        f"monque-tui: error: refusing to write the export over {target}: {expected}; "
        "name another file (e.g. export.jsonl)"
    ), line
    assert _files(db.parent) == before  # nothing replaced, nothing added (no -journal, no .partial)
    # The next open, by another process while the worker still holds the store: every job.
    reopened = cli("export", "--url", url)
    assert reopened.returncode == 0, reopened.stderr
    assert {json.loads(line)["_id"] for line in reopened.stdout.splitlines()} == ids


def test_an_ordinary_file_in_the_stores_folder_is_still_written(store: tuple[Path, str, set[str]]) -> None:
    """Only the store's files are refused, not its folder, nor a name that merely starts like one."""
    db, url, ids = store
    for name in ("export.jsonl", "jobs.db.jsonl", "jobs.db-wal.jsonl"):
        done = cli("export", "--output", str(db.parent / name), "--url", url)
        assert done.returncode == 0, done.stderr
        assert {json.loads(line)["_id"] for line in (db.parent / name).read_text().splitlines()} == ids


@pytest.mark.parametrize("output", ["", "   "])
def test_an_empty_output_name_is_said_to_be_one(tmp_path: Path, output: str) -> None:
    """``--output ''`` read "cannot write : Is a directory" (probe-cli)."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    enqueue(url, "fast", {"n": 0})
    done = cli("export", "--output", output, url)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "monque-tui: error: --output: no file name given; name a file, or - for stdout (e.g. export.jsonl)"
    )

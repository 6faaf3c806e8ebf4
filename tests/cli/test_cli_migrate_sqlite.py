"""``monque-tui migrate`` on an older SQLite file says it upgraded it (a migration probe: it
upgraded a schema 1 file to the current version and printed "nothing to do"). Real process,
a copy of the version 1 fixture."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from cli_helpers import CLI_DIR

from monque_engine.store.sqlite.schema import SCHEMA_VERSION

FIXTURE = Path(__file__).parent.parent / "fixtures" / "monque_v1.db"


def _migrate(url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    command = [sys.executable, "-m", "monque_tui", "migrate", url]
    return subprocess.run(command, cwd=CLI_DIR, env=env, text=True, capture_output=True, timeout=60)


def _version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        version = int(conn.execute("SELECT value FROM monque_jobs_meta WHERE key = 'schema_version'").fetchone()[0])
    conn.close()
    return version


def test_migrate_says_it_upgraded_an_older_file_and_then_that_nothing_is_left(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE, path)
    first = _migrate(f"sqlite:///{path}")
    assert first.returncode == 0, first.stderr
    assert (
        first.stdout.strip() == f"upgraded the file from schema version 1 to {SCHEMA_VERSION}; its indexes are in place"
    )
    assert _version(path) == SCHEMA_VERSION
    again = _migrate(f"sqlite:///{path}")
    assert again.returncode == 0 and again.stdout.startswith(
        f"nothing to do: the file is at schema version {SCHEMA_VERSION}"
    )

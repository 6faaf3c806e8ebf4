"""The file under a real worker process: another application's file is refused untouched, and
a file deleted or replaced while the worker runs is reported in its log and stops it (exit 3)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import CLI_DIR, CliProcess


def test_worker_refuses_another_applications_file_and_leaves_it_alone(tmp_path: Path) -> None:
    path = tmp_path / "crm.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    result = subprocess.run(
        [sys.executable, "-m", "monque_tui", "--worker", "--app", "apps.worker_app:setup", f"sqlite:///{path}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=str(CLI_DIR),
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 3, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "another application's SQLite database (tables: customers)" in lines[0], result.stderr
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crm.db"]


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_idle_worker_reports_its_file_deleted_or_replaced(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path, how: str
) -> None:
    worker = spawn("--worker", "--app", "apps.worker_app:setup", "--log-format", "json", db_url)
    worker.wait_for_event("worker:started")
    path = Path(db_url.removeprefix("sqlite:///"))
    if how == "deleted":
        path.unlink()
    else:
        backup = tmp_path / "backup.db"
        shutil.copy(path, backup)  # same bytes, another inode: what a restore with mv leaves
        os.replace(backup, path)
    # Nothing else happens: the worker is idle, so its periodic identity check must notice.
    error = worker.wait_for_event("job:error")
    assert f"{path} was {'deleted' if how == 'deleted' else 'replaced by another file'}" in error["message"]
    assert "restart the process" in error["message"]
    # ...and, with nothing left it can do, stops by itself with the store-lost exit code.
    assert worker.wait_exit() == 3
    assert worker.wait_for_event("worker:store-lost")["reason"] == "store-lost"

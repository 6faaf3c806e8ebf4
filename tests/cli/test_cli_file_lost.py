"""A real worker process whose SQLite file is deleted or replaced says so in its log."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import CliProcess


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_idle_worker_reports_its_file_deleted_or_replaced(spawn: Callable[..., CliProcess], db_url: str,
                                                          tmp_path: Path, how: str) -> None:
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
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0

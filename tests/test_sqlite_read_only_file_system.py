"""A SQLite file on a read-only file system (a real tmpfs remounted read-only).

Root passes every permission check, so the old preflight (``os.access``) let the open go on
to SQLite, which said "permission denied" for a file that had every permission bit, or
"unable to open database file" for a read-only open. Each case now names the read-only
file system and what to do. Needs root and mount(8); skipped (with the reason) otherwise.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from monque_engine import ConnectionError, Monque


def _run(*args: str) -> bool:
    return subprocess.run(args, capture_output=True, check=False).returncode == 0


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "mnt"
    mount.mkdir()
    if os.geteuid() != 0 or not _run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)):
        pytest.skip("needs root and mount(8) to make a real read-only file system")
    try:
        yield mount
    finally:
        _run("umount", str(mount))


def _remount_read_only(mount: Path) -> None:
    assert _run("mount", "-o", "remount,ro", str(mount)), "remount read-only failed"


async def _open_error(url: str) -> str:
    m = Monque(url)
    with pytest.raises(ConnectionError) as info:
        await m.initialize()
    message = str(info.value)
    assert "\n" not in message
    return message


async def test_a_database_on_a_read_only_file_system_is_refused_with_the_reason(read_only_dir: Path) -> None:
    db = read_only_dir / "jobs.db"
    async with Monque(f"sqlite:///{db}") as m:  # a real queue, closed cleanly: no -wal / -shm left
        await m.enqueue("job", {"n": 1})
    _remount_read_only(read_only_dir)
    before = db.read_bytes()

    message = await _open_error(f"sqlite:///{db}")
    assert "read-only file system" in message and "remount it read-write" in message

    message = await _open_error(f"sqlite:///{read_only_dir}/new.db")
    assert message.endswith(
        f"Cannot create {read_only_dir}/new.db: directory {read_only_dir} is on a read-only file system; remount it read-write, or use a writable directory"
    )

    message = await _open_error(f"sqlite:///{db}?mode=ro")
    assert "read-only file system" in message and "-wal and -shm" in message

    assert db.read_bytes() == before
    assert sorted(p.name for p in read_only_dir.iterdir()) == ["jobs.db"]

"""A SQLite URL naming a device or a FIFO is refused in one line (found by the acceptance probe).

SQLite opens whatever the path names: ``sqlite:////dev/null`` failed with a misleading "disk
I/O error" after creating ``/dev/null-journal`` beside the device, and a FIFO hung the open
for ever (SQLite's open blocks until a writer appears). Now the open says what the path is and
creates nothing. Real nodes in the test's directory: a FIFO, and a copy of ``/dev/null``'s
device node where the test may make one.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from monque_engine import ConnectionError, Monque


def _device(path: Path) -> Path:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")
    return path


@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize("query", ["", "?mode=ro"])
async def test_a_special_file_is_refused_and_nothing_is_created_beside_it(
    tmp_path: Path, kind: str, query: str
) -> None:
    target = tmp_path / "jobs"
    if kind == "fifo":
        os.mkfifo(target)
        expected = "it is a named pipe (FIFO), not a file"
    else:
        _device(target)
        expected = "it is a character device, not a file"
    monque = Monque(f"sqlite:///{target}{query}")
    with pytest.raises(ConnectionError) as raised:
        await asyncio.wait_for(monque.initialize(), 20)  # a FIFO used to block here for ever
    message = str(raised.value)
    assert expected in message and "sqlite:///jobs.db" in message and "\n" not in message, message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs"]  # no -journal, -wal or -shm
    mode = os.stat(target).st_mode
    assert stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISCHR(mode)

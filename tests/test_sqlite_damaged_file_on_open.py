"""Opening a damaged SQLite file fails with what to do about it (found by the acceptance probe).

A file damaged under a running process is ``test_sqlite_damaged_file.py``.

"database disk image is malformed" and "file is not a database" were passed on bare; an
operator learnt that the file was bad, not what to do. The error now says: restore a backup
or salvage with ``sqlite3 … .recover``; or check the URL's path. Real files, damaged with
plain file writes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from monque_engine import ConnectionError, Monque


async def test_a_damaged_file_names_backup_and_recover(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}") as m:
        for start in range(0, 10_000, 1000):
            await m.enqueue_many(
                [{"name": "n", "data": {"i": i, "pad": "x" * 200}} for i in range(start, start + 1000)]
            )
    size = path.stat().st_size
    with open(path, "r+b") as file:  # zero 16 pages in the middle: b-tree pages of type 0
        file.seek((size // 2) // 4096 * 4096)
        file.write(bytes(16 * 4096))
    m = Monque(f"sqlite:///{path}")
    with pytest.raises(ConnectionError) as raised:
        await m.initialize()
        try:
            for skip in range(0, 10_000, 1000):  # read every row: one of them lies on the zeroed pages
                await m.get_jobs(limit=1000, skip=skip)
        finally:
            await m.close()
    message = str(raised.value)
    assert "malformed" in message and "restore a backup" in message and ".recover" in message, message

"""Closing one store never unlocks another connection of the same process on the same file.

Closing *any* descriptor of a file drops every POSIX lock the process holds on it. The
header check and the WAL gauge kept descriptors of their own on ``jobs.db`` and
``jobs.db-shm`` and closed them with their store: a second connection of the process (a
second store, the console's export, a script) was left without its locks, so another
process's last connection took the exclusive lock, checkpointed and deleted the WAL under
it, and reads failed with "database disk image is malformed". Real files, a real second
process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from monque_engine import JobListFilter, Monque

PROBE = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM monque_jobs').fetchone(); c.close()"


async def test_a_closed_store_leaves_the_other_stores_locks(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    url = f"sqlite:///{db}"
    async with Monque(url, recover_stale_jobs=False) as keeper:
        await keeper.enqueue_many([{"name": "n", "data": {"i": i}} for i in range(200)])
        for _ in range(3):  # open and close a second store on the file, as an export does
            async with Monque(url, recover_stale_jobs=False) as other:
                assert await other.count_jobs() == 200
        # Another process opens and closes the file: were this process's locks gone, its close
        # would be the last, checkpoint, and delete the WAL the keeper still uses.
        subprocess.run([sys.executable, "-c", PROBE, str(db)], check=True, timeout=60)
        assert Path(f"{db}-wal").exists()
        await keeper.enqueue("after", {})
        assert await keeper.count_jobs(JobListFilter(name="n")) == 200
        assert len(await keeper.get_jobs(limit=500)) == 201

"""A process out of file descriptors is told so. SQLite says "unable to open database file"
for it, as for a folder it cannot write in, and a worker at ``ulimit -n 18`` read only that
(a resource-exhaustion probe). Real process, real limit (``setrlimit`` before it starts)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

OPEN = """
import asyncio
from monque_engine import Monque
async def main():
    monque = Monque({url!r}, recover_stale_jobs=False)
    try:
        await monque.initialize()
    except Exception as error:
        print(error)
    else:
        print("opened")
        await monque.close()
asyncio.run(main())
"""


def test_an_open_that_runs_out_of_descriptors_names_the_limit(tmp_path: Path) -> None:
    """Limits from what barely starts Python to what opens the store: each failure that is
    SQLite's "unable to open" names the limit, and at least one limit meets it (which one
    depends on how many files the imports before the open take)."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    sqlite_said = []
    for limit in range(12, 30):

        def low_limit(limit: int = limit) -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))

        done = subprocess.run(
            [sys.executable, "-c", OPEN.format(url=url)],
            preexec_fn=low_limit,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        said = done.stdout.strip() or done.stderr.strip()
        if said == "opened":
            break
        if "unable to open database file" in said:
            sqlite_said.append(said)
    assert sqlite_said, "no limit made SQLite's open fail"
    for said in sqlite_said:
        assert "open-file limit (ulimit -n" in said, said

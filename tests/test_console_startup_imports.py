"""A console on SQLite starts without ``bson``/``pymongo`` and without the screens it has not
opened (issue 40 item 7: launch to first rows within 300 ms; ``pymongo`` alone cost 170 ms
and the screens beyond the jobs table ~60 ms). Checked in a fresh interpreter: the console
module imported, then a SQLite store opened and read as the console does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import asyncio, json, sys
import monque_tui.console.app
from monque_engine import Monque

async def main(url):
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    await monque.enqueue("a", {"x": 1})
    await monque.get_jobs_with_cursor(limit=10)
    await monque.get_queue_stats()
    await monque.close()

asyncio.run(main(sys.argv[1]))
screens = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("monque_tui.console.screens."))
print(json.dumps({"bson": "bson" in sys.modules, "pymongo": "pymongo" in sys.modules, "screens": screens}))
"""


def test_a_console_on_sqlite_imports_no_bson_and_only_the_jobs_screen(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    result = subprocess.run([sys.executable, "-c", SCRIPT, url], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"bson": False, "pymongo": False, "screens": ["jobs"]}, report

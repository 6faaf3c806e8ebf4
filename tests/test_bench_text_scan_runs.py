"""``python -m bench.text_scan_bench`` runs on a store and its count in steps agrees with one
statement (ADR 0008's 10M figures come from it). No timing thresholds."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from monque_engine import Monque

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


async def _store(url: str) -> None:
    m = Monque(url, recover_stale_jobs=False)
    await m.initialize()
    await m.enqueue_many([{"name": "mail", "data": {"user": f"user-{n}@example.com"}} for n in range(4200, 4500)])
    await m.close()


def test_text_scan_bench_runs_and_its_walk_agrees(tmp_path):
    url = f"sqlite:///{tmp_path / 'scan.db'}"
    asyncio.run(_store(url))
    proc = subprocess.run(
        [sys.executable, "-m", "bench.text_scan_bench", url, "--repeat", "1", "--step", "50", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["matched"] == 1 and result["steps"] >= 300 // 50, result

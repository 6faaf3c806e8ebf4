"""Smoke test for the benchmark harness: it runs and prints a table. No timing thresholds."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_bench_quick_raw_prints_a_table(tmp_path):
    out = tmp_path / "bench.md"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", "--only", "raw-normal", "--jobs", "500", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| Subject | Measure | Durability | Result | Settings |" in proc.stdout
    assert "raw sqlite3" in proc.stdout
    assert "claim+complete, 50 jobs/transaction" in proc.stdout
    assert "FAILED" not in proc.stdout
    assert out.read_text().startswith("# monque_engine benchmark")

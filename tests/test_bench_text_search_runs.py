"""``python -m bench.text_search_bench`` runs and finds what it planted (ADR 0008's numbers
come from it). No timing thresholds: the counts are the check."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_text_search_bench_counts_each_planted_needle(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bench.text_search_bench", "--jobs", "1000", "--repeat", "1",
         "--db", str(tmp_path / "t.db"), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    counts = {line.split("(text=")[1].split(")")[0].strip(): int(line.split("->")[1].split()[0])
              for line in proc.stdout.splitlines() if line.startswith("count_jobs")}  # fmt: skip
    assert counts == {
        "'needle-common'": 100,
        "'needle-rare'": 1,
        "'no-such-text'": 0,
        "'big order'": 100,
        "'St\\nSpring'": 100,
        "'\\\\'": 20,
        "'n'": 1000,
        "'timed out'": 100,
    }, proc.stdout
    assert set(json.loads(proc.stdout.splitlines()[-1])) >= {"count_common", "page_none"}

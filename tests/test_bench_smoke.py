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
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| Subject | Measure | Durability | Result | Settings |" in proc.stdout
    assert "raw sqlite3" in proc.stdout
    assert "claim+complete, 50 jobs/transaction" in proc.stdout
    assert "FAILED" not in proc.stdout
    assert out.read_text().startswith("# monque_engine benchmark")


def test_inbox_view_bench_times_every_read_and_leaves_the_inbox_empty(tmp_path):
    import sqlite3

    path = tmp_path / "ro.db"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.read_only_inbox", "--jobs", "2000", "--inbox", "10", "--repeat", "1",
         "--path", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.rstrip().endswith("x")]
    assert len(rows) == 6 and rows[0].startswith("page, newest first"), proc.stdout
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM monque_jobs").fetchone()[0] == 2000
        assert db.execute("SELECT count(*) FROM monque_jobs_inbox").fetchone()[0] == 0


def test_repeated_runs_report_each_figure_median_with_its_spread():
    from bench.common import Record
    from bench.run import median_records

    def rec(key: str, value: float) -> Record:
        return Record(key=key, subject="s", measure="m", durability="d", value=value, unit="jobs/s")

    chosen = median_records([rec("a", 3.0), rec("b", 10.0), rec("a", 1.0), rec("a", 2.0), rec("b", 20.0)])
    by_key = {r.key: r for r in chosen}
    assert by_key["a"].value == 2.0 and "median of 3 runs" in by_key["a"].notes[0]
    assert by_key["b"].value == 10.0  # the lower middle of an even count


def test_ratios_are_taken_inside_each_round_then_the_median():
    from bench.common import Record
    from bench.report import round_ratio_rows

    def rec(key: str, value: float) -> Record:
        return Record(key=key, subject="s", measure="m", durability="d", value=value, unit="jobs/s")

    rounds = [
        [
            rec("huey.lfl.drain.w1", 10.0),
            rec("huey.lfl.drain.w4", 5.0),
            rec("ours.drain.normal.c5", 12.0),
            rec("ours.drain.normal.c64", 30.0),
        ],
        [rec("huey.lfl.drain.w1", 20.0), rec("ours.drain.normal.c5", 10.0), rec("ours.drain.normal.c64", 50.0)],
        [rec("huey.lfl.drain.w1", 10.0), rec("ours.drain.normal.c5", 9.0), rec("ours.drain.normal.c64", 15.0)],
    ]
    rows = {row[0]: row for row in round_ratio_rows(rounds)}
    assert rows["drain, concurrency 5 / huey LfL best"][1:] == ["1.20×, 0.50×, 0.90×", "**0.90×**"]
    assert rows["drain, best concurrency / huey LfL best"][2] == "**2.50×**"
    assert "single enqueue / huey LfL best" not in rows  # not measured: no row


def test_every_bench_module_imports_against_the_current_tree():
    """A bench that imports a name the code no longer has fails only when someone runs it,
    often on the quiet machine kept for it (``bench.tui_bench`` once imported a column list
    the demo's seed had stopped defining)."""
    names = sorted(p[:-3] for p in os.listdir(os.path.join(ROOT, "bench")) if p.endswith(".py"))
    script = "import importlib, sys\nfor n in sys.argv[1:]:\n    importlib.import_module('bench.' + n)\n"
    proc = subprocess.run([sys.executable, "-c", script, *names], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_the_counts_cost_patch_still_finds_every_line_it_removes(tmp_path):
    """``bench.counts_cost`` patches a copy of the engine; an anchor the code moved away from
    stops it, so the check belongs here rather than in the quiet-machine run."""
    from bench.counts_cost import patched_copy

    copy = patched_copy(tmp_path)
    journal = (copy / "monque_engine" / "store" / "sqlite" / "journal.py").read_text()
    assert "bench.counts_cost: no kept counts" in journal


def test_processes_bench_runs_every_subject_and_prints_the_ratios():
    """``bench.processes``: --processes against one process and huey's multi-worker modes (issue 38)."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.processes", "--jobs", "40", "--noop-jobs", "200", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for subject in ("monque x1", "monque x2", "huey process w2", "huey thread w4"):
        assert f"| {subject} |" in proc.stdout
    assert "x2/x1 jobs/s:" in proc.stdout and "x2/huey best jobs/s:" in proc.stdout
    assert "no-op handlers, one SQLite file" in proc.stdout


def test_sync_client_bench_runs_on_one_cpu_when_asked():
    """``bench.sync_client --cpus 1``: the whole process, its threads too, on one CPU (the
    run that tells the GIL hand-over from the wake-up across CPUs, docs/benchmarks.md)."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.sync_client", "--jobs", "400", "--threads", "4", "--rounds", "1", "--cpus", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "this process on 1)" in proc.stdout
    assert "4 threads / 1 thread (sync):" in proc.stdout and "errors from threads: 0" in proc.stdout


def test_console_launch_bench_times_the_launch_and_each_phase(tmp_path):
    """One launch and one timed launch in tmux: the phases wrapper still finds the console's
    classes and methods it times (a rename would leave it waiting for rows it never sees), and
    ``--floor``'s bare Textual app shows the same store's rows."""
    import asyncio
    import json
    import shutil

    import pytest

    from monque_engine import Monque

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    url = f"sqlite:///{tmp_path / 'jobs.db'}"

    async def seed() -> None:
        monque = Monque(url, recover_stale_jobs=False)
        await monque.initialize()
        for n in range(20):
            await monque.enqueue("send-email", {"n": n})
        await monque.close()

    asyncio.run(seed())
    proc = subprocess.run(
        [sys.executable, "-m", "bench.console_launch", url, "--runs", "1", "--phases", "1", "--floor"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["launch"]["cpu_ms_min"] > 0
    assert report["floor_launch"]["cpu_ms_min"] > 0  # the bare Textual app showed the same rows
    phases = report["phases"]
    for mark in ("imported", "opened", "first_page", "first_frame", "rows_frame", "cpu"):
        assert mark in phases, phases
    assert phases["imported"]["min_ms"] <= phases["rows_frame"]["min_ms"]

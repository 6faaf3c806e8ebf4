"""The real ``monque-tui --worker`` draining a backlog, per log setting.

    python -m bench.worker_mode [--jobs 60000] [--rounds 3] [--concurrency 64]

A store of ``--jobs`` no-op jobs is built once; each round copies it and runs the real
command (``--app bench.worker_mode:setup``, one name at ``--concurrency``) until the store's
counts say every job completed, once per log setting, in alternating order: the text lines
at ``info`` (the default: a line per completed job), JSON lines at ``info``, and ``warning``
(no per-job lines). Reported: median jobs/s (from the process's start, imports included) and
the worker's CPU per job (user + system, from ``/proc``). The library's own drain is
``make bench``; this is what an operator's worker does with its logging on.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from monque_engine import Job, Monque

ROOT = Path(__file__).resolve().parent.parent
SETTINGS: dict[str, list[str]] = {
    "text, info (default)": [],
    "json, info": ["--log-format", "json"],
    "text, warning": ["--log-level", "warning"],
}
CONCURRENCY = int(os.environ.get("BENCH_WORKER_CONCURRENCY", "64"))


async def _noop(job: Job) -> None:
    return None


def setup(monque: Monque) -> None:
    """The ``--app`` of the measured worker: one no-op handler."""
    monque.register("noop", _noop, concurrency=CONCURRENCY)


async def _build(path: Path, jobs: int) -> None:
    async with Monque(f"sqlite:///{path}") as monque:
        for start in range(0, jobs, 5000):
            await monque.enqueue_many(
                [{"name": "noop", "data": {"i": i}} for i in range(start, min(jobs, start + 5000))]
            )


def _completed(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        (done,) = conn.execute(
            "SELECT coalesce(sum(jobs), 0) FROM monque_jobs_counts WHERE status = 'completed'"
        ).fetchone()
    return int(done)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _one(base: Path, work: Path, jobs: int, flags: list[str], concurrency: int) -> tuple[float, float]:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copy(base, work)
    env = dict(os.environ, PYTHONPATH=str(ROOT), BENCH_WORKER_CONCURRENCY=str(concurrency))
    command = [sys.executable, "-m", "monque_tui", "--worker", "--app", "bench.worker_mode:setup", *flags]
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*command, f"sqlite:///{work}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    try:
        while _completed(work) < jobs:
            if proc.poll() is not None:
                raise SystemExit(f"the worker exited with {proc.returncode} before the backlog drained")
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
        cpu = _cpu_seconds(proc.pid)
    finally:
        proc.terminate()
        proc.wait()
    return jobs / elapsed, cpu / jobs * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=60_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="monque-worker-bench-") as directory:
        base, work = Path(directory) / "base.db", Path(directory) / "run.db"
        asyncio.run(_build(base, args.jobs))
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in SETTINGS}
        names = list(SETTINGS)
        for round_ in range(args.rounds):
            for name in names if round_ % 2 == 0 else reversed(names):
                rate, cpu = _one(base, work, args.jobs, SETTINGS[name], args.concurrency)
                results[name].append((rate, cpu))
                print(f"round {round_ + 1} {name:<22} {rate:>9,.0f} jobs/s  {cpu:6.1f} µs CPU/job", flush=True)
    print(
        f"\n`python -m bench.worker_mode --jobs {args.jobs} --rounds {args.rounds} --concurrency {args.concurrency}`\n"
    )
    print("| log setting | jobs/s (median) | CPU µs/job (median) |\n|---|---|---|")
    for name, runs in results.items():
        rate = statistics.median(r for r, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"| {name} | {rate:,.0f} | {cpu:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

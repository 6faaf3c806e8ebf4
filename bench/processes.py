"""``monque-tui --worker --processes N`` against one process and against huey's multi-worker modes (issue 38).

    python -m bench.processes [--jobs 1500] [--noop-jobs 20000] [--rounds 3]

One run, rounds alternating the order of the subjects, each on a fresh SQLite file:

- ``monque x1``: ``monque-tui --worker`` (one process, no supervisor);
- ``monque x2``: ``monque-tui --worker --processes 2``;
- ``huey process w2``: ``huey_consumer -k process -w 2``; ``huey thread w4``: ``-k thread -w 4``
  (both with the polling at its fastest, ``-d 0.001 -m 0.01``, on WAL + synchronous=NORMAL:
  huey at its best, as ``bench.huey_peer`` sets it).

Every handler burns 2 ms of CPU (``burn``: its own thread's CPU clock, so time spent waiting
for the GIL does not count towards the 2 ms). The workers are started and proven to consume
(one warm-up job each way) before the clock starts; then ``--jobs`` jobs are enqueued and
the clock stops when the store says the last one finished. Reported per subject: jobs/s and
completed jobs per CPU-second (user + system of every process of the subject, from ``/proc``,
over the same window), and how many cores it kept busy (CPU-seconds / seconds); the ratios
are taken within each round. Then no-op handlers (an async ``return``) on one SQLite file:
``monque x2`` against ``monque x1``, jobs/s only (the file's write lock is shared).

The machine's load average is printed before and after: other processes on a 2-core machine
change every figure, less so the ratios within a round.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .burn import BURN_SECONDS, burn

ROOT = Path(__file__).resolve().parent.parent
CPU_CONCURRENCY = 4
NOOP_CONCURRENCY = 64


def _cpu(job: Any) -> None:
    burn()


async def _noop(job: Any) -> None:
    return None


def setup(monque: Any) -> None:
    """The measured worker's ``--app``: a sync 2 ms CPU handler and an async no-op one."""
    monque.register("cpu", _cpu, concurrency=CPU_CONCURRENCY)
    monque.register("noop", _noop, concurrency=NOOP_CONCURRENCY)


# -- processes and their CPU ----------------------------------------------------------------------------
def _tree(pid: int) -> list[int]:
    """``pid`` and every descendant (Linux ``/proc/PID/task/*/children``)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo += [int(child) for child in task.read_text().split()]
            except OSError:
                pass
    return found


def _cpu_seconds(pids: list[int]) -> dict[int, float]:
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return seconds


def _wait(condition: Callable[[], bool], what: str, proc: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise SystemExit(f"{what}: the process exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not within {timeout:g} s")
        time.sleep(0.01)


@dataclass
class Result:
    rate: float
    per_cpu_second: float
    cores: float


def _measure(proc: subprocess.Popen[bytes], enqueue: Callable[[], None], done: Callable[[], int], jobs: int) -> Result:
    pids = _tree(proc.pid)
    before = _cpu_seconds(pids)
    started = time.perf_counter()
    enqueue()
    _wait(lambda: done() >= jobs, "drain", proc, timeout=max(120.0, jobs * BURN_SECONDS * 20))
    elapsed = time.perf_counter() - started
    after = _cpu_seconds(_tree(proc.pid))
    cpu = sum(after[pid] - before.get(pid, 0.0) for pid in after)
    return Result(jobs / elapsed, jobs / cpu if cpu > 0 else float("nan"), cpu / elapsed)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- monque -------------------------------------------------------------------------------------------------
def _completed(path: Path, name: str) -> int:
    try:
        with sqlite3.connect(path, timeout=5) as conn:
            row = conn.execute(
                "SELECT coalesce(sum(jobs), 0) FROM monque_jobs_counts WHERE status = 'completed' AND name = ?", (name,)
            ).fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(row[0])


def _enqueue(url: str, name: str, jobs: int) -> None:
    from monque_engine import Monque

    async def go() -> None:
        async with Monque(url, recover_stale_jobs=False) as monque:
            for start in range(0, jobs, 5000):
                await monque.enqueue_many(
                    [{"name": name, "data": {"i": i}} for i in range(start, min(jobs, start + 5000))]
                )

    asyncio.run(go())


def monque(directory: Path, processes: int, name: str, jobs: int) -> Result:
    path = directory / f"monque-{processes}-{name}.db"
    url = f"sqlite:///{path}"
    command = [sys.executable, "-m", "monque_tui", "--worker", "--app", "bench.processes:setup"]
    command += ["--log-level", "error", "--summary-interval", "0"]
    if processes > 1:
        command += ["--processes", str(processes)]
    _enqueue(url, name, 0)  # creates the file
    proc = subprocess.Popen([*command, url], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        warm = processes * 4  # a few jobs: every process has started and claims
        _enqueue(url, name, warm)
        _wait(lambda: _completed(path, name) >= warm, "monque warm-up", proc)
        _wait(lambda: len(_tree(proc.pid)) >= processes + (processes > 1), "monque processes", proc)
        return _measure(proc, lambda: _enqueue(url, name, jobs), lambda: _completed(path, name) - warm, jobs)
    finally:
        _stop(proc)


# -- huey ---------------------------------------------------------------------------------------------------
def huey(directory: Path, kind: str, workers: int, jobs: int) -> Result:
    path = directory / f"huey-{kind}-{workers}.db"
    env = dict(os.environ, PYTHONPATH=str(ROOT), BENCH_HUEY_FILE=str(path))
    os.environ["BENCH_HUEY_FILE"] = str(path)
    import importlib

    from . import processes_huey

    app = importlib.reload(processes_huey)  # this file
    consumer = [
        sys.executable,
        "-m",
        "huey.bin.huey_consumer",
        "bench.processes_huey.huey",
        "-k",
        kind,
        "-w",
        str(workers),
        "-d",
        "0.001",
        "-m",
        "0.01",
        "-q",
    ]
    proc = subprocess.Popen(consumer, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        results = app.huey.storage

        warm = workers * 2
        for i in range(warm):
            app.cpu(i)
        _wait(lambda: results.result_store_size() >= warm, "huey warm-up", proc)

        def enqueue() -> None:
            # In one transaction, as monque's enqueue_many: one task call per job (an insert and
            # a commit each, under huey's own locking) slowed huey's workers, not its peer's.
            rows = [(results.name, results.to_blob(app.huey.serialize_task(app.cpu.s(i))), 0) for i in range(jobs)]
            with sqlite3.connect(path, timeout=30) as conn:
                conn.executemany("insert into task (queue, data, priority) values (?, ?, ?)", rows)

        return _measure(proc, enqueue, lambda: results.result_store_size() - warm, jobs)
    finally:
        _stop(proc)
        app.huey.storage.close()


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1_500, help="2 ms CPU jobs per subject and round")
    parser.add_argument("--noop-jobs", type=int, default=20_000, help="no-op jobs per subject and round (0: skip)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"load average before: {_load()} ({os.cpu_count()} cores)", flush=True)
    subjects: dict[str, Callable[[Path], Result]] = {
        "monque x1": lambda d: monque(d, 1, "cpu", args.jobs),
        "monque x2": lambda d: monque(d, 2, "cpu", args.jobs),
        "huey process w2": lambda d: huey(d, "process", 2, args.jobs),
        "huey thread w4": lambda d: huey(d, "thread", 4, args.jobs),
    }
    results: dict[str, list[Result]] = {name: [] for name in subjects}
    ratios: dict[str, list[float]] = {"x2/x1 jobs/s": [], "x2/x1 per CPU-s": [], "x2/huey best jobs/s": []}
    noop: dict[str, list[float]] = {"monque x1": [], "monque x2": []}
    noop_ratios: list[float] = []
    with tempfile.TemporaryDirectory(prefix="monque-bench-processes-") as name:
        directory = Path(name)
        for round_ in range(args.rounds):
            order = list(subjects) if round_ % 2 == 0 else list(reversed(subjects))
            got: dict[str, Result] = {}
            for subject in order:
                got[subject] = subjects[subject](directory)
                results[subject].append(got[subject])
                r = got[subject]
                print(
                    f"round {round_ + 1} {subject:<16} {r.rate:8,.0f} jobs/s  {r.per_cpu_second:6,.0f} jobs/CPU-s  "
                    f"{r.cores:4.2f} cores",
                    flush=True,
                )
            best_huey = max(got["huey process w2"].rate, got["huey thread w4"].rate)
            ratios["x2/x1 jobs/s"].append(got["monque x2"].rate / got["monque x1"].rate)
            ratios["x2/x1 per CPU-s"].append(got["monque x2"].per_cpu_second / got["monque x1"].per_cpu_second)
            ratios["x2/huey best jobs/s"].append(got["monque x2"].rate / best_huey)
            if args.noop_jobs:
                pair = {}
                for processes in (1, 2) if round_ % 2 == 0 else (2, 1):
                    pair[processes] = monque(directory, processes, "noop", args.noop_jobs).rate
                    noop[f"monque x{processes}"].append(pair[processes])
                    print(f"round {round_ + 1} noop monque x{processes} {pair[processes]:8,.0f} jobs/s", flush=True)
                noop_ratios.append(pair[2] / pair[1])
            for leftover in directory.iterdir():
                leftover.unlink()
    print(f"load average after: {_load()}\n")
    print(
        f"`python -m bench.processes --jobs {args.jobs} --noop-jobs {args.noop_jobs} --rounds {args.rounds}` "
        f"(handlers burn {BURN_SECONDS * 1000:g} ms CPU; monque concurrency {CPU_CONCURRENCY})\n"
    )
    print("| subject | jobs/s (median) | jobs per CPU-second (median) | cores busy (median) |\n|---|---|---|---|")
    for subject, runs in results.items():
        print(
            f"| {subject} | {statistics.median(r.rate for r in runs):,.0f} | "
            f"{statistics.median(r.per_cpu_second for r in runs):,.0f} | {statistics.median(r.cores for r in runs):.2f} |"
        )
    print()
    for label, values in ratios.items():
        print(f"{label}: " + ", ".join(f"{v:.2f}" for v in values) + f" (median {statistics.median(values):.2f}x)")
    if noop_ratios:
        print(
            f"no-op handlers, one SQLite file: x1 {statistics.median(noop['monque x1']):,.0f} jobs/s, "
            f"x2 {statistics.median(noop['monque x2']):,.0f} jobs/s; x2/x1: "
            + ", ".join(f"{v:.2f}" for v in noop_ratios)
            + f" (median {statistics.median(noop_ratios):.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A big retention purge beside a worker of scheduled work (issue 34, part 5).

``python -m bench.scale --purge`` runs, for each size and each machine mode (``quiet``, then
``busy``), on a fresh copy of the cached store:

* retention is enabled first, outside the measurement (the first open with ``job_retention``
  builds its index: ``scale_writes`` measures that);
* ``busy``: ``HOGS`` CPU-bound processes (``while True: pass``) start and run to the end, as on
  any loaded host (this machine has ``os.cpu_count()`` cores);
* a second worker process starts (``scale_worker … timed``): ~100 jobs/s of its own name, all
  enqueued ahead of time, one falling due every 10 ms, 50 ms handlers, concurrency 16; nothing
  is due at once, so each claim waits for a due-time timer (the untimed worker of
  ``scale_writes`` refills its slots on every completion and never needs one);
* after ``BASELINE`` seconds, this process runs ``purge_expired_jobs()`` with a ``completed`` age
  that reaches the oldest ``PURGE_SHARE`` of the completed jobs (680k of 850k at 1M jobs), then
  waits ``AFTER`` seconds.

The statistic: the worker's longest gap between completions from the purge's start to
``AFTER`` seconds after its end; its failed writes (a completion, heartbeat or enqueue that
raised) in that window. Goal: ≤ 1 s with 0 failed writes, on the busy machine.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from monque_engine import JobRetention, Monque

from .scale_build import TABLE, upgrade_copy, working_copy
from .scale_writes import _count, _nth, beside_worker

BEGIN, END = "<!-- scale-purge:begin -->", "<!-- scale-purge:end -->"
BASELINE = 5.0
AFTER = 8.0
RATE = 100.0
PURGE_SHARE = 0.8
HOGS = 2
MODES = ("quiet", "busy")
GOAL_MS = 1000.0


@dataclass
class PurgeResult:
    size: int
    mode: str
    rows: int
    seconds: float
    max_gap_ms: float
    baseline_max_gap_ms: float
    completed: int
    expected: int
    failed_writes: int
    first_errors: list[str]
    load: str

    @property
    def ok(self) -> bool:
        return self.max_gap_ms <= GOAL_MS and self.failed_writes == 0


def _hogs(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def _loadavg() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def analyse(size: int, mode: str, rows: int, t0: float, t1: float, record: dict[str, Any], load: str) -> PurgeResult:
    completions: list[float] = record["completions"]
    hi = t1 + AFTER
    # A gap overlapping [t0, hi] counts, clipped to it: the gap the purge opened counts
    # from the purge's start, and one still open at the end counts up to the end.
    inside = [t for t in completions if t0 <= t <= hi]
    edges = [t0, *inside, hi]
    gaps = [b - a for a, b in pairwise(edges)]
    b0 = t0 - BASELINE + 1.0
    base = [t for t in completions if b0 <= t < t0]
    errors = [text for at, text in record["errors"] if t0 - 1.0 <= at <= hi]
    return PurgeResult(
        size=size,
        mode=mode,
        rows=rows,
        seconds=t1 - t0,
        max_gap_ms=max(gaps) * 1000,
        baseline_max_gap_ms=max((b - a for a, b in pairwise(base)), default=t0 - b0) * 1000,
        completed=len(inside),
        expected=round((hi - t0) * RATE),
        failed_writes=len(errors),
        first_errors=errors[:3],
        load=load,
    )


def measure_one(source: Path, work: Path, size: int, mode: str, facts: dict[str, Any]) -> PurgeResult:
    path = working_copy(source, work, f"purge-{size}-{mode}-{os.getpid()}")
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        upgrade_copy(path, facts)
        url = f"sqlite:///{path}"
        completed = _count(path, f"SELECT COUNT(*) FROM {TABLE} WHERE status = 'completed'", ())
        target = int(completed * PURGE_SHARE)
        cut = _nth(
            path, f"SELECT updated_at FROM {TABLE} WHERE status = 'completed' ORDER BY updated_at", (), target - 1
        )
        assert cut is not None
        retention = lambda: JobRetention(completed=(time.time() * 1000 - cut - 1) / 1000, interval=3600)  # noqa: E731

        async def enable() -> None:
            monque = Monque(url, job_retention=retention())
            await monque.initialize()
            await monque.close()

        asyncio.run(enable())
        if mode == "busy":
            hogs = _hogs(HOGS)

        async def purge() -> int:
            monque = Monque(url, job_retention=retention())
            await monque.initialize()
            try:
                return await monque.purge_expired_jobs()
            finally:
                await monque.close()

        t0, t1, rows, record = beside_worker(url, purge, timed=True, baseline=BASELINE, after=AFTER)
        load = _loadavg()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return analyse(size, mode, rows, t0, t1, record, load)


def measure(
    size: int, source: Path, work: Path, facts: dict[str, Any], modes: tuple[str, ...] = MODES,
    say: Callable[[str], None] = print,
) -> list[PurgeResult]:  # fmt: skip
    results = []
    for mode in modes:
        results.append(measure_one(source, work, size, mode, facts))
        say(f"  purge ({mode}): {results[-1]}")
    return results


def render(results: list[PurgeResult], label: Callable[[int], str]) -> str:
    header = [
        "size",
        "machine",
        "purged",
        "its duration",
        "worker: longest gap between completions, purge start → 8 s after (baseline)",
        "completions in that window (of ~100/s)",
        "failed writes",
        "load average at end (1/5/15)",
        "goal",
        "",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in results:
        busy = r.mode == "busy"
        goal = f"≤ {GOAL_MS:,.0f} ms, 0 failed writes" if busy else "(for information)"
        verdict = ("**PASS**" if r.ok else "**FAIL**") if busy else ""
        machine = f"busy ({HOGS} CPU-bound processes beside it)" if busy else "quiet"
        lines.append(
            "| "
            + " | ".join(
                [
                    label(r.size),
                    machine,
                    f"{r.rows:,}",
                    f"{r.seconds:,.1f} s",
                    f"{r.max_gap_ms:,.0f} ms ({r.baseline_max_gap_ms:,.0f} ms)",
                    f"{r.completed:,} of ~{r.expected:,}",
                    str(r.failed_writes),
                    r.load,
                    goal,
                    verdict,
                ]
            )
            + " |"
        )
    errors = [f"- {label(r.size)}, {r.mode}: {e}" for r in results for e in r.first_errors]
    if errors:
        lines += ["", "Failed writes of the worker (first of each run):", "", *errors]
    return "\n".join(lines)

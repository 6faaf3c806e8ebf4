"""Long writes on a big store, each while a second worker process completes ~100 jobs/s.

Four operations, in this order, on one working copy (each changes it for the next):

* ``enable retention``: the first ``Monque(url, job_retention=…).initialize()`` on the file
  (it builds the retention index);
* ``retention purge``: ``purge_expired_jobs()`` with a ``completed`` age that reaches the oldest
  ``min(1M, size/10)`` completed jobs;
* ``bulk retry``: ``retry_jobs`` of the oldest ``min(100k, all)`` failed jobs;
* ``bulk delete``: ``delete_jobs`` of one name's oldest ``min(100k, all)`` jobs.

For each: the worker (``scale_worker``) starts and settles, ``BASELINE`` seconds of it alone
are the baseline, then the operation runs in this process, then ``AFTER`` seconds more. From
the worker's record: the longest gap between its completions and the longest completion
write (handler return → committed) overlapping the operation, the latest heartbeat tick
(how much later than ``heartbeat_interval`` after the previous one it ended), its writes that
failed, and its throughput during the operation against the baseline. The cutoffs are read
from the working copy with plain SQL before the worker starts.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from monque_engine import JobRetention, JobSelector, Monque

from .scale_build import DELETE_NAME, TABLE

BASELINE = 5.0
AFTER = 2.0
RATE = 100.0


@dataclass
class WriteResult:
    operation: str
    rows: int
    seconds: float
    max_completion_gap_ms: float
    baseline_max_gap_ms: float
    max_completion_wait_ms: float
    max_heartbeat_late_ms: float
    failed_writes: int
    throughput_ratio: float
    baseline_rate: float
    first_errors: list[str]

    @property
    def per_row_us(self) -> float:
        return self.seconds * 1e6 / self.rows if self.rows else 0.0


def _nth(path: Path, sql: str, args: tuple[Any, ...], offset: int) -> int | None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
    try:
        row = conn.execute(sql + " LIMIT 1 OFFSET ?", (*args, offset)).fetchone()
        return None if row is None else int(row[0])
    finally:
        conn.close()


def _count(path: Path, sql: str, args: tuple[Any, ...]) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()


def _ms_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _analyse(op: str, rows: int, t0: float, t1: float, record: dict[str, Any]) -> WriteResult:
    completions: list[float] = record["completions"]
    end = max(t1, t0 + 1.0)

    def max_gap(lo: float, hi: float, inside: bool = False) -> float:
        """The longest gap overlapping [lo, hi]; ``inside``: only gaps wholly within it (the
        baseline must not count the gap the operation opened just after it)."""
        gaps = [b - a for a, b in pairwise(completions) if (a >= lo and b <= hi if inside else b >= lo and a <= hi)]
        return max(gaps, default=hi - lo) * 1000

    b0 = t0 - BASELINE + 1.0
    baseline_rate = sum(1 for t in completions if b0 <= t < t0) / (t0 - b0)
    during = sum(1 for t in completions if t0 <= t < end) / (end - t0)
    waits = [w for at, w in record["completion_waits"] if t0 <= at <= t1 + AFTER]
    interval = record["heartbeat_interval"]
    ticks: list[list[float]] = record["heartbeats"]
    late = [(b[1] - a[1] - interval) * 1000 for a, b in pairwise(ticks) if b[1] >= t0 and a[1] <= t1 + interval]
    errors = [text for at, text in record["errors"] if t0 - 1.0 <= at <= t1 + AFTER]
    return WriteResult(
        operation=op,
        rows=rows,
        seconds=t1 - t0,
        max_completion_gap_ms=max_gap(t0, t1),
        baseline_max_gap_ms=max_gap(b0, t0, inside=True),
        max_completion_wait_ms=max(waits, default=0.0) * 1000,
        max_heartbeat_late_ms=max(late, default=(t1 - t0) * 1000),
        failed_writes=len(errors),
        throughput_ratio=during / baseline_rate if baseline_rate else 0.0,
        baseline_rate=baseline_rate,
        first_errors=errors[:3],
    )


def beside_worker(
    url: str,
    action: Callable[[], Awaitable[int]],
    *,
    timed: bool = False,
    baseline: float = BASELINE,
    after: float = AFTER,
) -> tuple[float, float, int, dict[str, Any]]:
    """Run ``action`` beside a second worker process (``bench.scale_worker``) on ``url``:
    ``baseline`` seconds after it is ready, then ``after`` seconds more. Returns the action's
    start and end (``time.monotonic()``, the worker's clock too), its result, and the worker's record."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "bench.scale_worker", url, str(RATE), *(["timed"] if timed else [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdin is not None and worker.stdout is not None
    try:
        line = worker.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"the {'timed' if timed else 'second'} worker did not start (said {line!r})")
        time.sleep(baseline)
        t0 = time.monotonic()
        rows = asyncio.run(action())
        t1 = time.monotonic()
        time.sleep(after)
        out, _ = worker.communicate("stop\n", timeout=300)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    return t0, t1, rows, json.loads(out.strip().splitlines()[-1])


def _with_worker(url: str, op: str, action: Callable[[], Awaitable[int]]) -> WriteResult:
    t0, t1, rows, record = beside_worker(url, action)
    return _analyse(op, rows, t0, t1, record)


def measure(path: Path, size: int, say: Callable[[str], None] = print) -> list[WriteResult]:
    url = f"sqlite:///{path}"
    results: list[WriteResult] = []
    purge_target = min(1_000_000, size // 10)
    purge_cut = _nth(
        path, f"SELECT updated_at FROM {TABLE} WHERE status = 'completed' ORDER BY updated_at", (), purge_target - 1
    )
    assert purge_cut is not None
    age_of_cut = lambda: (time.time() * 1000 - purge_cut - 1) / 1000  # noqa: E731

    async def enable() -> int:
        monque = Monque(url, job_retention=JobRetention(completed=age_of_cut(), interval=3600))
        await monque.initialize()
        await monque.close()
        return _count(path, f"SELECT COUNT(*) FROM {TABLE}", ())

    results.append(_with_worker(url, "enable retention (first start)", enable))
    say(f"  {results[-1]}")

    async def purge() -> int:
        monque = Monque(url, job_retention=JobRetention(completed=age_of_cut(), interval=3600))
        await monque.initialize()
        try:
            return await monque.purge_expired_jobs()
        finally:
            await monque.close()

    results.append(_with_worker(url, f"retention purge of {purge_target:,} completed", purge))
    say(f"  {results[-1]}")

    failed = _count(path, f"SELECT COUNT(*) FROM {TABLE} WHERE status = 'failed'", ())
    retry_target = min(100_000, failed)
    retry_cut = _nth(
        path, f"SELECT created_at FROM {TABLE} WHERE status = 'failed' ORDER BY created_at", (), retry_target
    )

    async def retry() -> int:
        monque = Monque(url)
        await monque.initialize()
        try:
            older = None if retry_cut is None else _ms_datetime(retry_cut)
            return (await monque.retry_jobs(JobSelector(status="failed", older_than=older))).count
        finally:
            await monque.close()

    results.append(_with_worker(url, f"bulk retry of {retry_target:,} failed", retry))
    say(f"  {results[-1]}")

    named = _count(path, f"SELECT COUNT(*) FROM {TABLE} WHERE name = ?", (DELETE_NAME,))
    delete_target = min(100_000, named)
    delete_cut = _nth(
        path, f"SELECT created_at FROM {TABLE} WHERE name = ? ORDER BY created_at", (DELETE_NAME,), delete_target
    )

    async def delete() -> int:
        monque = Monque(url)
        await monque.initialize()
        try:
            older = None if delete_cut is None else _ms_datetime(delete_cut)
            return (await monque.delete_jobs(JobSelector(name=DELETE_NAME, older_than=older))).count
        finally:
            await monque.close()

    results.append(_with_worker(url, f"bulk delete of {delete_target:,} jobs of one name", delete))
    say(f"  {results[-1]}")
    return results

"""The operator's engine reads on a big store, once each, in this (fresh) process.

``python -m bench.scale_reads URL`` prints one JSON line of milliseconds:
``count_jobs(status=…)`` for each status, ``get_queue_stats()``, a count of jobs whose
text contains a string (``JobListFilter(text=…)``, matching about 1 in 100,000 jobs) in one
statement, the same count read in steps as the console reads it (``count_jobs_in_steps``: the
first progress, the longest wait between two, the whole count), and one page of 50 failed
jobs, newest first. The store is opened before the clock starts.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from monque_engine import JobListFilter, JobSort, JobStatus, Monque

#: Matches jobs whose ``user`` is user-4242 (scale_build: one job in 100,003).
CONTAINS = "user-4242@"


async def _timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def measure(url: str) -> dict[str, float]:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    out: dict[str, float] = {}
    try:
        for status in JobStatus:
            out[f"count_jobs({status.value})"] = await _timed(
                lambda s=status: monque.count_jobs(JobListFilter(status=s))  # type: ignore[misc]
            )
        out["get_queue_stats()"] = await _timed(monque.get_queue_stats)
        out["contains-text count"] = await _timed(lambda: monque.count_jobs(JobListFilter(text=CONTAINS)))
        out.update(await _in_steps(monque))
        failed = JobListFilter(status=JobStatus.FAILED)
        newest = JobSort("created_at", "desc")
        out["page of 50 failed, newest first"] = await _timed(
            lambda: monque.get_jobs_with_cursor(limit=50, filter=failed, sort=newest)
        )
    finally:
        await monque.close()
    return out


async def _in_steps(monque: Monque) -> dict[str, float]:
    """The contains count as the console reads it: what an operator waits for is the first
    progress and each next one (the view says how far it got), not the whole count."""
    started = last = time.perf_counter()
    first: float | None = None
    longest = 0.0
    async for progress in monque.count_jobs_in_steps(JobListFilter(text=CONTAINS)):
        now = time.perf_counter()
        if first is None:
            first = now - started
        longest = max(longest, now - last)
        last = now
        if progress.done:
            break
    return {
        "contains in steps: first progress": (first or 0.0) * 1000,
        "contains in steps: longest wait between progress": longest * 1000,
        "contains in steps: whole count": (last - started) * 1000,
    }


def main() -> None:
    print(json.dumps(asyncio.run(measure(sys.argv[1]))), flush=True)


if __name__ == "__main__":
    main()

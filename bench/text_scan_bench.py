"""Text filters read in steps (ADR 0008) against one statement, on a big store.

    python -m bench.text_scan_bench sqlite:///COPY.db [--repeat 3] [--step 100000] [--json]

Run it on a copy of a ``bench.scale`` store (``/work/scale-cache``; never on the cache itself:
opening a store may write to it). Times, median of ``--repeat`` rounds in this process (warm
cache), for a string one job in ~100k holds (``bench.scale_reads.CONTAINS``):

- the count: ``count_jobs`` (one statement) against ``count_jobs_in_steps`` run to the end,
  with the time to the first progress and the longest wait between two progresses;
- the console's status tabs for a text view: five one-statement counts (one per status, what
  the console did) against one ``count_jobs_in_steps`` (every status in one walk);
- the same string with ``status=failed``: the one statement (its plan walks the finished
  index with a lookup per row) against ``count_jobs``, which now reads it in steps;
- the first page (50, newest first, no payloads): ``get_jobs_with_cursor`` against
  ``get_jobs_in_steps``;
- a stop: a count in steps cancelled while a step runs, then two reads at once (both reader
  threads): how long they take, against a step's length. A thread left reading would hold
  one of them for the rest of its step (or of a whole one-statement count).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from monque_engine import JobListFilter, JobSort, JobStatus, Monque
from monque_engine.scheduler.selectors import to_store_filter
from monque_engine.store.sqlite.queries import filter_where

from .scale_reads import CONTAINS

NEWEST = JobSort("created_at", "desc")


async def _timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def _walk_count(monque: Monque, filter: JobListFilter, step: int) -> dict[str, float]:
    started = time.perf_counter()
    last = started
    first = gap = 0.0
    steps = 0
    async for progress in monque.count_jobs_in_steps(filter, step=step):
        now = time.perf_counter()
        if steps == 0:
            first = (now - started) * 1000
        gap = max(gap, (now - last) * 1000)
        last = now
        steps += 1
        if progress.done:
            matched = progress.matched
    return {"total": (last - started) * 1000, "first": first, "gap": gap, "steps": steps, "matched": matched}


async def _walk_page(monque: Monque, filter: JobListFilter, step: int) -> dict[str, float]:
    started = time.perf_counter()
    first = 0.0
    steps = 0
    async for progress in monque.get_jobs_in_steps(limit=50, filter=filter, sort=NEWEST, include_data=False, step=step):
        if steps == 0:
            first = (time.perf_counter() - started) * 1000
        steps += 1
        found = len(progress.jobs)
    return {"total": (time.perf_counter() - started) * 1000, "first": first, "steps": steps, "rows": found}


async def _one_statement(monque: Monque, filter: JobListFilter) -> int:
    """The count as one SQL statement, SQLite's plan (what ``count_jobs`` ran before steps)."""
    where, params = filter_where(to_store_filter(filter))
    sql = f"SELECT count(*) FROM monque_jobs WHERE {where}"
    store: Any = monque.store
    return int(await store.execute_read(lambda conn: conn.execute(sql, params).fetchone()[0]))


async def _stop(monque: Monque, filter: JobListFilter, step: int) -> dict[str, float]:
    """Cancel a count in steps mid-step, then time two reads at once."""
    steps = monque.count_jobs_in_steps(filter, step=step)
    seen = asyncio.Event()

    async def run() -> None:
        async for _ in steps:
            seen.set()

    task = asyncio.create_task(run())
    await seen.wait()
    await asyncio.sleep(0.01)  # inside the next step
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    started = time.perf_counter()
    page = lambda: monque.get_jobs_with_cursor(limit=50, sort=NEWEST, include_data=False)  # noqa: E731
    await asyncio.gather(page(), page())
    return {"two reads after the stop": (time.perf_counter() - started) * 1000}


async def measure(url: str, repeat: int, step: int) -> dict[str, Any]:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    text = JobListFilter(text=CONTAINS)
    failed = replace(text, status=JobStatus.FAILED)
    rounds: list[dict[str, float]] = []
    try:
        for _ in range(repeat):
            out: dict[str, float] = {}
            out["count: one statement (count_jobs)"] = await _timed(lambda: monque.count_jobs(text))
            walk = await _walk_count(monque, text, step)
            exact = await _one_statement(monque, text)
            if walk["matched"] != exact:
                raise SystemExit(f"the count in steps found {walk['matched']}, one statement {exact}")
            out["matched"] = exact
            out["count: in steps, to the end"] = walk["total"]
            out["count: in steps, first progress"] = walk["first"]
            out["count: in steps, longest wait between progresses"] = walk["gap"]
            out["steps"] = walk["steps"]

            async def five() -> None:
                for status in JobStatus:
                    await _one_statement(monque, replace(text, status=status))

            out["tabs: five counts (one per status)"] = await _timed(five)
            out["tabs: one count in steps"] = walk["total"]
            out["failed + text: one statement"] = await _timed(lambda: _one_statement(monque, failed))
            out["failed + text: count_jobs (in steps)"] = await _timed(lambda: monque.count_jobs(failed))
            out["first page: one statement"] = await _timed(
                lambda: monque.get_jobs_with_cursor(limit=50, filter=text, sort=NEWEST, include_data=False)
            )
            page = await _walk_page(monque, text, step)
            out["first page: in steps, to the end"] = page["total"]
            out["first page: in steps, first progress"] = page["first"]
            out.update(await _stop(monque, text, step))
            rounds.append(out)
    finally:
        await monque.close()
    return {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--step", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args.url, args.repeat, args.step))
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:55} {value:10,.0f}")


if __name__ == "__main__":
    main()

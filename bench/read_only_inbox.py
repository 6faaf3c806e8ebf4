"""Reads of a read-only store while the inbox holds rows, against the same reads with it empty.

    python -m bench.read_only_inbox --jobs 1000000 --inbox 100

A read-only store (``mode=ro``, the console's ``--read-only``) cannot absorb the inbox, so
while a lone producer is mid-streak, or after one crashed, its reads go through a TEMP view
of the job table plus the inbox rows (``InboxView``). This builds a file of ``--jobs``
pending jobs (20 names; kept in ``--path`` and reused when it already holds them), then
times each console read (median of ``--repeat``) with the inbox empty and with ``--inbox``
rows in it, and prints the ratio: about 1.0 means the view costs nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bson import ObjectId

from monque_engine import Monque

NAMES = 20


async def _fill(path: Path, jobs: int) -> None:
    async with Monque(f"sqlite:///{path}", recover_stale_jobs=False) as monque:
        have = await monque.count_jobs()
        for start in range(have, jobs, 10_000):
            batch = range(start, min(start + 10_000, jobs))
            await monque.enqueue_many([{"name": f"n{i % NAMES}", "data": {"i": i}} for i in batch])


def _set_inbox(path: Path, rows: int) -> None:
    """Stand in for a producer mid-streak: committed rows in the inbox, as its appends leave them."""
    now = int(time.time() * 1000)
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM monque_jobs_inbox")
        db.executemany(
            "INSERT INTO monque_jobs_inbox (id, name, data, next_run_at, created_at) VALUES (?, ?, ?, ?, ?)",
            [(str(ObjectId()), "n1", '{"queued": true}', now, now) for _ in range(rows)],
        )


def _reads(monque: Monque) -> dict[str, Callable[[], Awaitable[Any]]]:
    store: Any = monque.store
    return {
        "page, newest first": lambda: monque.get_jobs(limit=50),
        "page, one name": lambda: monque.get_jobs(name="n1", limit=50),
        "count_jobs": lambda: monque.count_jobs(),
        "stats, one name": lambda: store.stats("n1"),
        "stats, all": lambda: store.stats(None),
        "pending health": lambda: store.pending_health(int(time.time() * 1000)),
    }


async def _time_reads(path: Path, repeat: int) -> dict[str, float]:
    async with Monque(f"sqlite:///{path}?mode=ro", recover_stale_jobs=False) as monque:
        medians: dict[str, float] = {}
        for label, read in _reads(monque).items():
            took = []
            for _ in range(repeat):
                started = time.perf_counter()
                await read()
                took.append((time.perf_counter() - started) * 1000)
            medians[label] = statistics.median(took)
        return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--inbox", type=int, default=100, help="rows left in the inbox [default: 100]")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--path", type=Path, default=Path("/tmp/monque-read-only-inbox.db"))
    args = parser.parse_args()
    asyncio.run(_fill(args.path, args.jobs))
    _set_inbox(args.path, 0)
    empty = asyncio.run(_time_reads(args.path, args.repeat))
    _set_inbox(args.path, args.inbox)
    try:
        queued = asyncio.run(_time_reads(args.path, args.repeat))
    finally:
        _set_inbox(args.path, 0)
    print(f"{args.jobs:,} jobs, read-only store, medians of {args.repeat}")
    print(f"{'read':20} {'inbox empty':>12} {f'{args.inbox} in inbox':>14} {'ratio':>7}")
    for label, base in empty.items():
        print(f"{label:20} {base:10.1f} ms {queued[label]:12.1f} ms {queued[label] / base:6.2f}x")


if __name__ == "__main__":
    main()

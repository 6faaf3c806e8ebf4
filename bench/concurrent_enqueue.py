"""Enqueue from many producers at once, against one producer awaiting each call (ADR 0009).

A loop of awaited ``enqueue`` calls pays one commit per job, and a commit on Monque's
schema touches six B-trees, so that figure stays below huey's (ADR 0009). Real producers
are often many at once (web request handlers, tasks of one service): then the write thread
group-commits what is queued. This bench measures both shapes in the same minutes, each
round alternating the subjects, and prints medians and ratios:

- huey like-for-like (WAL, synchronous=NORMAL): one thread calling the task; then
  ``--producers`` threads calling it at once (huey's way to have concurrent producers);
- ours: one coroutine awaiting each ``enqueue``; then ``--producers`` coroutines each
  awaiting its share of calls (as concurrent request handlers would).

    python -m bench.concurrent_enqueue [--jobs 5000] [--producers 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import threading
import time

from .common import fresh_dir
from .huey_peer import _storage_class


def huey_rate(jobs: int, producers: int) -> float:
    from huey import SqliteHuey

    with fresh_dir("huey-concurrent") as d:
        huey = SqliteHuey("bench", filename=os.path.join(d, "huey.db"), storage_class=_storage_class("normal"))

        @huey.task()
        def noop(i: int) -> None:
            pass

        share = jobs // producers

        def produce() -> None:
            for i in range(share):
                noop(i)

        threads = [threading.Thread(target=produce) for _ in range(producers)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        queued = huey.pending_count()
        huey.storage.close()
    if queued != share * producers:
        raise RuntimeError(f"huey queued {queued} of {share * producers}")
    return share * producers / elapsed


def ours_rate(jobs: int, producers: int) -> float:
    from monque_engine import Monque

    async def run(path: str) -> float:
        monque = Monque(f"sqlite:///{path}")
        await monque.initialize()
        share = jobs // producers

        async def produce() -> None:
            for i in range(share):
                await monque.enqueue("noop", {"i": i})

        started = time.perf_counter()
        await asyncio.gather(*(produce() for _ in range(producers)))
        elapsed = time.perf_counter() - started
        stored = await monque.count_jobs()
        await monque.stop()
        if stored != share * producers:
            raise RuntimeError(f"stored {stored} of {share * producers}")
        return share * producers / elapsed

    with fresh_dir("ours-concurrent") as d:
        return asyncio.run(run(os.path.join(d, "jobs.db")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=5000, help="jobs per subject and round (default 5000)")
    parser.add_argument("--producers", type=int, default=64, help="concurrent producers (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; medians are reported (default 3)")
    args = parser.parse_args()
    subjects = {
        "huey, 1 producer": lambda: huey_rate(args.jobs, 1),
        f"huey, {args.producers} threads": lambda: huey_rate(args.jobs, args.producers),
        "ours, 1 producer": lambda: ours_rate(args.jobs, 1),
        f"ours, {args.producers} coroutines": lambda: ours_rate(args.jobs, args.producers),
    }
    rates: dict[str, list[float]] = {name: [] for name in subjects}
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    for round_no in range(1, args.rounds + 1):
        for name, measure in subjects.items():
            rates[name].append(measure())
        print(f"round {round_no}: " + ", ".join(f"{name} {values[-1]:,.0f}/s" for name, values in rates.items()))
    median = {name: statistics.median(values) for name, values in rates.items()}
    huey_one = median["huey, 1 producer"]
    print(f"\n{'subject':<24} {'median jobs/s':>14} {'vs huey, 1 producer':>20}")
    for name, value in median.items():
        print(f"{name:<24} {value:>14,.0f} {value / huey_one:>19.2f}×")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

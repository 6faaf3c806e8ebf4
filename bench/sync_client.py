"""Sync enqueue (``SyncMonque``) against the async single enqueue, in one run (issue 38).

    python -m bench.sync_client [--jobs 5000] [--threads 8] [--rounds 3] [--peer TREE] [--cpus N]

Each round, on fresh SQLite files, alternating which subject goes first:

- ``async``: one coroutine awaiting ``Monque.enqueue`` ``--jobs`` times (what ``make bench``
  calls the single enqueue);
- ``sync``: one thread calling ``SyncMonque.enqueue`` ``--jobs`` times, as shipped (a run of
  plain enqueues appends to the inbox from the calling thread);
- ``sync-via-loop``: the same with that path off, so every call is handed to the background
  loop and waited for (the "thin wrapper on one loop" alternative);
- ``sync-threads``: ``--threads`` threads sharing one ``SyncMonque``, ``--jobs`` calls in
  all; errors counted, and the thread path's transactions and rows (how much the threads'
  rows shared commits);
- ``gil``: a control with no store at all: a pure-Python stand-in for a call's own work
  (a JSON encoding, an id), ``--jobs`` times from one thread, then split over ``--threads``
  threads. Its ratio is what the GIL alone costs threads on this machine at this moment,
  the ceiling ``sync-threads / sync`` is to be read against;
- with ``--peer TREE`` (a source tree, e.g. ``git archive main | tar -x -C /tmp/main_src``):
  ``peer-sync`` and ``peer-sync-threads``, the same two subjects with that tree's
  ``store/sqlite/threadappends.py`` (how threads' rows are committed) swapped in, in the same
  process and the same rounds, so the two designs' ``8 threads / 1 thread`` are compared
  under the same load. Only that module is swapped; everything else is this tree's.

``--cpus 1`` runs the whole process on one CPU. Read beside a run on every CPU it separates
the two costs threads pay under the GIL: the hand-over itself, and the wake-up of a thread
on another, idle CPU (on a small VM, a halted vCPU's resume) that every hand-over to a
sleeping thread across cores waits for. The gil control shows it alone: pure-Python threads
lose ~40 % across two cores and nothing on one.

Every subject is timed from its first call until its store is closed (so every job is in
the job table, the inbox's last rows moved), after a warm-up of 200 calls, and checks the
count it stored. Printed: each subject's median jobs/s, the ratios to ``async`` computed
inside each round, ``sync-threads`` against ``sync`` the same way, and the ``gil`` control.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from monque_engine import Monque, SyncMonque
from monque_engine.store.sqlite import runner
from monque_engine.sync import client as sync_client

from .common import fresh_dir

WARM_UP = 200
#: The thread path's transactions and rows of the latest run with threads.
BATCHES: list[tuple[int, int]] = []
#: The latest subject's process CPU time per job (every thread's, the background loop's
#: too), over the same span as its rate: on a shared machine, other processes' load moves
#: wall-clock rates by 2x between rounds, and CPU time far less.
CPU_PER_JOB: list[float] = [0.0]


def async_rate(jobs: int, _threads: int) -> tuple[float, int]:
    async def run(path: str) -> float:
        monque = Monque(f"sqlite:///{path}")
        await monque.initialize()
        for i in range(WARM_UP):
            await monque.enqueue("noop", {"i": -i})
        started, cpu = time.perf_counter(), time.process_time()
        for i in range(jobs):
            await monque.enqueue("noop", {"i": i})
        stored = await monque.count_jobs()
        await monque.close()
        elapsed = time.perf_counter() - started
        CPU_PER_JOB[0] = (time.process_time() - cpu) / jobs
        if stored != jobs + WARM_UP:
            raise RuntimeError(f"async stored {stored} of {jobs + WARM_UP}")
        return jobs / elapsed

    with fresh_dir("sync-client") as d:
        return asyncio.run(run(os.path.join(d, "jobs.db"))), 0


def sync_rate(jobs: int, threads: int, via_loop: bool = False) -> tuple[float, int]:
    streak = sync_client.STREAK
    if via_loop:
        sync_client.STREAK = jobs + WARM_UP + 1  # never a run: every call through the loop
    errors: list[BaseException] = []
    try:
        with fresh_dir("sync-client") as d:
            monque = SyncMonque(f"sqlite:///{os.path.join(d, 'jobs.db')}")
            for i in range(WARM_UP):
                monque.enqueue("noop", {"i": -i})
            share = jobs // threads

            def produce() -> None:
                try:
                    for i in range(share):
                        monque.enqueue("noop", {"i": i})
                except BaseException as error:  # noqa: BLE001 - counted and reported
                    errors.append(error)

            workers = [threading.Thread(target=produce) for _ in range(threads)]
            started, cpu = time.perf_counter(), time.process_time()
            if threads == 1:
                produce()
            else:
                for worker in workers:
                    worker.start()
                for worker in workers:
                    worker.join()
            stored = monque.count_jobs()
            opened = monque._opened
            if threads > 1 and opened is not None:
                appends = opened.monque.store._writer._thread_appends  # type: ignore[attr-defined]
                BATCHES.append((getattr(appends, "commits", 0), getattr(appends, "rows", 0)))
            monque.close()
            elapsed = time.perf_counter() - started
            CPU_PER_JOB[0] = (time.process_time() - cpu) / (share * threads)
            if not errors and stored != share * threads + WARM_UP:
                raise RuntimeError(f"sync stored {stored} of {share * threads + WARM_UP}")
            return share * threads / elapsed, len(errors)
    finally:
        sync_client.STREAK = streak


def _stand_in(count: int) -> None:
    """A call's own Python work without a store: encode a payload, make an id."""
    for i in range(count):
        json.dumps({"i": i}).encode().hex()
        os.urandom(12).hex()


def gil_ratio(jobs: int, threads: int) -> float:
    """The control: ``threads`` threads against one, doing the stand-in ``jobs`` times in all."""
    started = time.perf_counter()
    _stand_in(jobs)
    alone = time.perf_counter() - started
    workers = [threading.Thread(target=_stand_in, args=(jobs // threads,)) for _ in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    together = time.perf_counter() - started
    return (jobs // threads * threads / together) / (jobs / alone)


def load_peer(tree: str) -> Any:
    """The peer tree's ``ThreadAppends`` class (same constructor and ``append`` signature)."""
    path = os.path.join(tree, "monque_engine", "store", "sqlite", "threadappends.py")
    spec = importlib.util.spec_from_file_location("bench_peer_threadappends", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--peer: no {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ThreadAppends


def with_appends(
    appends: Any, subject: Callable[[int, int], tuple[float, int]]
) -> Callable[[int, int], tuple[float, int]]:
    def run(jobs: int, threads: int) -> tuple[float, int]:
        mine = getattr(runner, "ThreadAppends")  # noqa: B009 - swapped for the run, then put back
        setattr(runner, "ThreadAppends", appends)  # noqa: B010
        try:
            return subject(jobs, threads)
        finally:
            setattr(runner, "ThreadAppends", mine)  # noqa: B010

    return run


SUBJECTS: dict[str, Callable[[int, int], tuple[float, int]]] = {
    "async": async_rate,
    "sync": lambda jobs, _threads: sync_rate(jobs, 1),
    "sync-via-loop": lambda jobs, _threads: sync_rate(jobs, 1, via_loop=True),
    "sync-threads": sync_rate,
}


def main() -> int:
    ap = argparse.ArgumentParser(description="SyncMonque.enqueue against the async single enqueue")
    ap.add_argument("--jobs", type=int, default=5_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peer", metavar="TREE", help="also run sync and sync-threads with TREE's threadappends.py")
    ap.add_argument(
        "--cpus",
        type=int,
        metavar="N",
        help="run the whole process on the first N CPUs only (Linux): with 1, no GIL hand-over crosses cores",
    )
    args = ap.parse_args()
    if args.cpus:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cpus])  # before any thread starts
    if args.peer:
        peer = load_peer(args.peer)
        SUBJECTS["peer-sync"] = with_appends(peer, SUBJECTS["sync"])
        SUBJECTS["peer-sync-threads"] = with_appends(peer, SUBJECTS["sync-threads"])
    peer_threads_per_single: list[float] = []
    rates: dict[str, list[float]] = {name: [] for name in SUBJECTS}
    ratios: dict[str, list[float]] = {name: [] for name in SUBJECTS if name != "async"}
    threads_per_single: list[float] = []
    cpu_per_job: dict[str, list[float]] = {name: [] for name in SUBJECTS}
    gil: list[float] = []
    errors = 0
    print(
        f"load average at start: {', '.join(f'{load:.1f}' for load in os.getloadavg())} ({os.cpu_count()} cores, "
        f"this process on {len(os.sched_getaffinity(0))})"
    )
    for round_ in range(args.rounds):
        order = list(SUBJECTS) if round_ % 2 == 0 else list(reversed(SUBJECTS))
        got = {}
        for name in order:
            rate, failed = SUBJECTS[name](args.jobs, args.threads)
            got[name] = rate
            cpu_per_job[name].append(CPU_PER_JOB[0])
            errors += failed
        for name, rate in got.items():
            rates[name].append(rate)
            if name != "async":
                ratios[name].append(rate / got["async"])
        threads_per_single.append(got["sync-threads"] / got["sync"])
        if args.peer:
            peer_threads_per_single.append(got["peer-sync-threads"] / got["peer-sync"])
        gil.append(gil_ratio(args.jobs * 20, args.threads))
        print(
            f"round {round_ + 1} (load {os.getloadavg()[0]:.1f}): "
            + ", ".join(f"{name} {rate:,.0f}/s" for name, rate in got.items())
            + f"; gil control {gil[-1]:.2f}; thread-path (commits, rows) of the runs with threads: {BATCHES}",
            flush=True,
        )
        BATCHES.clear()
    print(f"\n{args.jobs} jobs per subject, {args.threads} threads for sync-threads, {args.rounds} rounds; medians:")
    for name in SUBJECTS:
        line = f"  {name:17} {statistics.median(rates[name]):9,.0f} jobs/s"
        if name in ratios:
            per_round = ", ".join(f"{ratio:.2f}" for ratio in ratios[name])
            line += f"   vs async: {per_round} (median {statistics.median(ratios[name]):.2f}x)"
        print(line)
    per_round = ", ".join(f"{ratio:.2f}" for ratio in threads_per_single)
    print(
        f"  {args.threads} threads / 1 thread (sync): {per_round} (median {statistics.median(threads_per_single):.2f}x); "
        f"errors from threads: {errors}"
    )
    if args.peer:
        per_round = ", ".join(f"{ratio:.2f}" for ratio in peer_threads_per_single)
        print(
            f"  peer: {args.threads} threads / 1 thread (sync): {per_round} "
            f"(median {statistics.median(peer_threads_per_single):.2f}x)"
        )
    cpu = {name: statistics.median(values) * 1e6 for name, values in cpu_per_job.items()}
    print(
        "  CPU per job, median (us; every thread of the process): " + ", ".join(f"{n} {c:.1f}" for n, c in cpu.items())
    )
    by_cpu = [one / many for one, many in zip(cpu_per_job["sync"], cpu_per_job["sync-threads"], strict=True)]
    line = f"  {args.threads} threads / 1 thread by CPU per job (sync): median {statistics.median(by_cpu):.2f}x"
    if args.peer:
        by_cpu = [
            one / many for one, many in zip(cpu_per_job["peer-sync"], cpu_per_job["peer-sync-threads"], strict=True)
        ]
        line += f"; peer {statistics.median(by_cpu):.2f}x"
    print(line)
    per_round = ", ".join(f"{ratio:.2f}" for ratio in gil)
    print(
        f"  gil control, {args.threads} threads / 1 thread (no store): {per_round} (median {statistics.median(gil):.2f}x)"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())

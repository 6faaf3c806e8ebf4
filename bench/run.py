"""Benchmark runner: ``python -m bench.run [--quick] [--only NAME ...] [--jobs N]``.

Measures, in one run on one machine: the raw SQLite ceiling, huey's ``SqliteHuey`` (at its
defaults, like-for-like, and tuned: like-for-like with the consumer polling at its fastest), and monque_engine (drain, single enqueue, enqueue_many,
cross-process enqueue→start latency) at default (synchronous=NORMAL) and full durability,
then prints a markdown report and saves it to ``bench/results/latest.md`` (``quick.md``
for ``--quick`` runs; ``--out`` to choose).

Every measurement *unit* (e.g. ``huey-lfl-w4``, ``ours-drain-normal-c256``) runs in a
fresh child process (``python -m bench.run --child UNIT``) with its own temp directory
and DB file, removed afterwards. A fresh interpreter per unit means no unit inherits
another's garbage (50k job objects, huey's registry), leftover threads (huey's consumer
threads, our store's writer/feed threads), open SQLite connections or page cache, or a
warmed-up/fragmented heap, and a crash or hang in one unit is reported without losing the
rest. Units run one after another, never concurrently. Timing uses ``time.perf_counter``.

``--only NAME`` (repeatable, or comma-separated) selects units whose name equals NAME or
starts with ``NAME-``: e.g. ``raw``, ``huey``, ``huey-lfl``, ``ours``, ``ours-drain``,
``ours-latency-full``. ``--list`` shows the units.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from . import report
from .common import Record, emit_records, machine_facts, parse_records

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


@dataclass
class Params:
    jobs: int
    single: int
    latency_count: int
    latency_gap: float
    concurrency: list[int]
    huey_workers: list[int]
    drain_wait: str


def params_from(args: argparse.Namespace) -> Params:
    if args.quick:
        jobs, single, lat_n, gap, conc = 2000, 1000, 20, 0.01, [64]
    else:
        jobs, single, lat_n, gap, conc = 50_000, 20_000, 200, 0.02, [5, 64, 256]
    if args.jobs:
        jobs = args.jobs
        single = args.single or max(1, jobs * 2 // 5)
    if args.single:
        single = args.single
    if args.concurrency:
        conc = [int(c) for c in args.concurrency.split(",")]
    return Params(jobs, single, args.latency_count or lat_n, gap, conc, [1, 4], args.drain_wait)


def units(p: Params) -> list[str]:
    names = ["raw-normal", "raw-full", "huey-default-w1"]
    names += [f"huey-lfl-w{w}" for w in p.huey_workers]
    # huey at its best (issue 26): like-for-like storage, consumer polling at its fastest.
    names += [f"huey-tuned-w{w}" for w in p.huey_workers]
    for sync in ("normal", "full"):
        names += [f"ours-drain-{sync}-c{c}" for c in p.concurrency]
    if importlib.util.find_spec("prometheus_client") is not None:
        # The metrics extra (issue 29): the same drain with the collector scraped every 0.5 s.
        names += [f"ours-metrics-normal-c{c}" for c in p.concurrency]
    for kind in ("enqueue", "many", "latency"):
        names += [f"ours-{kind}-{sync}" for sync in ("normal", "full")]
    if importlib.util.find_spec("uvloop") is not None:
        # The optional extra (pip install 'monque-tui[uvloop]'): the same engine on uvloop's
        # event loop, at the default concurrency and for single enqueues, where the loop's own
        # cost is the largest share. Reported apart (ours_uvloop.*), never as "ours".
        names += ["uvloop-drain-normal-c5", "uvloop-enqueue-normal"]
    return names


def select(all_units: list[str], only: list[str]) -> list[str]:
    if not only:
        return all_units
    wanted = [w.strip() for item in only for w in item.split(",") if w.strip()]
    chosen = [u for u in all_units if any(u == w or u.startswith(w + "-") for w in wanted)]
    if not chosen:
        raise SystemExit(f"--only {', '.join(wanted)} matches no unit; units: {', '.join(all_units)}")
    return chosen


def run_unit(unit: str, p: Params) -> list[Record]:
    """Runs in the child process."""
    parts = unit.split("-")
    if parts[0] == "raw":
        from . import raw_sqlite

        return raw_sqlite.run(parts[1], p.jobs, p.single)
    if parts[0] == "huey":
        from . import huey_peer

        return huey_peer.run(parts[1], int(parts[2][1:]), p.jobs)
    if parts[0] == "uvloop":
        import uvloop

        from . import monque_engine_bench as ours

        kind, sync = parts[1], parts[2]
        if kind == "drain":
            measured = uvloop.run(ours.drain(sync, p.jobs, int(parts[3][1:]), p.drain_wait))
        elif kind == "enqueue":
            measured = uvloop.run(ours.enqueue_single(sync, p.single))
        else:
            raise SystemExit(f"unknown unit {unit!r}")
        for record in measured:
            record.key = "ours_uvloop." + record.key.split(".", 1)[1]
            record.subject = "monque_engine on uvloop"
            record.settings += f", uvloop {uvloop.__version__}"
        return measured
    if parts[0] == "ours":
        from . import monque_engine_bench as ours

        kind, sync = parts[1], parts[2]
        if kind in ("drain", "metrics"):
            return asyncio.run(ours.drain(sync, p.jobs, int(parts[3][1:]), p.drain_wait, metrics=kind == "metrics"))
        if kind == "enqueue":
            return asyncio.run(ours.enqueue_single(sync, p.single))
        if kind == "many":
            return asyncio.run(ours.enqueue_many(sync, p.jobs))
        if kind == "latency":
            return asyncio.run(ours.latency(sync, p.latency_count, p.latency_gap))
    raise SystemExit(f"unknown unit {unit!r}")


def median_records(records: list[Record]) -> list[Record]:
    """One record per key: the run with the median value (the lower middle for an even count),
    noting the spread so a noisy figure shows as one."""
    by_key: dict[str, list[Record]] = {}
    for record in records:
        by_key.setdefault(record.key, []).append(record)
    chosen: list[Record] = []
    for group in by_key.values():
        ordered = sorted(group, key=lambda r: r.value)
        middle = ordered[(len(ordered) - 1) // 2]
        if len(ordered) > 1:
            values = ", ".join(report.fmt(r.value, r.unit) for r in group)
            middle.notes = [*middle.notes, f"median of {len(group)} runs ({values})"]
        chosen.append(middle)
    return chosen


def child_argv(unit: str, args: argparse.Namespace) -> list[str]:
    argv = [sys.executable, "-m", "bench.run", "--child", unit, "--drain-wait", args.drain_wait]
    if args.quick:
        argv.append("--quick")
    for flag in ("jobs", "single", "concurrency", "latency_count"):
        value = getattr(args, flag)
        if value:
            argv += [f"--{flag.replace('_', '-')}", str(value)]
    return argv


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small N: a smoke run in a few seconds per unit")
    ap.add_argument("--only", action="append", default=[], metavar="NAME", help="run only units named NAME or NAME-*")
    ap.add_argument("--jobs", type=int, help="backlog / batch size N (default 50000; --quick 2000)")
    ap.add_argument("--single", type=int, help="single-enqueue calls (default 20000, or 2/5 of --jobs)")
    ap.add_argument("--concurrency", help="worker concurrencies to try for our drain, e.g. 64,256")
    ap.add_argument("--latency-count", type=int, help="jobs for the latency test (default 200)")
    ap.add_argument(
        "--drain-wait",
        choices=("events", "stats"),
        default="events",
        help="how our drain waits before confirming with store.stats (see monque_engine_bench)",
    )
    ap.add_argument("--out", help="where to write the markdown (default bench/results/latest.md or quick.md)")
    ap.add_argument("--timeout", type=float, default=900, help="per-unit timeout in seconds")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run the unit list N times, interleaved (so load spikes hit ours and huey alike), and "
        "report each figure's median; 3 on a busy machine",
    )
    ap.add_argument("--list", action="store_true", help="list units and exit")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    p = params_from(args)

    if args.child:
        emit_records(run_unit(args.child, p))
        return 0

    chosen = select(units(p), args.only)
    if args.list:
        print("\n".join(chosen))
        return 0

    facts = machine_facts()
    print("Machine: " + "; ".join(f"{k}: {v}" for k, v in facts.items()), flush=True)
    records: list[Record] = []
    failures: list[str] = []
    stderr_notes: list[str] = []
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    started = time.perf_counter()
    repeats = max(1, args.repeat)
    rounds: list[list[Record]] = []
    for round_no in range(repeats):
        rounds.append([])
        if repeats > 1:
            print(f"— round {round_no + 1} of {repeats}", flush=True)
        for unit in chosen:
            t0 = time.perf_counter()
            print(f"… {unit}", end="", flush=True)
            try:
                proc = subprocess.run(
                    child_argv(unit, args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.timeout
                )
            except subprocess.TimeoutExpired:
                failures.append(f"{unit}: timed out after {args.timeout:.0f} s")
                print(" TIMEOUT", flush=True)
                continue
            if proc.returncode != 0:
                tail = " ".join(proc.stderr.strip().splitlines()[-3:])
                failures.append(f"{unit}: exit {proc.returncode}: {tail}")
                print(f" FAILED ({tail})", flush=True)
                continue
            got = parse_records(proc.stdout)
            records += got
            rounds[-1] += got
            summary = ", ".join(f"{r.key}={report.fmt(r.value, r.unit)}" for r in got)
            print(f" {time.perf_counter() - t0:.1f}s  {summary}", flush=True)
            if proc.stderr.strip():
                # warnings/log output from a unit are kept as notes, never silently dropped
                lines = proc.stderr.strip().splitlines()
                stderr_notes.append(f"{unit} wrote {len(lines)} line(s) to stderr, last: {lines[-1][:200]}")
    if repeats > 1:
        records = median_records(records)

    run_params = {
        "jobs": str(p.jobs),
        "single": str(p.single),
        "latency": f"{p.latency_count}×{p.latency_gap * 1000:.0f}ms",
        "concurrency": ",".join(map(str, p.concurrency)),
        "drain_wait": p.drain_wait,
        "units": str(len(chosen)),
        "repeat": f"{repeats} (median of each figure)" if repeats > 1 else "1",
        "wall": f"{time.perf_counter() - started:.0f}s",
    }
    try:
        run_params["loadavg at end"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        pass
    text = report.render(records, failures, facts, run_params, stderr_notes, rounds)
    print()
    print(text)
    out = args.out or os.path.join(HERE, "results", "quick.md" if args.quick else "latest.md")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(f"(written to {os.path.relpath(out, ROOT) if out.startswith(ROOT) else out})")
    return 1 if failures and not records else 0


if __name__ == "__main__":
    sys.exit(main())

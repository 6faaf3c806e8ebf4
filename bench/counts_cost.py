"""What the kept counts cost (issue 26): drain and single enqueue with them and without, A/B.

    python -m bench.counts_cost [--rounds 7] [--jobs 20000] [--single 20000] [-c 5,64]

Issue 26 lets the counts per ``(name, status)``, kept in the transaction of every change,
cost drain and single enqueue at most 5 %. An A/B against an older commit (0.91× at
concurrency 5) also measured every other change since that commit. Here both sides are this
tree: "without" is a copy of its ``monque_engine`` in a temp dir with the count writes
taken out by a small patch (``PATCH``), never committed:

* ``Changes.move`` does nothing, so a write's batch collects its feed rows and no count
  deltas, and ``Journal.write`` appends the feed rows with no count upsert after them;
* ``Journal.tally`` does nothing (the GROUP BY upsert of a set changed in SQL);
* the reads the counts answer (``counted.py``) count the job table instead, so the copy's
  ``stats`` and ``count`` stay right (read after the clock stops, never timed).

Each patched line must be found exactly once, so a change to those files stops this bench
with the anchor that moved instead of measuring a half-patched copy. Before the rounds each
side enqueues a few jobs into a fresh file and says which package it imported and what its
counts table holds (the copy's must be empty, this tree's must hold them).

A measurement is one fresh process: the drain is ``bench.drain_ab``'s (a backlog of
``--jobs`` no-op jobs, timed to the last ``job:complete``, CPU µs per job of the event-loop
thread and of the process); single enqueue is ``make bench``'s unit (``--single`` awaited
``enqueue`` calls one after another, timed until a write transaction has moved the inbox's
last rows). Rounds alternate which side goes first. Reported per measure: each round, then
the median of the per-round ratios with / without (rate, and CPU per job), against the
issue's bound (rate ratio ≥ 0.95). Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .drain_ab import measure as measure_drain

ROOT = Path(__file__).resolve().parent.parent
#: ``(file under monque_engine/store/sqlite, text found exactly once, its replacement)``.
PATCH: tuple[tuple[str, str, str], ...] = (
    (
        "journal.py",
        '        """Count ``jobs`` jobs of ``name`` out of ``was`` and into ``status`` (no feed row)."""\n',
        '        """Count ``jobs`` jobs of ``name`` out of ``was`` and into ``status`` (no feed row)."""\n'
        "        return  # bench.counts_cost: no kept counts\n",
    ),
    (
        "journal.py",
        '        text = "" if sign > 0 else "-"\n'
        "        conn.execute(self._tally.format(sign=text, where=where), params)\n"
        "        conn.execute(self._group_tally.format(sign=text, where=where), params)\n",
        "        return  # bench.counts_cost: no kept counts\n",
    ),
    (
        "journal.py",
        '        FAILED, RETRYING or None). ``error_type`` None is kept as ``NO_ERROR_TYPE``."""\n',
        '        FAILED, RETRYING or None). ``error_type`` None is kept as ``NO_ERROR_TYPE``."""\n'
        "        return  # bench.counts_cost: no kept error counts\n",
    ),
    (
        "counted.py",
        '    """Only a name, a name glob and statuses: what the counts table is keyed by."""\n    return (\n',
        '    """Only a name, a name glob and statuses: what the counts table is keyed by."""\n'
        "    return False and (  # bench.counts_cost: count the job table\n",
    ),
    (
        "counted.py",
        "def selector_answerable(selector: StoreSelector) -> bool:\n    return (\n",
        "def selector_answerable(selector: StoreSelector) -> bool:\n"
        "    return False and (  # bench.counts_cost: count the job table\n",
    ),
    (
        "counted.py",
        'f"SELECT name, status, jobs, duration_ms FROM {tables.counts} WHERE {name_where} AND jobs != 0 "',
        "f\"SELECT name, status, count(*), coalesce(sum(CASE WHEN status = 'completed' \"\n"
        '        f"THEN updated_at - created_at END), 0) FROM {tables.jobs} WHERE {name_where} GROUP BY name, status "',
    ),
    (
        "counted.py",
        'f"SELECT name FROM {tables.counts} WHERE jobs > 0 UNION',
        'f"SELECT name FROM {tables.jobs} UNION',
    ),
)

#: Strip the editable install's finder, import ``monque_engine`` from argv[1] when given.
IMPORT = r"""
import sys
src = sys.argv[1]
if src:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__name__.lower()]
    sys.path.insert(0, src)
import monque_engine
"""

#: What each side keeps: enqueue 3 jobs one by one and 2 in a batch, then read the counts table.
CHECK = (
    IMPORT
    + r"""
import asyncio, json, os, sqlite3, tempfile
from monque_engine import Monque

async def main():
    with tempfile.TemporaryDirectory(prefix="counts-cost-check-") as d:
        path = os.path.join(d, "jobs.db")
        m = Monque(f"sqlite:///{path}")
        await m.initialize()
        for i in range(3):
            await m.enqueue("check", {"i": i})
        await m.enqueue_many([{"name": "check", "data": {"i": i}} for i in range(2)])
        await m.store.execute_write(lambda conn: None)
        pending = (await m.store.stats("check")).pending
        await m.close()
        conn = sqlite3.connect(path)
        kept = conn.execute("SELECT coalesce(sum(jobs), 0) FROM monque_jobs_counts").fetchone()[0]
        conn.close()
        return {"file": monque_engine.__file__, "kept": kept, "pending": pending}

print(json.dumps(asyncio.run(main())))
"""
)

#: ``make bench``'s single-enqueue unit (``monque_engine_bench.enqueue_single``), one side.
ENQUEUE = (
    IMPORT
    + r"""
import asyncio, json, os, tempfile, time
from monque_engine import Monque
jobs = int(sys.argv[2])

async def main():
    with tempfile.TemporaryDirectory(prefix="counts-cost-enqueue-") as d:
        m = Monque(f"sqlite:///{os.path.join(d, 'jobs.db')}")
        await m.initialize()
        p0, c0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
        for i in range(jobs):
            await m.enqueue("noop", {"i": i})
        await m.store.execute_write(lambda conn: None)  # the inbox's last rows moved: timed
        elapsed = time.perf_counter() - t0
        p1, c1 = time.process_time(), time.thread_time()
        stats = await m.store.stats("noop")
        await m.close()
        if stats.pending != jobs:
            raise SystemExit(f"store has {stats.pending} pending, expected {jobs}")
        return jobs / elapsed, (c1 - c0) / jobs * 1e6, (p1 - p0) / jobs * 1e6

rate, loop_us, proc_us = asyncio.run(main())
print(json.dumps({"file": monque_engine.__file__, "rate": rate, "loop_us": loop_us, "proc_us": proc_us}))
"""
)


def patched_copy(directory: Path) -> Path:
    """A copy of this tree's ``monque_engine`` under ``directory`` with ``PATCH`` applied;
    the directory to put first on the path."""
    target = directory / "monque_engine"
    shutil.copytree(ROOT / "monque_engine", target, ignore=shutil.ignore_patterns("__pycache__"))
    for name, old, new in PATCH:
        path = target / "store" / "sqlite" / name
        text = path.read_text()
        found = text.count(old)
        if found != 1:
            raise SystemExit(
                f"bench/counts_cost.py: its patch expects this text once in monque_engine/store/sqlite/{name}, "
                f"found it {found} times; update PATCH to the code as it is now:\n{old}"
            )
        path.write_text(text.replace(old, new))
    return directory


def _child(script: str, *args: str) -> dict[str, float | str]:
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=ROOT, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"child failed: {' '.join(out.stderr.strip().splitlines()[-3:])}")
    result: dict[str, float | str] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def check_sides(sides: dict[str, str]) -> None:
    """Each side imports the package it should, and keeps counts (or not) as it should."""
    for side, src in sides.items():
        got = _child(CHECK, src)
        where = str(got["file"])
        expected = src or str(ROOT)
        print(f"{side:>8}: imports {where}; counts table holds {got['kept']} jobs; stats say {got['pending']} pending")
        if not where.startswith(expected):
            raise SystemExit(f"{side}: imported {where}, not the tree under {expected}")
        if got["pending"] != 5 or got["kept"] != (0 if src else 5):
            raise SystemExit(f"{side}: expected 5 pending and {0 if src else 5} kept in the counts table, got {got}")


def run(args: argparse.Namespace, src: str) -> None:
    sides = {"with": "", "without": src}
    check_sides(sides)
    measures = [f"drain c{c}" for c in args.concurrency] + (["single enqueue"] if args.single else [])
    got: dict[str, dict[str, list[dict[str, float | str]]]] = {m: {"with": [], "without": []} for m in measures}
    for n in range(args.rounds):
        order = ["with", "without"] if n % 2 == 0 else ["without", "with"]
        for what in measures:
            line = f"round {n + 1} {what:<15}"
            for side in order:
                result: dict[str, float | str]
                if what.startswith("drain"):
                    result = dict(measure_drain(sides[side], args.jobs, int(what.split("c")[-1])))
                else:
                    result = _child(ENQUEUE, sides[side], str(args.single))
                if sides[side] and not str(result["file"]).startswith(sides[side]):
                    raise RuntimeError(f"{side} imported {result['file']}")
                got[what][side].append(result)
            with_, without = got[what]["with"][-1], got[what]["without"][-1]
            line += "  ".join(
                f"  {side} {float(r['rate']):7.0f}/s loop {float(r['loop_us']):5.1f} proc {float(r['proc_us']):5.1f} µs/job"
                for side, r in (("with", with_), ("without", without))
            )
            line += f"  ratio ×{float(with_['rate']) / float(without['rate']):.3f}"
            print(f"{line}  (load {os.getloadavg()[0]:.2f})", flush=True)
    print()
    print(f"Counts kept vs not, medians of {args.rounds} per-round ratios (with / without):")
    failed = False
    for what in measures:
        pairs = list(zip(got[what]["with"], got[what]["without"], strict=True))
        rate = statistics.median(float(w["rate"]) / float(o["rate"]) for w, o in pairs)
        loop = statistics.median(float(w["loop_us"]) / float(o["loop_us"]) for w, o in pairs)
        proc = statistics.median(float(w["proc_us"]) / float(o["proc_us"]) for w, o in pairs)
        ok = rate >= 1 - args.bound
        failed |= not ok
        medians = "; ".join(
            f"{side} {statistics.median(float(r['rate']) for r in got[what][side]):,.0f}/s"
            for side in ("with", "without")
        )
        print(
            f"  {what:<15} rate ×{rate:.3f}, CPU per job: loop ×{loop:.3f}, process ×{proc:.3f} "
            f"({medians}) — {'PASS' if ok else 'FAIL'} (issue 26: the drop ≤ {args.bound:.0%})"
        )
    print(f"load average at end: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if failed:
        print("(on a shared machine, rerun with more rounds before trusting a FAIL; CPU per job moves less)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.counts_cost", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7, help="rounds (each side once per measure per round)")
    ap.add_argument("--jobs", type=int, default=20_000, help="drain backlog per measurement")
    ap.add_argument("--single", type=int, default=20_000, help="single enqueues per measurement (0: skip)")
    ap.add_argument("-c", "--concurrency", default="5,64", help="drain concurrencies, comma-separated")
    ap.add_argument("--bound", type=float, default=0.05, help="largest drop allowed (issue 26: 0.05)")
    ap.add_argument("--keep", help="build the patched copy in this directory and keep it (default: a temp dir)")
    args = ap.parse_args(argv)
    args.concurrency = [int(c) for c in args.concurrency.split(",") if c.strip()]
    print(f"load average at start: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    started = time.perf_counter()
    if args.keep:
        directory = Path(args.keep)
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
        run(args, str(patched_copy(directory)))
    else:
        with tempfile.TemporaryDirectory(prefix="counts-cost-") as tmp:
            run(args, str(patched_copy(Path(tmp))))
    print(f"wall {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

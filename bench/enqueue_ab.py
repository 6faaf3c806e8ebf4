"""A/B of the single enqueue: two source trees of monque_engine, alternated in one run, as
``bench.drain_ab`` does for the drain (issue 35: CPU per job within 3 % of main).

    python -m bench.enqueue_ab --base /tmp/base_src --rounds 4 --jobs 5000

``--base`` is a directory holding another ``monque_engine`` package (``git archive <commit>
monque_engine | tar -x -C /tmp/base_src``); the other side is this tree. Each measurement is
a fresh child process enqueueing ``--jobs`` jobs one ``await monque.enqueue(...)`` after the
other on a fresh SQLite file (no worker registered), after a warm-up of 200. It reports the
rate, the CPU time of the event-loop thread per job (``time.thread_time``) and of the whole
process (the write thread included): on a shared machine wall time moves by ±30 %, CPU per
job much less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from .common import AB_CHILD_PRELUDE

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = (
    AB_CHILD_PRELUDE
    + r"""
jobs = int(sys.argv[2])

async def main():
    with tempfile.TemporaryDirectory(prefix="enqueue-ab-") as d:
        m = Monque(f"sqlite:///{os.path.join(d, 'jobs.db')}")
        await m.initialize()
        for i in range(200):  # warm-up: prepared statements, the inbox
            await m.enqueue("noop", {"i": -i})
        t0, c0, p0 = time.perf_counter(), time.thread_time(), cpu()
        for i in range(jobs):
            await m.enqueue("noop", {"i": i})
        t1, c1, p1 = time.perf_counter(), time.thread_time(), cpu()
        stats = await m.store.stats("noop")
        await m.close()
        if stats.pending != jobs + 200:
            raise SystemExit(f"only {stats.pending} of {jobs + 200} stored")
        return jobs / (t1 - t0), (c1 - c0) / jobs * 1e6, (p1 - p0) / jobs * 1e6

rate, loop_us, proc_us = asyncio.run(main())
print(json.dumps({"file": monque_engine.__file__, "rate": rate, "loop_us": loop_us, "proc_us": proc_us}))
"""
)


def measure(src: str, jobs: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, src, str(jobs)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if src and not result["file"].startswith(src):
        raise RuntimeError(f"child imported {result['file']}, not the tree under {src}")
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description="A/B of the single enqueue (awaited in turn) against another tree")
    ap.add_argument("--base", required=True, help="the other source tree (a directory holding monque_engine)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=5_000)
    args = ap.parse_args()
    loop_ratios: list[float] = []
    proc_ratios: list[float] = []
    for n in range(args.rounds):
        sides = [("base", args.base), ("this", "")]
        if n % 2:
            sides.reverse()  # alternate who goes first
        got = {name: measure(src, args.jobs) for name, src in sides}
        loop_ratios.append(got["this"]["loop_us"] / got["base"]["loop_us"])
        proc_ratios.append(got["this"]["proc_us"] / got["base"]["proc_us"])
        print(
            f"round {n + 1} (load {os.getloadavg()[0]:.2f}): "
            + "  ".join(
                f"{name} {got[name]['rate']:.0f}/s loop {got[name]['loop_us']:.1f} proc {got[name]['proc_us']:.1f} µs/job"
                for name in ("base", "this")
            )
            + f"  loop-cpu ×{loop_ratios[-1]:.3f} proc-cpu ×{proc_ratios[-1]:.3f}",
            flush=True,
        )
    print(
        f"single enqueue: median loop CPU per job this/base {statistics.median(loop_ratios):.3f}, "
        f"process CPU per job {statistics.median(proc_ratios):.3f} ({len(loop_ratios)} rounds)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

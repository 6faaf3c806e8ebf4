"""A/B cost of attempt recording (issue 12): drain of no-op jobs, and enqueue_many, for two
source trees of monque_engine, alternated in one run so machine noise hits both alike.

    python -m bench.attempts_ab --base /tmp/base_src --rounds 3 --jobs 20000

``--base`` is a directory holding another ``monque_engine`` package (e.g. ``git archive
<commit> monque_engine | tar -x -C /tmp/base_src``); the other side is this tree. Each
measurement runs in a fresh child process. Prints per-round rates and the median ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import asyncio, json, resource, sys, time
src = sys.argv[1]
if src:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__name__.lower()]
    sys.path.insert(0, src)
import monque_engine
from bench.monque_engine_bench import drain, enqueue_many
kind, jobs, conc = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    return usage.ru_utime + usage.ru_stime
cpu_start = cpu()
if kind == "drain":
    records = asyncio.run(drain("normal", jobs, conc))
else:
    records = asyncio.run(enqueue_many("normal", jobs))
print(json.dumps({"file": monque_engine.__file__, "rate": records[0].value,
                  "cpu_us": (cpu() - cpu_start) / jobs * 1e6}))
"""


def measure(src: str, kind: str, jobs: int, concurrency: int) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, src, kind, str(jobs), str(concurrency)],
        capture_output=True,
        text=True,
        check=True,
        cwd=os.getcwd(),
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if src and not result["file"].startswith(src):
        raise RuntimeError(f"child imported {result['file']}, not the tree under {src}")
    return float(result["rate"]), float(result["cpu_us"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--kinds", default="drain,enqueue")
    args = ap.parse_args()
    for kind in args.kinds.split(","):
        ratios, cpu_ratios = [], []
        for n in range(args.rounds):
            sides = [("base", args.base), ("this", "")]
            if n % 2:
                sides.reverse()  # alternate who goes first
            got = {name: measure(src, kind, args.jobs, args.concurrency) for name, src in sides}
            ratios.append(got["this"][0] / got["base"][0])
            cpu_ratios.append(got["this"][1] / got["base"][1])
            print(
                f"{kind} round {n + 1}: base {got['base'][0]:.0f}/s {got['base'][1]:.1f} cpu-us/job  "
                f"this {got['this'][0]:.0f}/s {got['this'][1]:.1f} cpu-us/job  rate ratio {ratios[-1]:.3f}  "
                f"cpu ratio {cpu_ratios[-1]:.3f}",
                flush=True,
            )
        print(
            f"{kind}: median rate ratio this/base = {statistics.median(ratios):.3f}, median CPU-per-job ratio "
            f"{statistics.median(cpu_ratios):.3f} over {len(ratios)} rounds (CPU includes the backlog's enqueue)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

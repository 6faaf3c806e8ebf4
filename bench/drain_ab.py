"""A/B of the drain (issue 14): two source trees of monque_engine, alternated in one run,
optionally with huey like-for-like in the same rounds, so machine noise hits all alike.

    python -m bench.drain_ab --base /tmp/base_src --rounds 4 --jobs 20000 --concurrency 5,64 --huey

``--base`` is a directory holding another ``monque_engine`` package (``git archive <commit>
monque_engine | tar -x -C /tmp/base_src``); the other side is this tree. Each measurement
is a fresh child process draining a backlog of no-op ``async def`` jobs (built with
``enqueue_many`` before the clock starts). Besides the rate it reports the CPU time of the
event-loop thread per job (``time.thread_time`` read on the loop at start and at the last
``job:complete``) and of the whole process: on a shared machine wall time moves by ±30 %,
CPU per job much less. ``--huey`` adds huey like-for-like (WAL + synchronous=NORMAL, the
better of 1 and 4 threads) to every round and prints each side's ratio against it.

    python -m bench.drain_ab --metrics-ab --rounds 6 --concurrency 5,64

``--metrics-ab`` compares this tree with itself instead: "base" drains without metrics,
"this" with ``monque.metrics()`` attached and scraped from another thread every 0.5 s
(``--scrape-interval``; Prometheus's usual is 15 s), the gauges' read included, as a worker
under ``--metrics`` is. Issue 29: at most 3 % slower.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from .common import AB_CHILD_PRELUDE, parse_records

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = (
    AB_CHILD_PRELUDE
    + r"""
jobs, conc = int(sys.argv[2]), int(sys.argv[3])
with_metrics = len(sys.argv) > 4 and sys.argv[4] == "metrics"
scrape_every = float(sys.argv[5]) if len(sys.argv) > 5 else 0.5

async def noop(_job):
    return None

async def main():
    with tempfile.TemporaryDirectory(prefix="drain-ab-") as d:
        m = Monque(f"sqlite:///{os.path.join(d, 'jobs.db')}", worker_concurrency=conc)
        await m.initialize()
        for start in range(0, jobs, 1000):
            await m.enqueue_many([{"name": "noop", "data": {"i": i}} for i in range(start, min(jobs, start + 1000))])
        m.register("noop", noop, concurrency=conc)
        done = asyncio.Event()
        seen = [0, 0.0, 0.0]
        def complete(_event):
            seen[0] += 1
            if seen[0] == jobs:
                seen[1] = time.perf_counter()
                seen[2] = time.thread_time()
                done.set()
        m.on("job:complete", complete)
        scrapes = []
        if with_metrics:
            import threading
            from prometheus_client import CollectorRegistry, generate_latest
            registry = CollectorRegistry()
            registry.register(m.metrics())
            stop_scraping = threading.Event()
            def scraper():
                while not stop_scraping.wait(scrape_every):
                    scrapes.append(len(generate_latest(registry)))
            scraping = threading.Thread(target=scraper, daemon=True)
            scraping.start()
        t0, c0, p0 = time.perf_counter(), time.thread_time(), cpu()
        await m.start()
        await asyncio.wait_for(done.wait(), 300)
        p1 = cpu()
        if with_metrics:
            stop_scraping.set()
            await asyncio.to_thread(scraping.join)
        stats = await m.store.stats("noop")
        await m.stop()
        await m.close()
        if stats.completed != jobs:
            raise SystemExit(f"only {stats.completed} of {jobs} completed")
        return jobs / (seen[1] - t0), (seen[2] - c0) / jobs * 1e6, (p1 - p0) / jobs * 1e6, len(scrapes)

rate, loop_us, proc_us, scrapes = asyncio.run(main())
print(json.dumps({"file": monque_engine.__file__, "rate": rate, "loop_us": loop_us, "proc_us": proc_us, "scrapes": scrapes}))
"""
)


def measure(
    src: str, jobs: int, concurrency: int, metrics: bool = False, scrape_every: float = 0.5
) -> dict[str, float]:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            src,
            str(jobs),
            str(concurrency),
            "metrics" if metrics else "plain",
            str(scrape_every),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if src and not result["file"].startswith(src):
        raise RuntimeError(f"child imported {result['file']}, not the tree under {src}")
    return result


def huey(jobs: int) -> float:
    """huey like-for-like, the better of 1 and 4 consumer threads (as bench.run reports it)."""
    best = 0.0
    for unit in ("huey-lfl-w1", "huey-lfl-w4"):
        out = subprocess.run(
            [sys.executable, "-m", "bench.run", "--child", unit, "--jobs", str(jobs)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        for record in parse_records(out.stdout):
            if "drain" in record.key:
                best = max(best, record.value)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", help="the other source tree (not with --metrics-ab)")
    ap.add_argument("--metrics-ab", action="store_true", help="this tree without (base) and with (this) metrics")
    ap.add_argument("--scrape-interval", type=float, default=0.5, help="with --metrics-ab: seconds between scrapes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("-c", "--concurrency", default="64", help="comma-separated, e.g. 5,64")
    ap.add_argument("--huey", action="store_true", help="also run huey like-for-like in every round")
    args = ap.parse_args()
    if bool(args.base) == args.metrics_ab:
        ap.error("give --base DIR or --metrics-ab (one of them)")
    for conc in [int(c) for c in args.concurrency.split(",")]:
        ratios: list[float] = []
        loop_ratios: list[float] = []
        vs_huey: dict[str, list[float]] = {"base": [], "this": []}
        runs: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
        for n in range(args.rounds):
            sides = [("base", args.base or ""), ("this", "")]
            if n % 2:
                sides.reverse()  # alternate who goes first
            got = {
                name: measure(src, args.jobs, conc, args.metrics_ab and name == "this", args.scrape_interval)
                for name, src in sides
            }
            for name in got:
                runs[name].append(got[name])
            line = f"c{conc} round {n + 1} (load {os.getloadavg()[0]:.2f}): " + "  ".join(
                f"{name} {got[name]['rate']:.0f}/s loop {got[name]['loop_us']:.1f} proc {got[name]['proc_us']:.1f} µs/job"
                for name in ("base", "this")
            )
            ratios.append(got["this"]["rate"] / got["base"]["rate"])
            loop_ratios.append(got["this"]["loop_us"] / got["base"]["loop_us"])
            line += f"  rate ×{ratios[-1]:.3f} loop-cpu ×{loop_ratios[-1]:.3f}"
            if args.huey:
                rate = huey(args.jobs)
                for name in ("base", "this"):
                    vs_huey[name].append(got[name]["rate"] / rate)
                line += f"  huey {rate:.0f}/s: base {vs_huey['base'][-1]:.2f}× this {vs_huey['this'][-1]:.2f}×"
            print(line, flush=True)
        summary = (
            f"c{conc}: median rate ratio this/base {statistics.median(ratios):.3f}, "
            f"loop CPU per job {statistics.median(loop_ratios):.3f} ({len(ratios)} rounds); "
            + "; ".join(
                f"{name} rate median {statistics.median(r['rate'] for r in runs[name]):.0f}/s "
                f"best {max(r['rate'] for r in runs[name]):.0f}/s, loop CPU min "
                f"{min(r['loop_us'] for r in runs[name]):.1f} µs/job"
                for name in ("base", "this")
            )
        )
        if args.huey:
            summary += (
                f"; vs huey median base {statistics.median(vs_huey['base']):.2f}×, "
                f"this {statistics.median(vs_huey['this']):.2f}×"
            )
        print(summary, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

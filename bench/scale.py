"""Scale benchmark (issue 26): the console and the engine on stores of 100k, 1M and 10M jobs.

    python -m bench.scale [--sizes 100k,1m,10m] [--cache /work/scale-cache] [--repeats 3]
                          [--skip-console] [--skip-reads] [--skip-writes] [--doc docs/benchmarks.md]
                          [--live [--live-seconds 120] [--live-key-repeats 40]]
                          [--purge [--purge-modes quiet,busy]]

For each size: build (or take from the cache) a store with the mix of issue 26
(``scale_build``), copy it, then measure on the copy:

* the console (``scale_console``, one fresh process per key, ``--repeats`` times each):
  launch → first rows, launch → tab counts, and keys ``5``, ``e``, ``w``, ``W``;
* the engine's reads (``scale_reads``, one fresh process per repeat);
* long writes while a second worker process completes ~100 jobs/s (``scale_writes``, once);
* with ``--live``, the console beside a draining worker (``scale_live``: the counts' age and
  key p95 at 1,000 jobs/s, the console's CPU at 5,000 jobs/s; needs tmux). The skip flags
  leave ``--live`` alone, so ``--live --skip-console --skip-reads --skip-writes`` runs only it;
* with ``--purge``, a retention purge of 80 % of the completed jobs beside a worker of
  scheduled work, on a quiet machine and with two CPU-bound processes beside it
  (``scale_purge``: the worker's longest gap between completions; ~2-4 min per size and
  mode). The skip flags leave it alone too:
  ``--purge --sizes 1m --skip-console --skip-reads --skip-writes`` runs only it.

Every figure is the median of its runs, and is printed with its ratio to the smallest
size's figure, against the goals of issue 26 (stated at 10M jobs: judged at the largest size
measured, which the table says). The tables are printed and written into ``--doc`` between
its ``scale`` markers (the live goals between its ``scale-live`` markers, the purge beside
scheduled work between its ``scale-purge`` markers; a block is only
rewritten by a run that measured it), with the commit, the command and the machine's load average.
Not part of ``make test``: ``make bench-scale``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sqlite3
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import scale_live, scale_purge, scale_writes
from .scale_build import build, upgrade_copy, working_copy
from .scale_console import KEYS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEGIN, END = "<!-- scale:begin -->", "<!-- scale:end -->"
CONSOLE_ROWS = (
    ("first_rows", "launch → first rows"),
    ("tab_counts", "launch → tab counts"),
    ("key 5", "key `5` → failed rows"),
    ("key e", "key `e` → error groups"),
    ("key w", "key `w` → Queues view (counts)"),
    ("key W", "key `W` → Workers view"),
)


@dataclass
class SizeResult:
    size: int
    build: dict[str, object]
    console: dict[str, list[float]] = field(default_factory=dict)
    reads: dict[str, list[float]] = field(default_factory=dict)
    writes: list[scale_writes.WriteResult] = field(default_factory=list)
    live: scale_live.LiveResult | None = None
    purge: list[scale_purge.PurgeResult] = field(default_factory=list)


def parse_size(text: str) -> int:
    text = text.strip().lower().replace("_", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    number = text[:-1] if scale != 1 else text
    try:
        return int(float(number) * scale)
    except ValueError:
        raise SystemExit(f"--sizes: {text!r} is not a size; use e.g. 100k, 1m, 10m") from None


def label(size: int) -> str:
    if size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    return f"{size // 1_000}k" if size % 1_000 == 0 else str(size)


def _child(module: str, *args: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    if proc.returncode != 0:
        tail = " ".join(proc.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"{module} {' '.join(args)} failed: {tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_size(size: int, args: argparse.Namespace) -> SizeResult:
    started = time.perf_counter()
    print(f"== {label(size)} jobs: building or reading the cache", flush=True)
    source, facts = build(Path(args.cache), size, say=lambda text: print(text, flush=True))
    print(f"   ready in {time.perf_counter() - started:.1f} s: {facts}", flush=True)
    result = SizeResult(size, facts)
    if args.live:
        result.live = scale_live.measure(
            size, source, Path(args.cache) / "work", args.live_seconds, args.live_key_repeats
        )
    if args.purge:
        modes = tuple(m.strip() for m in args.purge_modes.split(",") if m.strip())
        result.purge = scale_purge.measure(
            size, source, Path(args.cache) / "work", facts, modes, say=lambda text: print(text, flush=True)
        )
    if args.skip_console and args.skip_reads and args.skip_writes:
        return result
    path = working_copy(source, Path(args.cache) / "work", f"work-{size}")
    url = f"sqlite:///{path}"
    upgraded = upgrade_copy(path, facts)
    if upgraded is not None:
        result.build = {**facts, "upgrade_seconds": round(upgraded, 2)}
        print(f"   upgraded the copy from schema {facts['upgrade_from']} in {upgraded:.2f} s", flush=True)
    if not args.skip_console:
        for _ in range(args.repeats):
            for key in KEYS:
                for name, value in _child("bench.scale_console", url, key).items():
                    result.console.setdefault(name, []).append(value)
        print(f"   console: {_medians(result.console)}", flush=True)
    if not args.skip_reads:
        for _ in range(args.repeats):
            for name, value in _child("bench.scale_reads", url).items():
                result.reads.setdefault(name, []).append(value)
        print(f"   reads: {_medians(result.reads)}", flush=True)
    if not args.skip_writes:
        result.writes = scale_writes.measure(path, size, say=lambda text: print(text, flush=True))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return result


def _medians(values: dict[str, list[float]]) -> dict[str, float]:
    return {name: round(statistics.median(v), 1) for name, v in values.items()}


# -- report --------------------------------------------------------------------------------------------
def _cell(value: float | None, base: float | None) -> str:
    if value is None:
        return "—"
    text = f"{value:,.1f}" if value < 100 else f"{value:,.0f}"
    if base and base > 0 and value is not base:
        text += f" (×{value / base:.1f})"
    return text


def _verdict(ok: bool) -> str:
    return "**PASS**" if ok else "**FAIL**"


def read_table(results: list[SizeResult]) -> str:
    first, last = results[0], results[-1]
    header = ["measure (ms, median)", *(label(r.size) for r in results), f"goal (judged at {label(last.size)})", ""]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def row(name: str, source: str, key: str, goal: str, judge: object) -> None:
        values = [statistics.median(getattr(r, source)[key]) if key in getattr(r, source) else None for r in results]
        base = values[0]
        cells = [_cell(v, base) if i else _cell(v, None) for i, v in enumerate(values)]
        verdict = ""
        if values[-1] is not None and callable(judge):
            verdict = _verdict(judge(values[-1], base))
        lines.append("| " + " | ".join([name, *cells, goal, verdict]) + " |")

    within = lambda limit, times: lambda v, b: v <= limit and (b is None or len(results) == 1 or v <= times * b)  # noqa: E731
    if first.console:
        row("launch → first rows", "console", "first_rows", "≤ 300 ms", within(300, float("inf")))
        for key, name in CONSOLE_ROWS[1:]:
            row(name, "console", key, "≤ 300 ms and ≤ 2× the first size", within(300, 2))
    if first.reads:
        for key in sorted(first.reads):
            if key.startswith("count_jobs") or key == "get_queue_stats()":
                row(f"`{key}`", "reads", key, "≤ 10 ms", within(10, float("inf")))
        row("contains count, one statement", "reads", "contains-text count", "(for information)", None)
        row(
            "contains view in steps: first progress",
            "reads",
            "contains in steps: first progress",
            "≤ 300 ms",
            within(300, float("inf")),
        )
        row(
            "contains view in steps: longest wait between progress",
            "reads",
            "contains in steps: longest wait between progress",
            "≤ 300 ms",
            within(300, float("inf")),
        )
        row("contains view in steps: whole count", "reads", "contains in steps: whole count", "(for information)", None)
        row(
            "page of 50 failed, newest first",
            "reads",
            "page of 50 failed, newest first",
            "(an index: flat, ≤ 2×)",
            within(300, 2),
        )
    return "\n".join(lines)


def write_table(results: list[SizeResult]) -> str:
    header = [
        "size",
        "operation",
        "rows",
        "its duration",
        "µs/row",
        "worker: longest gap between completions (baseline)",
        "longest completion write",
        "latest heartbeat",
        "failed writes",
        "throughput vs baseline",
        "goal",
        "",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    largest = results[-1].size
    for result in results:
        for w in result.writes:
            if w.operation.startswith("bulk delete"):
                goal = "≤ 10 s, no heartbeat > 250 ms late"
                ok = w.seconds <= 10 and w.max_heartbeat_late_ms <= 250
            else:
                goal = "no completion / heartbeat waits > 250 ms, 0 failed writes, throughput ≥ 80 %"
                ok = (
                    w.max_completion_wait_ms <= 250
                    and w.max_heartbeat_late_ms <= 250
                    and w.failed_writes == 0
                    and w.throughput_ratio >= 0.8
                )
            verdict = _verdict(ok) if result.size == largest else ("pass" if ok else "fail")
            lines.append(
                "| "
                + " | ".join(
                    [
                        label(result.size),
                        w.operation,
                        f"{w.rows:,}",
                        f"{w.seconds:,.2f} s",
                        f"{w.per_row_us:,.1f}",
                        f"{w.max_completion_gap_ms:,.0f} ms ({w.baseline_max_gap_ms:,.0f} ms)",
                        f"{w.max_completion_wait_ms:,.0f} ms",
                        f"{w.max_heartbeat_late_ms:,.0f} ms late",
                        str(w.failed_writes),
                        f"{w.throughput_ratio:.0%} of {w.baseline_rate:.0f}/s",
                        goal,
                        verdict,
                    ]
                )
                + " |"
            )
    return "\n".join(lines)


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout

    head = git("rev-parse", "--short", "HEAD").strip()
    subject = git("log", "-1", "--format=%s").strip()
    subject = subject if len(subject) <= 60 else subject[:59] + "…"
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    dirty = [path for path in changed if path not in ("docs/benchmarks.md", "README.md", "CHANGELOG.md")]
    text = f"`{head}` ({subject})"
    return text + (f", plus uncommitted changes to {', '.join(dirty)}" if dirty else "")


def _heading(command: str, load_start: str, load_end: str, wall: float) -> list[str]:
    return [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on commit {_commit()}.",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}; "
        f"load average (1/5/15 min) {load_start} at start, {load_end} at end (the machine is shared); "
        f"wall {wall / 60:.0f} min.",
        "",
    ]


def measured_static(results: list[SizeResult]) -> bool:
    """Whether the run measured anything of the ``scale`` block (not only ``--live``)."""
    return any(r.console or r.reads or r.writes for r in results)


def render_live(results: list[SizeResult], command: str, load_start: str, load_end: str, wall: float) -> str:
    live = [r.live for r in results if r.live is not None]
    seconds = float(live[0].runs[scale_live.KEYS_RATE]["seconds"])
    return "\n".join([*_heading(command, load_start, load_end, wall), scale_live.render(live, label, seconds), ""])


def render_purge(results: list[SizeResult], command: str, load_start: str, load_end: str, wall: float) -> str:
    purges = [p for r in results for p in r.purge]
    return "\n".join([*_heading(command, load_start, load_end, wall), scale_purge.render(purges, label), ""])


def render(results: list[SizeResult], command: str, load_start: str, load_end: str, wall: float) -> str:
    parts = [
        *_heading(command, load_start, load_end, wall),
        "Stores: "
        + "; ".join(
            f"{label(r.size)}: {r.build.get('file_bytes', 0) / 1e6:,.0f} MB, built in "  # type: ignore[operator]
            f"{r.build.get('insert_seconds')} s, first open through `Monque` {r.build.get('first_open_seconds')} s, "
            f"engine counts {'agree' if r.build.get('engine_counts_agree') else '**disagree**'} with COUNT(*)"
            + (
                f", upgraded from schema {r.build['upgrade_from']} on the copy's first open in "
                f"{r.build.get('upgrade_seconds')} s"
                if r.build.get("upgrade_from") is not None
                else ""
            )
            for r in results
        ),
        "",
    ]
    if results[0].console or results[0].reads:
        parts += ["### Reads", "", read_table(results), ""]
    if any(r.writes for r in results):
        parts += ["### Long writes beside a worker completing ~100 jobs/s", "", write_table(results), ""]
        errors = [f"- {label(r.size)}, {w.operation}: {e}" for r in results for w in r.writes for e in w.first_errors]
        if errors:
            parts += ["Failed writes of the worker (first of each operation):", "", *errors, ""]
    return "\n".join(parts)


def write_doc(doc: Path, text: str, begin: str = BEGIN, end: str = END) -> None:
    current = doc.read_text() if doc.exists() else ""
    if begin not in current or end not in current:
        raise SystemExit(f"{doc} has no {begin} … {end} block to replace; add one where the table goes")
    head, rest = current.split(begin, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(f"{head}{begin}\n{text}\n{end}{tail}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100k,1m,10m", help="comma-separated, smallest first (e.g. 100k,1m)")
    ap.add_argument("--cache", default="/work/scale-cache", help="where built stores are kept between runs")
    ap.add_argument("--repeats", type=int, default=3, help="fresh processes per console key and per read set")
    ap.add_argument("--skip-console", action="store_true")
    ap.add_argument("--skip-reads", action="store_true")
    ap.add_argument("--skip-writes", action="store_true")
    ap.add_argument(
        "--live",
        action="store_true",
        help="also soak the console beside a draining worker (1k and 5k jobs/s; needs tmux; ~10 min per size)",
    )
    ap.add_argument("--live-seconds", type=float, default=120.0, help="--live: seconds measured per soak")
    ap.add_argument("--live-key-repeats", type=int, default=40, help="--live: rounds of keys per soak")
    ap.add_argument(
        "--purge",
        action="store_true",
        help="also purge 80%% of the completed jobs beside a worker of scheduled work (100 due/s), "
        "quiet and busy (two CPU-bound processes beside it); ~2-4 min per size and mode",
    )
    ap.add_argument("--purge-modes", default="quiet,busy", help="--purge: machine modes, comma-separated (quiet, busy)")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "benchmarks.md"), help="markdown file to update ('' : none)")
    args = ap.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    bad_modes = {m.strip() for m in args.purge_modes.split(",")} - set(scale_purge.MODES)
    if bad_modes or not args.purge_modes.strip():
        raise SystemExit(f"--purge-modes: give quiet, busy or both (comma-separated), not {args.purge_modes!r}")
    if sizes != sorted(sizes) or not sizes:
        raise SystemExit("--sizes: give at least one size, smallest first (the first is the ratios' base)")
    load_start = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.perf_counter()
    results = [measure_size(size, args) for size in sizes]
    load_end = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    command = "python -m bench.scale " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    wall = time.perf_counter() - started
    blocks: list[tuple[str, str, str]] = []
    if measured_static(results):
        blocks.append((render(results, command.strip(), load_start, load_end, wall), BEGIN, END))
    if args.live:
        live = render_live(results, command.strip(), load_start, load_end, wall)
        blocks.append((live, scale_live.BEGIN, scale_live.END))
    if args.purge:
        purge = render_purge(results, command.strip(), load_start, load_end, wall)
        blocks.append((purge, scale_purge.BEGIN, scale_purge.END))
    for text, begin, end in blocks:
        print()
        print(text)
        if args.doc:
            write_doc(Path(args.doc), text, begin, end)
            print(f"(written to {args.doc}, {begin})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

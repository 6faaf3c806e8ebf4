"""The live goals of issue 26 on a big store: the console beside a worker that drains.

``python -m bench.scale --live`` runs, for each size, two soaks (``bench.tui_bench --soak``,
each a fresh process on a fresh copy of the cached store, deleted after): the real console
in tmux at 160x45, a worker (``monque-tui --worker``, 4 names, concurrency 32, 2 ms
handlers) and a producer adding jobs at the drain rate. At 1,000 jobs/s: the age of the
counts on screen and key p95. At 5,000 jobs/s: the console's CPU. Each soak measures all
three; the other rate's figures are shown for information.

The goals hold "while a worker drains" a rate: a run whose worker completed under 95 % of
it gives no verdict (a slow machine, or a worker that cannot keep up), and says so.
This module runs ``bench.tui_bench`` as a child and imports no console module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- scale-live:begin -->", "<!-- scale-live:end -->"
#: The drain rates of the goals: counts' age and keys at 1k/s, the console's CPU at 5k/s.
KEYS_RATE, CPU_RATE = 1_000, 5_000
#: Below this share of its rate the worker did not "drain N jobs/s": no verdict.
DRAINED_ENOUGH = 0.95
KEY_KINDS = ("tab switch", "detail open", "sort")


@dataclass
class LiveResult:
    size: int
    #: rate → the soak's figures (``tui_bench.soak``'s JSON)
    runs: dict[int, dict[str, Any]]


def measure(
    size: int,
    source: Path,
    work: Path,
    seconds: float,
    key_repeats: int,
    say: Callable[[str], None] = print,
) -> LiveResult:
    """Soak at each goal's rate on copies of ``source`` (made and removed in a directory of
    this run's own under ``work``, which other runs on the cache may share)."""
    work = work / f"live-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    result = LiveResult(size, {})
    for rate in (KEYS_RATE, CPU_RATE):
        out = work / f"live-{size}-{rate}.json"
        out.unlink(missing_ok=True)
        argv = [
            sys.executable,
            "-m",
            "bench.tui_bench",
            "--soak",
            "--store-from",
            str(source),
            "--dir",
            str(work),
            "--rate",
            str(rate),
            "--soak-seconds",
            str(seconds),
            "--key-repeats",
            str(key_repeats),
            "--paint-size",
            "0",
            "--json",
            str(out),
        ]
        say(f"   live soak at {rate:,} jobs/s: {' '.join(argv[1:])}")
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.run(argv, cwd=ROOT, env=env)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"the live soak at {rate:,} jobs/s failed (exit {proc.returncode}); its output is above")
        result.runs[rate] = json.loads(out.read_text())
        out.unlink()
    shutil.rmtree(work, ignore_errors=True)  # the keylog; the soak removed its copy of the store
    return result


# -- report --------------------------------------------------------------------------------------------
def _drained(run: dict[str, Any]) -> float:
    return float(run["drain_with_console"])


def _valid(run: dict[str, Any]) -> bool:
    return _drained(run) >= DRAINED_ENOUGH * int(run["rate"])


def _worst_key_p95(run: dict[str, Any]) -> float:
    return max(float(run["keys"][kind]["p95"]) for kind in KEY_KINDS if kind in run["keys"])


def _age(run: dict[str, Any]) -> str:
    age = run.get("counts_age")
    if not age:
        return "—"
    return f"max {age['max']:.2f} s, p95 {age['p95']:.2f} s"


def _keys(run: dict[str, Any]) -> str:
    p95 = " / ".join(f"{float(run['keys'][kind]['p95']):.0f}" for kind in KEY_KINDS if kind in run["keys"])
    return f"{p95} ms"


def _cpu(run: dict[str, Any]) -> str:
    return f"{float(run['console_cpu_pct']):.1f} %"


def _drain(run: dict[str, Any]) -> str:
    return f"{_drained(run):,.0f} / {float(run['produced_per_s']):,.0f}"


def table(results: list[LiveResult], label: Callable[[int], str]) -> str:
    """Goals as rows, sizes as columns; PASS / FAIL judged at the largest size."""
    last = results[-1]
    header = ["measure", *(label(r.size) for r in results), f"goal (judged at {label(last.size)})", ""]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def row(
        name: str,
        rate: int,
        cell: Callable[[dict[str, Any]], str],
        goal: str = "",
        ok: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        cells = [cell(r.runs[rate]) for r in results]
        verdict = ""
        if ok is not None:
            run = last.runs[rate]
            if not _valid(run):
                verdict = f"**NO VERDICT**: the worker drained {_drained(run):,.0f} jobs/s of {rate:,}"
            else:
                verdict = "**PASS**" if ok(run) else "**FAIL**"
        lines.append("| " + " | ".join([name, *cells, goal, verdict]) + " |")

    age = lambda run: run["counts_age"] is not None and float(run["counts_age"]["max"]) <= 2.0  # noqa: E731
    row("counts on screen: age, drain 1k/s", KEYS_RATE, _age, "never older than 2 s", age)
    row(
        "key p95 (tab / detail / sort), drain 1k/s",
        KEYS_RATE,
        _keys,
        "≤ 100 ms",
        lambda run: _worst_key_p95(run) <= 100,
    )
    row(
        "console CPU, drain 5k/s",
        CPU_RATE,
        _cpu,
        "≤ 10 % of a core",
        lambda run: float(run["console_cpu_pct"]) <= 10,
    )
    row("console CPU, drain 1k/s", KEYS_RATE, _cpu, "(for information)")
    row("counts on screen: age, drain 5k/s", CPU_RATE, _age, "(for information)")
    row("key p95 (tab / detail / sort), drain 5k/s", CPU_RATE, _keys, "(for information)")
    for rate in (KEYS_RATE, CPU_RATE):
        row(
            f"worker drained / producer added, jobs/s (asked {rate:,})", rate, _drain, f"≥ {DRAINED_ENOUGH:.0%} drained"
        )
    return "\n".join(lines)


def render(results: list[LiveResult], label: Callable[[int], str], seconds: float) -> str:
    loads = "; ".join(
        f"{label(r.size)} at {rate:,}/s: {' / '.join(f'{x:.2f}' for x in run['load_start'])} → "
        f"{' / '.join(f'{x:.2f}' for x in run['load_end'])}"
        for r in results
        for rate, run in r.runs.items()
    )
    return "\n".join(
        [
            f"### The console beside a draining worker ({seconds:.0f} s measured per soak, then the key rounds)",
            "",
            table(results, label),
            "",
            "Counts' age: how long before each look at the screen (every 0.1 s) the store had moved past the "
            "completed count the tabs show (max and p95 over the looks). Key p95 from the tmux screen. "
            f"Load average (1/5/15 min) at each soak's start → end: {loads}.",
        ]
    )

"""Launch to first rows of the console, and what its start-up imports (issue 40 item 7).

``python -m bench.console_launch URL [--runs N] [--peer SRC]``

Two measures, each in fresh processes:

* **imports**: CPU seconds (``time.process_time``) to import ``monque_tui.console.app``, and
  whether that imported ``bson`` / ``pymongo`` or any screen but the jobs table. A console on
  SQLite needs none of them at start-up.
* **launch**: the real command, ``monque-tui URL``, in tmux at 160×45 (a fresh process, a
  real terminal), from spawning it until the jobs table's first rows are on the pane; both
  the wall time and the console's own CPU time until then (``/proc/PID/stat``), since the
  machine is shared and wall time moves with its load (printed beside the figures).

``--peer SRC``: the same measures with ``PYTHONPATH=SRC`` (an older tree, e.g. ``git archive
main | tar -x -C /tmp/old``), reported as a ratio measured in the same run. Not a pass/fail
test: the figures go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

IMPORT_PROBE = (
    "import sys, time\n"
    "t = time.process_time()\n"
    "import monque_tui.console.app\n"
    "cpu = time.process_time() - t\n"
    "screens = sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('monque_tui.console.screens.'))\n"
    "print(__import__('json').dumps({'cpu': cpu, 'bson': 'bson' in sys.modules, "
    "'pymongo': 'pymongo' in sys.modules, 'screens': screens}))\n"
)
#: A row of the jobs table is on the pane: one of the status words in a table row.
ROW_WORDS = ("pending", "completed", "failed", "cancelled", "processing")
TICKS = os.sysconf("SC_CLK_TCK")


def _env(src: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    if src:
        env["PYTHONPATH"] = src
    return env


def imports(src: str | None, runs: int) -> dict[str, object]:
    cpus = []
    last: dict[str, object] = {}
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE], env=_env(src), capture_output=True, text=True, check=True, cwd="/"
        )
        last = json.loads(done.stdout)
        cpus.append(float(last["cpu"]))  # type: ignore[arg-type]
    return {"cpu_ms_min": min(cpus) * 1000, "cpu_ms_median": statistics.median(cpus) * 1000, **last}


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _console_pid(pane_pid: int) -> int:
    """The python process under the pane's shell (or the pane's own process)."""
    children = Path(f"/proc/{pane_pid}/task/{pane_pid}/children")
    kids = children.read_text().split() if children.exists() else []
    return int(kids[0]) if kids else pane_pid


def launch(url: str, src: str | None, runs: int) -> dict[str, float]:
    command = [sys.executable, "-m", "monque_tui", url]
    walls, cpus = [], []
    for n in range(runs):
        session = f"bench-launch-{os.getpid()}-{n}"
        env = _env(src)
        exports = " ".join(f"{k}={v!r}" for k, v in env.items() if k == "PYTHONPATH")
        shell = f"cd / && {exports} exec {' '.join(command)}" if exports else f"cd / && exec {' '.join(command)}"
        started = time.perf_counter()
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "45", shell], check=True, env=env
        )
        try:
            pane_pid = int(
                subprocess.run(
                    ["tmux", "display-message", "-p", "-t", session, "#{pane_pid}"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            while True:
                pane = subprocess.run(
                    ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True, check=True
                ).stdout
                rows = [line for line in pane.splitlines()[3:] if any(f" {w} " in line for w in ROW_WORDS)]
                if len(rows) >= 3:
                    walls.append(time.perf_counter() - started)
                    cpus.append(_cpu_seconds(_console_pid(pane_pid)))
                    break
                if time.perf_counter() - started > 60:
                    raise TimeoutError(f"no rows after 60 s:\n{pane}")
                time.sleep(0.005)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], check=False, capture_output=True)
    return {
        "wall_ms_min": min(walls) * 1000,
        "wall_ms_median": statistics.median(walls) * 1000,
        "cpu_ms_min": min(cpus) * 1000,
        "cpu_ms_median": statistics.median(cpus) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the store (a 1M-job SQLite file for the issue's goal; it is opened writable)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peer", default=None, help="an older source tree to compare with (PYTHONPATH)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is needed for the launch measure")
    load = os.getloadavg()[0]
    report: dict[str, object] = {"load_1m": round(load, 2), "cores": os.cpu_count()}
    report["imports"] = imports(None, args.runs)
    report["launch"] = launch(args.url, None, args.runs)
    if args.peer:
        report["peer_imports"] = imports(args.peer, args.runs)
        report["peer_launch"] = launch(args.url, args.peer, args.runs)
    report["load_1m_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

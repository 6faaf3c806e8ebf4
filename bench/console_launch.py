"""Launch to first rows of the console, and what its start-up imports (issue 40 item 7).

``python -m bench.console_launch URL [--runs N] [--peer SRC --peer-url URL2]``

Two measures, each in fresh processes:

* **imports**: CPU seconds (``time.process_time``) to import ``monque_tui.console.app``, and
  whether that imported ``bson`` / ``pymongo`` or any screen but the jobs table. A console on
  SQLite needs none of them at start-up.
* **launch**: the real command, ``monque-tui URL``, in tmux at 160×45 (a fresh process, a
  real terminal), from spawning it until the jobs table's first rows are on the pane; both
  the wall time and the console's own CPU time until then (``/proc/PID/stat``), since the
  machine is shared and wall time moves with its load (printed beside the figures).

Both trees are byte-compiled first (``compileall``), as an installed package is: with
``PYTHONDONTWRITEBYTECODE`` set (it is, on the machine these figures come from) or a tree
nobody imported yet, every launch compiled the ~150 modules of ``monque_tui`` and
``monque_engine`` from source again, 150-250 ms of CPU that no installed console pays.

``--phases N``: N more launches of each subject under ``bench/launch_phases.py``, which
times each phase (imports, the store opened, the first page, the first frame, the frame
with the first rows) from inside the process.

``--floor``: ``bench/textual_floor.py`` launched the same way, taking turns with the console:
a bare Textual app (``Header``, one ``DataTable`` of the same first page read with plain
``sqlite3``, ``Footer``), the framework's own launch on this machine, so the console's figure
reads against what no Textual app here can beat.

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


def compile_tree(src: str | None) -> None:
    """Byte-compile the packages a subject imports (its ``__pycache__``), as ``pip install`` does."""
    root = Path(src) if src else Path(__file__).resolve().parents[1]
    for package in ("monque_engine", "monque_tui"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / package)], check=True, capture_output=True)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _tmux(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    """tmux on a server of this bench's own (``-L``, no config file): a shared server keeps
    the environment it was started with, so a session on it could run another tree's code.
    Each measure has a server of its own (``_server``): a new session on one being killed
    raced its exit ("server exited unexpectedly")."""
    return subprocess.run(["tmux", "-L", _server[0], "-f", "/dev/null", *args], text=True, **kw)  # type: ignore[call-overload,no-any-return]


SOCKET = f"monque-bench-launch-{os.getpid()}"
_server = [SOCKET]


#: ``--floor``: the framework's floor, a bare Textual app showing the same first page (its source
#: tree is this marker instead of a path).
FLOOR = "<floor>"
FLOOR_APP = Path(__file__).with_name("textual_floor.py")


def _launch_once(url: str, src: str | None, session: str) -> tuple[float, float]:
    """Spawn the console in a fresh tmux session; (wall, its CPU) once its first rows are on the pane."""
    # The environment is given in the command itself: only PYTHONPATH (the peer tree, or none).
    path = f"PYTHONPATH={src}" if src and src != FLOOR else "-u PYTHONPATH"
    program = str(FLOOR_APP) if src == FLOOR else "-m monque_tui"
    shell = f"cd / && exec env {path} {sys.executable} {program} {url}"
    started = time.perf_counter()
    _tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "45", shell, check=True)
    try:
        pane_pid = int(_tmux("display-message", "-p", "-t", session, "#{pane_pid}", capture_output=True).stdout)
        while True:
            pane = _tmux("capture-pane", "-p", "-t", session, capture_output=True, check=True).stdout
            rows = [line for line in pane.splitlines()[3:] if any(f" {w} " in line for w in ROW_WORDS)]
            if len(rows) >= 3:
                return time.perf_counter() - started, _cpu_seconds(pane_pid)
            if time.perf_counter() - started > 60:
                raise TimeoutError(f"no rows after 60 s:\n{pane}")
            time.sleep(0.005)
    finally:
        _tmux("kill-session", "-t", session, capture_output=True)


def launch(subjects: list[tuple[str, str | None]], runs: int) -> list[dict[str, float]]:
    """Each subject (url, source tree) launched ``runs`` times, the subjects taking turns run
    by run: on a shared machine the load drifts, and a drift then falls on both alike."""
    walls: list[list[float]] = [[] for _ in subjects]
    cpus: list[list[float]] = [[] for _ in subjects]
    # A session that outlives the measured ones: tmux ends its server with the last session,
    # and the next run's new-session raced that exit ("server exited unexpectedly").
    _tmux("new-session", "-d", "-s", "keep", "sleep 3600", check=True)
    try:
        for n in range(runs):
            for index, (url, src) in enumerate(subjects):
                wall, cpu = _launch_once(url, src, f"launch-{n}-{index}")
                walls[index].append(wall)
                cpus[index].append(cpu)
    finally:
        _tmux("kill-server", capture_output=True)  # this bench's own server only
    return [
        {
            "wall_ms_min": min(wall) * 1000,
            "wall_ms_median": statistics.median(wall) * 1000,
            "cpu_ms_min": min(cpu) * 1000,
            "cpu_ms_median": statistics.median(cpu) * 1000,
            # Per run against the first subject's run beside it (the pairs share the moment's load).
            "wall_ratio_median": statistics.median(w / w0 for w, w0 in zip(wall, walls[0], strict=True)),
            "cpu_ratio_median": statistics.median(c / c0 for c, c0 in zip(cpu, cpus[0], strict=True)),
        }
        for wall, cpu in zip(walls, cpus, strict=True)
    ]


PHASES = ("started", "imported", "app_built", "opened", "mounted", "first_page", "first_frame", "rows_frame", "cpu")


def _phases_once(url: str, src: str | None, session: str, out: Path) -> dict[str, float]:
    """One launch under ``bench/launch_phases.py``: its marks (seconds) once the first rows are out."""
    out.unlink(missing_ok=True)
    path = f"PYTHONPATH={src}" if src else "-u PYTHONPATH"
    script = Path(__file__).with_name("launch_phases.py")
    shell = f"cd / && exec env {path} MONQUE_BENCH_PHASES={out} {sys.executable} {script} {url}"
    started = time.perf_counter()
    _tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "45", shell, check=True)
    try:
        while not out.exists() or not out.stat().st_size:
            if time.perf_counter() - started > 60:
                raise TimeoutError("no phases after 60 s")
            time.sleep(0.01)
        time.sleep(0.01)  # written in one call; let it land whole
        return {key: float(value) for key, value in json.loads(out.read_text()).items()}
    finally:
        _tmux("kill-session", "-t", session, capture_output=True)


def phases(subjects: list[tuple[str, str | None]], runs: int) -> list[dict[str, dict[str, float]]]:
    """Where the time goes, per subject: the median and least of each mark (ms since the
    script's first line; ``started``: the interpreter's own start before it, ``cpu``: the
    process's CPU by the rows' frame), the subjects taking turns run by run."""
    found: list[list[dict[str, float]]] = [[] for _ in subjects]
    out = Path(f"/tmp/monque-bench-phases-{os.getpid()}.json")
    _server[0] = f"{SOCKET}-phases"
    _tmux("new-session", "-d", "-s", "keep", "sleep 3600", check=True)
    try:
        for n in range(runs):
            for index, (url, src) in enumerate(subjects):
                found[index].append(_phases_once(url, src, f"phases-{n}-{index}", out))
    finally:
        _tmux("kill-server", capture_output=True)
        out.unlink(missing_ok=True)
    return [
        {
            key: {
                "median_ms": statistics.median(run[key] for run in runs_ if key in run) * 1000,
                "min_ms": min(run[key] for run in runs_ if key in run) * 1000,
            }
            for key in PHASES
            if any(key in run for run in runs_)
        }
        for runs_ in found
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the store (a 1M-job SQLite file for the issue's goal; it is opened writable)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peer", default=None, help="an older source tree to compare with (PYTHONPATH)")
    parser.add_argument(
        "--peer-url",
        default=None,
        help="the peer's copy of the store (a tree of another schema migrates what it opens)",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also launch bench/textual_floor.py (a bare Textual app: the same first page in one DataTable) "
        "the same way, taking turns with the console: what the framework alone takes on this machine",
    )
    parser.add_argument(
        "--phases",
        type=int,
        default=0,
        metavar="N",
        help="also N launches each under bench/launch_phases.py: the time of each phase of the start",
    )
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is needed for the launch measure")
    load = os.getloadavg()[0]
    report: dict[str, object] = {"load_1m": round(load, 2), "cores": os.cpu_count()}
    for src in (None, args.peer) if args.peer else (None,):
        compile_tree(src)
    report["imports"] = imports(None, args.runs)
    if args.peer:
        report["peer_imports"] = imports(args.peer, args.runs)
    subjects: list[tuple[str, str | None]] = [(args.url, None)]
    if args.peer:
        subjects.append((args.peer_url or args.url, args.peer))
    if args.floor:
        subjects.append((args.url, FLOOR))
    results = launch(subjects, args.runs)
    report["launch"] = results[0]
    if args.peer:
        report["peer_launch"] = results[1]  # its ratios: peer / this tree, run by run
    if args.floor:
        report["floor_launch"] = results[-1]  # its ratios: the floor / this tree, run by run
    if args.phases:
        timed = phases(subjects[:2] if args.peer else subjects[:1], args.phases)
        report["phases"] = timed[0]
        if args.peer:
            report["peer_phases"] = timed[1]
    report["load_1m_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

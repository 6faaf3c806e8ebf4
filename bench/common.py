"""Helpers shared by the benchmark subjects: temp directories, timing, records, percentiles."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

RESULT_MARKER = "@@BENCH_RESULT@@ "


@dataclass
class Record:
    """One measured figure."""

    key: str  # stable id, e.g. "ours.drain.normal"
    subject: str  # "raw sqlite3", "huey SqliteHuey", "monque_engine"
    measure: str  # human description
    durability: str  # e.g. "WAL, synchronous=NORMAL"
    value: float
    unit: str  # "jobs/s" or "ms"
    settings: str = ""
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


DURABILITY_LABEL = {
    0: "WAL, synchronous=OFF",
    1: "WAL, synchronous=NORMAL",
    2: "WAL, synchronous=FULL",
    3: "WAL, synchronous=EXTRA",
}


def durability_label(synchronous: int | str, journal: str = "wal") -> str:
    if isinstance(synchronous, str):
        synchronous = {"off": 0, "normal": 1, "full": 2, "extra": 3}[synchronous.lower()]
    label = DURABILITY_LABEL.get(int(synchronous), f"synchronous={synchronous}")
    if journal.lower() != "wal":
        label = label.replace("WAL", journal.upper())
    return label


@contextlib.contextmanager
def fresh_dir(prefix: str) -> Iterator[str]:
    """A fresh temp directory for one subject's DB file, removed afterwards."""
    path = tempfile.mkdtemp(prefix=f"monque-bench-{prefix}-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def emit_records(records: list[Record]) -> None:
    """Child → parent: one marker line with the JSON records on stdout."""
    sys.stdout.write(RESULT_MARKER + json.dumps([asdict(r) for r in records]) + "\n")
    sys.stdout.flush()


def parse_records(stdout: str) -> list[Record]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return [Record(**item) for item in json.loads(line[len(RESULT_MARKER) :])]
    raise ValueError("no result line in child output")


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (pct in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-pct * len(ordered) // 100))))
    return ordered[rank - 1]


def machine_facts() -> dict[str, str]:
    facts = {
        "cpu_count": str(os.cpu_count()),
        "python": platform.python_version() + f" ({platform.python_implementation()})",
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
    }
    try:
        facts["loadavg (1/5/15 min) at start"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        pass
    try:
        import huey

        facts["huey"] = huey.__version__
    except Exception:  # noqa: BLE001
        facts["huey"] = "not installed"
    try:
        import monque_engine

        facts["monque_engine"] = monque_engine.__version__
    except Exception:  # noqa: BLE001
        facts["monque_engine"] = "not importable"
    return facts


#: The start of an A/B child script (``drain_ab``, ``enqueue_ab``): import ``monque_engine``
#: from the tree in argv[1] (the other tree, past this checkout's editable install) or from
#: here, and ``cpu()``, the CPU seconds of every thread of the process.
AB_CHILD_PRELUDE = r"""
import asyncio, json, os, resource, sys, tempfile, time
src = sys.argv[1]
if src:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__name__.lower()]
    sys.path.insert(0, src)
import monque_engine
from monque_engine import Monque

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    return usage.ru_utime + usage.ru_stime
"""

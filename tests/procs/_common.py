"""Helpers shared by the process scripts: JSON-line output and durable run records."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def emit(event: str, **fields: Any) -> None:
    """Print one JSON line on stdout and flush it (the test reads these)."""
    record = {"event": event, "t": time.time(), "pid": os.getpid(), **fields}
    sys.stdout.write(json.dumps(record, default=str) + "\n")
    sys.stdout.flush()


def sqlite_url(path: str) -> str:
    return "sqlite:///" + os.path.abspath(path)


class RunLog:
    """An append-only, per-process record of handler executions, independent of the queue.

    Each record is one ``write`` on an ``O_APPEND`` descriptor followed by ``fsync``, so it
    survives the process being SIGKILLed right after (and the machine losing power).
    Lines: ``<kind> <job id> <instance>`` with kind ``start``, ``done``, ``cancelled`` or ``failed``.
    """

    def __init__(self, directory: str, instance: str) -> None:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in instance)
        self.path = Path(directory) / f"runs-{safe}.log"
        self.instance = instance
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(self, kind: str, job_id: str) -> None:
        os.write(self._fd, f"{kind} {job_id} {self.instance}\n".encode())
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def read_run_logs(directory: str | Path) -> list[tuple[str, str, str]]:
    """Every ``(kind, job_id, instance)`` record in a directory of run logs."""
    records: list[tuple[str, str, str]] = []
    for path in sorted(Path(directory).glob("runs-*.log")):
        for line in path.read_text().splitlines():
            kind, job_id, instance = line.split(" ", 2)
            records.append((kind, job_id, instance))
    return records

"""What ``bench.reliability`` and its scenario 6 (``bench.reliability_fuzz``) share: results,
the workspace and its processes, and the few store helpers both use.

It sits below both: ``reliability`` runs the fuzz scenario, and the fuzz scenario needs the
workspace and ``Result``; with these in ``reliability`` itself the two modules imported each
other (an import circle, issue 35; ``tests/test_import_cycles.py`` keeps it out).
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # the process scripts are imported as tests.procs.*
    sys.path.insert(0, str(REPO_ROOT))

from monque_engine import Monque  # noqa: E402
from tests.procs._common import sqlite_url  # noqa: E402
from tests.procs.harness import Launcher, Proc, StoreProbe  # noqa: E402

READY = 30.0  # process start-up on a loaded 2-core machine
CLI_APP = "tests.cli.apps.worker_app:setup"


# -- results ------------------------------------------------------------------------------------
@dataclass
class Result:
    scenario: str
    load: str
    faults: str
    jobs: int = 0
    lost: int = 0
    duplicated: int = 0
    recover_s: float | None = None
    notes: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    skipped: str | None = None
    seconds: float = 0.0

    def check(self, condition: object, message: str) -> bool:
        if not condition:
            self.violations.append(message)
        return bool(condition)

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        return "\n".join([f"{self.scenario}: {'ok' if self.ok else 'FAILED'}", *self.violations[:20]])


def table(results: list[Result]) -> str:
    lines = [
        "| scenario | load | faults injected | lost | duplicated | time to recover | checks | notes |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for r in results:
        if r.skipped:
            lines.append(f"| {r.scenario} | {r.load} | {r.faults} | – | – | – | skipped | {r.skipped} |")
            continue
        recover = "–" if r.recover_s is None else f"{r.recover_s:.2f} s"
        checks = "pass" if r.ok else f"**FAIL** ({len(r.violations)}): " + "; ".join(r.violations[:3])
        notes = "; ".join([*r.notes, f"{r.seconds:.0f} s"])
        lines.append(
            f"| {r.scenario} | {r.load} | {r.faults} | {r.lost} | {r.duplicated} | {recover} | "
            f"{checks} | {notes} |".replace("\n", " ")
        )
    return "\n".join(lines)


# -- workspace: one directory, one database, the processes on it ----------------------------------
class Workspace:
    def __init__(self, root: Path, db: Path | None = None) -> None:
        self.root = root
        self.db = db or root / "jobs.db"
        self.runs = root / "runs"
        self.runs.mkdir(parents=True, exist_ok=True)
        logs = root / "logs"
        logs.mkdir(exist_ok=True)
        self.launcher = Launcher(logs)
        self.probe = StoreProbe(self.db)
        self._count = Counter[str]()

    def label(self, base: str) -> str:
        self._count[base] += 1
        return f"{base}{self._count[base]}"

    def worker(self, instance: str, *, db: Path | None = None, prefix: list[str] | None = None, **options: Any) -> Proc:
        args: list[Any] = ["--db", db or self.db, "--instance", instance, "--runs-dir", self.runs]
        args += _flags(options)
        return self.launcher.start(instance, "worker", *args, prefix=prefix)

    def feeder(self, *, db: Path | None = None, prefix: list[str] | None = None, **options: Any) -> Proc:
        return self.launcher.start(
            self.label("feeder"), "feeder", "--db", db or self.db, *_flags(options), stdin=True, prefix=prefix
        )

    def cli_worker(self, url: str, *, prefix: list[str] | None = None) -> Proc:
        return self.launcher.start(
            self.label("cli"),
            "",
            "--worker",
            "--app",
            CLI_APP,
            url,
            command=[sys.executable, "-m", "monque_tui"],
            prefix=prefix,
        )

    def close(self) -> None:
        self.launcher.close_all()
        self.probe.close()


def _flags(options: dict[str, Any]) -> list[Any]:
    args: list[Any] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is not None and value is not False:
            args += [flag, value]
    return args


@contextmanager
def workspace(base: Path | None, name: str) -> Iterator[Workspace]:
    """A workspace under ``base`` (a test's tmp_path) or a fresh temp dir removed afterwards."""
    own = base is None
    root = Path(tempfile.mkdtemp(prefix=f"monque-rel-{name}-")) if base is None else base / name
    root.mkdir(parents=True, exist_ok=True)
    ws = Workspace(root)
    try:
        yield ws
    finally:
        ws.close()
        if own:
            shutil.rmtree(root, ignore_errors=True)


# -- helpers the scenarios share ------------------------------------------------------------------------
def enqueue_here(db: Path, items: list[dict[str, Any]], chunk: int = 500, url_query: str = "") -> list[str]:
    """Enqueue from this process (its own Monque on the file); returns the acknowledged ids."""

    async def go() -> list[str]:
        m = Monque(sqlite_url(str(db)) + (f"?{url_query}" if url_query else ""), recover_stale_jobs=False)
        await m.initialize()
        try:
            ids: list[str] = []
            for first in range(0, len(items), chunk):
                ids += [job.id for job in await m.enqueue_many(items[first : first + chunk])]
            return ids
        finally:
            await m.close()

    return asyncio.run(go())


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db, isolation_level=None, timeout=10)
    try:
        return "\n".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall())
    finally:
        conn.close()

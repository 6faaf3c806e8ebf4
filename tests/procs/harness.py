"""Test-side helpers for driving the process scripts: a child-process wrapper that collects
JSON lines, a launcher that always cleans up, and a cheap read-only probe of the store.

Every wait has a timeout and fails with the process's recent output and stderr, so a hung
child shows up as a readable assertion rather than a stuck test run.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from monque_engine import Monque

from ._common import sqlite_url

REPO_ROOT = Path(__file__).resolve().parents[2]
TABLE = "monque_jobs"

Line = dict[str, Any]


class Proc:
    """One child process running ``python -m tests.procs.<script>``."""

    def __init__(
        self,
        label: str,
        script: str,
        args: list[str],
        log_dir: Path,
        stdin: bool = False,
        prefix: list[str] | None = None,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
    ) -> None:
        """``prefix`` goes before the interpreter (e.g. ``setpriv ...`` to drop privileges);
        ``command`` replaces ``python -m tests.procs.<script>`` altogether (e.g. the CLI)."""
        self.label = label
        self.stderr_path = log_dir / f"{label}.stderr"
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in close()
        argv = command if command is not None else [sys.executable, "-m", f"tests.procs.{script}"]
        self.popen = subprocess.Popen(
            [*(prefix or []), *argv, *args],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )
        self.pid = self.popen.pid
        self.lines: list[Line] = []
        self._cond = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, name=f"read-{label}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for raw in self.popen.stdout:
            raw = raw.strip()
            if not raw:
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                line = {"event": "raw", "line": raw}
            with self._cond:
                self.lines.append(line)
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    # -- observing ----------------------------------------------------------------------------
    def events(self, event: str) -> list[Line]:
        with self._cond:
            return [line for line in self.lines if line.get("event") == event]

    def wait_for(
        self, event: str, timeout: float, where: Callable[[Line], bool] | None = None, count: int = 1
    ) -> list[Line]:
        """Wait until ``count`` lines of ``event`` (matching ``where``) were printed; return them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [ln for ln in self.lines if ln.get("event") == event and (where is None or where(ln))]
                if len(found) >= count:
                    return found
                remaining = deadline - time.monotonic()
                if self._eof or remaining <= 0:
                    break
                self._cond.wait(remaining)
        why = "exited" if self._eof else f"did not within {timeout:g} s"
        raise AssertionError(f"{self.label}: expected {count} {event!r} line(s); process {why}.\n{self.describe()}")

    def stderr_text(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    def describe(self) -> str:
        with self._cond:
            tail = self.lines[-15:]
        stderr = self.stderr_text()[-3000:]
        return (
            f"[{self.label} pid={self.pid} returncode={self.popen.poll()}]\n"
            f"last stdout lines: {json.dumps(tail, indent=None)}\nstderr tail:\n{stderr}"
        )

    # -- controlling ----------------------------------------------------------------------------
    def send_line(self, text: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(text + "\n")
        self.popen.stdin.flush()

    def signal(self, signum: int) -> None:
        self.popen.send_signal(signum)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def wait_exit(self, timeout: float) -> int:
        try:
            code = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.label} did not exit within {timeout:g} s\n{self.describe()}") from None
        self._reader.join(5)
        return code

    def finish(self, timeout: float) -> None:
        """Wait for a normal exit with status 0."""
        code = self.wait_exit(timeout)
        assert code == 0, f"{self.label} exited with {code}\n{self.describe()}"

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                pass

    def close(self) -> None:
        self.kill()
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._reader.join(5)
        self._stderr.close()


class Launcher:
    """Starts scripts and kills whatever is still running at teardown."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.procs: list[Proc] = []

    def start(
        self,
        label: str,
        script: str,
        *args: Any,
        stdin: bool = False,
        prefix: list[str] | None = None,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
    ) -> Proc:
        proc = Proc(
            label, script, [str(a) for a in args], self.log_dir, stdin=stdin, prefix=prefix, env=env, command=command
        )
        self.procs.append(proc)
        return proc

    def close_all(self) -> None:
        for proc in self.procs:
            if proc.alive():
                try:
                    proc.signal(signal.SIGKILL)
                except OSError:
                    pass
        for proc in self.procs:
            proc.close()


class StoreProbe:
    """Read-only queries on the jobs table from the test process (plain sqlite3, autocommit)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None

    def _c(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=10)
            conn.execute("PRAGMA query_only=1")
            self._conn = conn
        return self._conn

    def exists(self) -> bool:
        if not self.path.exists():
            return False
        row = self._c().execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (TABLE,)).fetchone()
        return row is not None

    def status_counts(self) -> Counter[str]:
        return Counter(dict(self._c().execute(f"SELECT status, count(*) FROM {TABLE} GROUP BY status").fetchall()))

    def statuses(self) -> dict[str, str]:
        return dict(self._c().execute(f"SELECT id, status FROM {TABLE}").fetchall())

    def job(self, job_id: str) -> dict[str, Any] | None:
        cursor = self._c().execute(f"SELECT * FROM {TABLE} WHERE id = ?", (job_id,))
        row = cursor.fetchone()
        if row is None:
            return None
        return dict(zip([d[0] for d in cursor.description], row, strict=True))

    def processing_by(self, owner: str) -> list[str]:
        rows = (
            self._c()
            .execute(f"SELECT id FROM {TABLE} WHERE status = 'processing' AND claimed_by = ? ORDER BY id", (owner,))
            .fetchall()
        )
        return [r[0] for r in rows]

    def count(self, where: str = "1", params: tuple[Any, ...] = ()) -> int:
        return int(self._c().execute(f"SELECT count(*) FROM {TABLE} WHERE {where}", params).fetchone()[0])

    def integrity(self) -> str:
        return "\n".join(str(r[0]) for r in self._c().execute("PRAGMA integrity_check").fetchall())

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def wait_until(
    predicate: Callable[[], Any],
    timeout: float,
    message: str,
    interval: float = 0.02,
    on_timeout: Callable[[], str] | None = None,
) -> Any:
    """Poll a cheap observable condition until it is truthy (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            extra = on_timeout() if on_timeout is not None else ""
            raise AssertionError(f"not met within {timeout:g} s: {message}\n{extra}")
        time.sleep(interval)


T = TypeVar("T")


class Operator:
    """A console-like Monque in the test process (never started, so it never registers as an
    instance), on one event loop kept across calls; a context manager that closes both."""

    def __init__(self, db: Path) -> None:
        self._runner = asyncio.Runner()
        self.m = Monque(sqlite_url(str(db)), recover_stale_jobs=False)
        self.run(self.m.initialize())

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coro)

    def close(self) -> None:
        try:
            self.run(self.m.close())
        finally:
            self._runner.close()

    def __enter__(self) -> Operator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

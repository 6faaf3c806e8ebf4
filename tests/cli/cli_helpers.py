"""Helpers (imported by the tests as ``cli_helpers``) for running ``monque-tui`` as a real process and watching what it does.

Tests synchronise on what can be observed (a log line, a job's stored state) with a
deadline, never on a fixed sleep; every process started here is killed at teardown.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from monque_engine import Job, Monque

CLI_DIR = Path(__file__).parent
DEFAULT_TIMEOUT = 20.0


class CliProcess:
    """A ``python -m monque_tui`` child whose stderr is collected line by line as it arrives."""

    def __init__(self, args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
        full_env.update(env or {})
        full_env.setdefault("PYTHONUNBUFFERED", "1")
        self.args = args
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "monque_tui", *args],
            cwd=str(cwd or CLI_DIR),
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self.stdout_lines: list[str] = []
        self._changed = threading.Condition()
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stderr, self.lines), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout_lines), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: Any, sink: list[str]) -> None:
        for line in stream:
            with self._changed:
                sink.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)

    def wait_for_line(self, pattern: str | Callable[[str], bool], timeout: float = DEFAULT_TIMEOUT) -> str:
        """Return the first stderr line matching ``pattern`` (a regex or a predicate)."""
        test = (lambda line: re.search(pattern, line) is not None) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        seen = 0
        with self._changed:
            while True:
                for line in self.lines[seen:]:
                    if test(line):
                        return line
                seen = len(self.lines)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no line matching {pattern!r} within {timeout} s; stderr:\n{self.stderr}")
                if self.proc.poll() is not None and not any(r.is_alive() for r in self._readers):
                    raise AssertionError(
                        f"process exited ({self.proc.returncode}) before a line matched "
                        f"{pattern!r}; stderr:\n{self.stderr}"
                    )
                self._changed.wait(min(remaining, 0.2))

    def wait_for_event(self, event: str, timeout: float = DEFAULT_TIMEOUT, **fields: Any) -> dict[str, Any]:
        """With --log-format json: the first object with this event (and these field values)."""

        def matches(line: str) -> bool:
            try:
                data = json.loads(line)
            except ValueError:
                return False
            return data.get("event") == event and all(data.get(k) == v for k, v in fields.items())

        return json.loads(self.wait_for_line(matches, timeout))

    def wait_exit(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"process still running after {timeout} s; stderr:\n{self.stderr}") from None
        for reader in self._readers:
            reader.join(5)
        return code

    def send(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


# -- store access from the test process --------------------------------------------------------------
def _run(url: str, action: Callable[[Monque], Any]) -> Any:
    async def go() -> Any:
        monque = Monque(url, recover_stale_jobs=False)
        await monque.initialize()
        try:
            return await action(monque)
        finally:
            await monque.close()

    return asyncio.run(go())


def enqueue(url: str, name: str, data: Any = None) -> str:
    return _run(url, lambda m: m.enqueue(name, data)).id  # type: ignore[no-any-return]


def get_job(url: str, job_id: str) -> Job:
    job = _run(url, lambda m: m.get_job(job_id))
    assert job is not None, f"job {job_id} vanished"
    return job  # type: ignore[no-any-return]


def jobs(url: str, name: str | None = None) -> list[Job]:
    return _run(url, lambda m: m.get_jobs(name=name, limit=1000))  # type: ignore[no-any-return]


def wait_until(condition: Callable[[], Any], timeout: float = DEFAULT_TIMEOUT, what: str = "condition") -> Any:
    """Poll an observable condition (store state) until it holds, or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def wait_for_status(url: str, job_id: str, status: str, timeout: float = DEFAULT_TIMEOUT) -> Job:
    return wait_until(
        lambda: (job := get_job(url, job_id)).status == status and job,
        timeout,  # type: ignore[no-any-return]
        f"job {job_id} to be {status}",
    )


#: A /metrics scrape: each sample's value keyed by (sample name, sorted labels).
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    """Every sample of the worker's /metrics endpoint on ``port``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }

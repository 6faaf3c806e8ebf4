"""A store file damaged under a running worker and producer stops both (issue 25, point 8).

The probe: random bytes written over the database file while processes used it, and five
further ``enqueue`` calls all succeeded. Now the producer's enqueues fail with a clear error
(the file is damaged; how to check it; restore a backup) from the first commit after the
damage, and the worker, which only idles, notices on its maintenance tick, stops with one
line and exits 3, as it does for a deleted or replaced file.

Real processes: ``monque-tui --worker`` and a producer (``apps/burst_producer.py``) that the
test asks for bursts of enqueues; the file is damaged with plain writes while both run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CLI_DIR, CliProcess, wait_until

from monque_engine import Monque

PAGE = 4096


class Producer:
    """``apps.burst_producer``: one burst of enqueues per request, one JSON answer each."""

    def __init__(self, url: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "apps.burst_producer", url],
            cwd=CLI_DIR,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: list[str] = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr or ()), daemon=True).start()

    def burst(self) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("burst\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the producer exited ({self.proc.poll()}): {''.join(self.stderr)}"
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def producers() -> Iterator[Callable[[str], Producer]]:
    started: list[Producer] = []

    def start(url: str) -> Producer:
        started.append(Producer(url))
        return started[-1]

    yield start
    for producer in started:
        producer.close()


async def _seed(url: str) -> None:
    """Jobs no handler takes, so the file has pages beyond the first (checkpointed at close)."""
    async with Monque(url, recover_stale_jobs=False) as monque:
        for start in range(0, 5000, 1000):
            await monque.enqueue_many(
                [{"name": "idle", "data": {"n": n, "pad": "x" * 200}} for n in range(start, start + 1000)]
            )


def _damaged_says_what_to_do(message: str, path: Path) -> None:
    assert f"{path} is damaged" in message, message
    assert "PRAGMA integrity_check" in message and "restore a backup" in message, message


def test_random_bytes_over_the_file_stop_the_producer_and_the_worker(
    spawn: Callable[..., CliProcess], producers: Callable[[str], Producer], tmp_path: Path
) -> None:
    path = tmp_path / "jobs.db"
    url = f"sqlite:///{path}"
    asyncio.run(_seed(url))
    worker = spawn("--worker", "--app", "apps.worker_app:setup", "--log-format", "json", url)
    worker.wait_for_event("worker:started")
    producer = producers(url)
    assert producer.burst() == {"ok": 40, "error": None}

    size = path.stat().st_size
    with open(path, "r+b") as file:  # as the probe did: random bytes over the first pages and the middle
        file.write(os.urandom(2 * PAGE))
        file.seek((size // 2) // PAGE * PAGE)
        file.write(os.urandom(8 * PAGE))

    failed = wait_until(lambda: (answer := producer.burst())["error"] and answer, what="an enqueue to fail")
    assert failed["error"]["type"] == "FileDamagedError", failed
    _damaged_says_what_to_do(failed["error"]["message"], path)
    for _ in range(5):  # every later call too, the inbox appends included
        answer = producer.burst()
        assert answer["ok"] == 0 and answer["error"]["type"] == "FileDamagedError", answer

    assert worker.wait_exit() == 3
    assert worker.wait_for_event("worker:store-lost")["reason"] == "store-damaged"
    errors = [line for line in worker.lines if line.startswith("{") and json.loads(line)["event"] == "job:error"]
    assert len(errors) == 1 and "FileDamagedError" in errors[0]
    last = worker.lines[-1]
    assert last.startswith("monque-tui: error:"), worker.stderr
    _damaged_says_what_to_do(last, path)
    assert not any("Traceback" in line for line in worker.lines)

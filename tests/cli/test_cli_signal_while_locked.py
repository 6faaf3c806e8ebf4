"""A command waiting for a store another process has locked stops at once on a signal
(issue 25, point 9).

The probe: with another process in a write transaction, ``monque-tui paused`` sat for 8.5 s
after SIGTERM (the store's close waited for its write thread, itself waiting out the busy
timeout for the lock). The close now ends that wait: the command says its one line and
exits 128 + the signal at once, and the store is as it was. The worker, which a first
SIGTERM stops gracefully, gives up an open that waits for the lock the same way (exit 0).

The lock is held by the test with plain ``sqlite3`` (``BEGIN IMMEDIATE``); the busy timeout
is set to 60 s, so only the signal can end the wait. The command is known to be waiting once
it has two connections to the file open (its write connection and its inline one, opened
just before the schema transaction that waits for the lock). The time bounds below are
liveness bounds: far above what stopping takes (~50 ms), far below the 10 s the close used
to wait for its write thread and the 60 s busy timeout.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest
from cli_helpers import CliProcess, wait_until

from monque_engine import Monque

#: Seconds a signalled command may take to exit (a liveness bound, see the module docstring).
PROMPTLY = 5.0


async def _seed(url: str) -> None:
    async with Monque(url, recover_stale_jobs=False) as monque:
        await monque.enqueue_many([{"name": "report", "data": {"n": n}} for n in range(50)])
        await monque.pause("report")


def _dump(path: Path) -> list[str]:
    """Every row of every table, as SQL: what "the store is untouched" compares."""
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        return list(conn.iterdump())


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    """A seeded store whose write lock this test holds: (URL, path, its rows before)."""
    path = tmp_path / "jobs.db"
    asyncio.run(_seed(f"sqlite:///{path}"))
    before = _dump(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield f"sqlite:///{path}?busy_timeout=60", path, before
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def _connections_to(pid: int, path: Path) -> int:
    target = str(path.resolve())
    count = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                count += os.readlink(f"/proc/{pid}/fd/{fd}") == target
            except OSError:
                continue
    except OSError:
        return 0
    return count


def _wait_until_waiting_for_the_lock(process: CliProcess, path: Path) -> None:
    wait_until(
        lambda: _connections_to(process.proc.pid, path) >= 2 or process.proc.poll() is not None,
        what="the command to open its write connections",
    )
    assert process.proc.poll() is None, f"exited before waiting for the lock: {process.stderr}"


COMMANDS = {
    "pause": ["pause", "email"],
    "resume": ["resume", "report"],
    "paused": ["paused"],
    "instances": ["instances"],
    "release-dead": ["release-dead", "worker-1", "--yes"],
    "health": ["health"],
    "export": ["export", "--output", "OUT"],
}


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see the command's open files")
@pytest.mark.parametrize(
    ("command", "sig", "word"),
    [(name, signal.SIGTERM, "SIGTERM") for name in COMMANDS]
    + [("paused", signal.SIGINT, "ctrl+c"), ("pause", signal.SIGINT, "ctrl+c"), ("export", signal.SIGHUP, "SIGHUP")],
)
def test_a_signal_ends_a_command_waiting_for_the_lock_at_once(
    spawn: Callable[..., CliProcess],
    locked: tuple[str, Path, list[str]],
    tmp_path: Path,
    command: str,
    sig: signal.Signals,
    word: str,
) -> None:
    url, path, before = locked
    output = tmp_path / "out.jsonl"
    args = [str(output) if arg == "OUT" else arg for arg in COMMANDS[command]]
    process = spawn(*args, url)
    _wait_until_waiting_for_the_lock(process, path)
    process.send(sig)
    signalled = time.monotonic()
    code = process.wait_exit(timeout=30)
    assert time.monotonic() - signalled < PROMPTLY, process.stderr
    assert code == 128 + sig, process.stderr
    line = f"monque-tui: error: stopped by {word} before {command} finished"
    if command == "export":
        line += f"; {output} was not written"
    assert process.lines == [line], process.stderr
    assert not output.exists()
    assert _dump(path) == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see the worker's open files")
def test_a_worker_stopped_while_its_store_is_locked_gives_up_the_open(
    spawn: Callable[..., CliProcess], locked: tuple[str, Path, list[str]]
) -> None:
    url, path, before = locked
    worker = spawn("--worker", "--app", "apps.worker_app:setup", "--log-format", "json", url)
    _wait_until_waiting_for_the_lock(worker, path)
    worker.send(signal.SIGTERM)
    signalled = time.monotonic()
    code = worker.wait_exit(timeout=30)
    assert time.monotonic() - signalled < PROMPTLY, worker.stderr
    assert code == 0, worker.stderr
    assert worker.wait_for_event("worker:stopped")["code"] == 0
    assert not any("worker:started" in line or "Traceback" in line for line in worker.lines)
    assert _dump(path) == before

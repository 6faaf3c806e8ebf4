"""A stop signal while the start-up ping waits for a MongoDB server that does not answer.

Before anything starts, every mode pings the store's server (``cli.urlcheck``), blocking the
main thread for up to ``--connect-timeout``. A ``kill`` then took SIGTERM's default action:
a worker waiting on a down server ended with exit 143 and not a word in its log, and Ctrl-C
gave 130 in silence. Now the ping stops at once with one line, the password masked, exit 0
for a mode (as a worker stopped before it started) and 128 + the signal for a command.

No server is needed: nothing listens on 127.0.0.1:1, so server selection retries until the
timeout. The test waits until PyMongo's monitor thread exists (the process is inside the
ping) by reading ``/proc``, then signals the real process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

URL = "mongodb://ops:s3cret@127.0.0.1:1/app"
APP = "async def noop(job):\n    return None\n\n\ndef setup(monque):\n    monque.register('noop', noop)\n"


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    (tmp_path / "stop_app.py").write_text(APP)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    return subprocess.Popen(
        [sys.executable, "-m", "monque_tui", *args, "--connect-timeout", "120"],
        cwd=tmp_path,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait_inside_ping(process: subprocess.Popen[str]) -> None:
    """Until the process has a second thread (PyMongo's monitor, started by the ping's client)."""
    deadline = time.monotonic() + 60
    while len(os.listdir(f"/proc/{process.pid}/task")) < 2:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the process never reached its start-up ping"
        time.sleep(0.02)  # polling /proc: no event to wait on from outside the process


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_worker_stopped_while_reaching_its_server_says_so_and_exits_0(tmp_path: Path, sig: signal.Signals) -> None:
    worker = _start(tmp_path, "--worker", "--app", "stop_app:setup", URL)
    _wait_inside_ping(worker)
    worker.send_signal(sig)
    out, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, (worker.returncode, err)
    assert err.strip().splitlines() == [
        f"monque-tui: stopped before it started ({sig.name} while reaching mongodb://ops:***@127.0.0.1:1/app)"
    ]
    assert "s3cret" not in out + err


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_check_stopped_while_reaching_its_server_exits_143(tmp_path: Path) -> None:
    check = _start(tmp_path, "check", URL)
    _wait_inside_ping(check)
    check.send_signal(signal.SIGTERM)
    _out, err = check.communicate(timeout=60)
    assert check.returncode == 128 + signal.SIGTERM, (check.returncode, err)
    assert err.strip().splitlines() == [
        "monque-tui: error: stopped before it started (SIGTERM while reaching mongodb://ops:***@127.0.0.1:1/app)"
    ]

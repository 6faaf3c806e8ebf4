"""The console with in-process workers, stopped by a signal in a real terminal, quits as ``q`` does
(found by the acceptance probe).

Textual's terminal driver handles neither SIGTERM nor SIGHUP, so ``kill`` or closing the
terminal killed ``monque-tui --app …`` / ``--demo`` on the spot: its running jobs stayed
``processing`` until ``lock_timeout`` and its instance record stayed in the store. Now the
first signal quits as ``q`` does, which stops the workers (running jobs finish) and closes the store.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import _run, enqueue, get_job, wait_for_status, wait_until
from test_cli_console_tmux import Tmux, pytestmark, tmux  # noqa: F401 - the fixture and the skip marks

APP = "probe_console_app:setup"
#: In-process handlers for the console (tests/cli/apps/worker_app refuses to load beside Textual).
APP_SOURCE = """
import asyncio


async def slow(job):
    await asyncio.sleep(float(job.data["seconds"]))


def setup(monque):
    monque.register("slow", slow)
"""


def _alive(pid: int) -> bool:
    """Running, not merely unreaped: once tmux is gone the console's parent is PID 1, which in a
    container may leave an exited child a zombie for a long time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _instances(url: str) -> list[str]:
    return [info.id for info in _run(url, lambda m: m.instances()) if not info.inferred]


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP", "terminal-closed"], ids=["SIGTERM", "SIGHUP", "terminal-closed"])
def test_a_signal_quits_the_console_and_lets_its_running_job_finish(tmux: Tmux, tmp_path: Path, stop: str) -> None:  # noqa: F811
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    pid_file = tmp_path / "console.pid"
    command = (
        f"cd {shlex.quote(str(_app_dir(tmp_path)))} && echo $$ > {shlex.quote(str(pid_file))} && "
        f"exec {shlex.quote(sys.executable)} -m monque_tui --app {APP} {shlex.quote(url)}"
    )
    tmux.send(command, "Enter")
    tmux.wait_for(lambda s: "completed/s" in s, "the jobs screen")
    pid = int(pid_file.read_text())
    job_id = enqueue(url, "slow", {"seconds": 1.5})
    wait_for_status(url, job_id, "processing")
    assert _instances(url), "the console's workers registered"
    if stop == "terminal-closed":
        tmux.run("kill-server")  # the terminal goes away: the console gets SIGHUP
    else:
        os.kill(pid, getattr(signal, stop))
    wait_until(lambda: not _alive(pid), what="the console to exit")
    assert get_job(url, job_id).status == "completed"  # stopped as on q: the running job finished
    assert _instances(url) == []  # and its instance record is gone


def test_a_second_signal_exits_at_once(tmux: Tmux, tmp_path: Path) -> None:  # noqa: F811
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    pid_file = tmp_path / "console.pid"
    command = (
        f"cd {shlex.quote(str(_app_dir(tmp_path)))} && echo $$ > {shlex.quote(str(pid_file))} && "
        f"{shlex.quote(sys.executable)} -m monque_tui --app {APP} --shutdown-timeout 60 {shlex.quote(url)}; "
        "echo CONSOLE-EXIT=$?"
    )
    tmux.send(command, "Enter")
    tmux.wait_for(lambda s: "completed/s" in s, "the jobs screen")
    job_id = enqueue(url, "slow", {"seconds": 120})
    wait_for_status(url, job_id, "processing")
    console = _console_pid(int(pid_file.read_text()))
    os.kill(console, signal.SIGTERM)
    began = time.monotonic()
    wait_until(lambda: not _pending(console, signal.SIGTERM), what="the first SIGTERM to be delivered")
    os.kill(console, signal.SIGTERM)
    screen = tmux.wait_for(lambda s: "CONSOLE-EXIT=" in s, "the console to exit")
    assert "CONSOLE-EXIT=143" in screen, screen
    assert time.monotonic() - began < 30
    assert get_job(url, job_id).status == "processing"  # left for stale recovery, as with the worker


def _console_pid(shell_pid: int) -> int:
    """The python child of the tmux shell."""

    def child() -> int | None:
        children = Path(f"/proc/{shell_pid}/task/{shell_pid}/children")
        pids = [int(p) for p in children.read_text().split()] if children.exists() else []
        return pids[0] if pids else None

    return int(wait_until(child, what="the console process"))


def _pending(pid: int, sig: int) -> bool:
    """Whether ``sig`` is still pending for ``pid`` (two kills before the first delivery are one signal)."""
    mask = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")):
            mask |= int(line.split()[1], 16)
    return bool(mask & (1 << (sig - 1)))


def _app_dir(tmp_path: Path) -> Path:
    (tmp_path / "probe_console_app.py").write_text(APP_SOURCE)
    return tmp_path

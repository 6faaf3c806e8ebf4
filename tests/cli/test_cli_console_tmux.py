"""The real console in a real terminal: ``monque-tui --demo`` inside tmux.

It must draw the jobs screen with demo rows, open the key help on ``?``, quit on ``q`` with
exit code 0, and leave the terminal usable (alternate screen off, the shell answering).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(
        importlib.util.find_spec("monque_tui.console.launch") is None,
        reason="the console (monque_tui/console/launch.py) is not in this build yet",
    ),
]


class Tmux:
    """One tmux server per test (its own ``-L`` socket, no user config), so tests running in
    parallel, or a person's own tmux, never share a server with another test."""

    def __init__(self, socket: str, session: str) -> None:
        self.socket = socket
        self.session = session

    def command(self, *args: str) -> list[str]:
        return ["tmux", "-L", self.socket, "-f", "/dev/null", *args]

    def run(self, *args: str) -> str:
        return subprocess.run(self.command(*args), check=True, capture_output=True, text=True, timeout=10).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def send(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def wait_for(self, test: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if test(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}")
            time.sleep(0.1)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    name = f"monque-test-{uuid.uuid4().hex[:8]}"
    tmux = Tmux(socket=name, session=name)
    subprocess.run(
        tmux.command("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "env -u TMUX bash --norc --noprofile"),
        check=True,
        timeout=10,
        cwd=tmp_path,
    )
    try:
        yield tmux
    finally:
        subprocess.run(tmux.command("kill-server"), timeout=10, capture_output=True)


def test_demo_console_draws_rows_shows_help_and_quits_cleanly(tmux: Tmux, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    command = f"{shlex.quote(sys.executable)} -m monque_tui --demo {shlex.quote(url)}; echo CONSOLE-EXIT=$?"
    tmux.send(command, "Enter")
    rows = re.compile(
        r"^\s*\S+\s+(email\.send|image\.resize|report\.generate|webhook\.deliver|metrics\.rollup)\s+"
        r"(pending|processing|completed|failed)",
        re.M,
    )
    tmux.wait_for(lambda s: len(rows.findall(s)) >= 3, "the jobs screen with demo rows")
    tmux.send("?")
    tmux.wait_for(lambda s: "Keys" in s and "Jump to the first job" in s, "the key help")
    tmux.send("Escape")
    tmux.wait_for(lambda s: "Jump to the first job" not in s and len(rows.findall(s)) >= 3, "help to close")
    tmux.send("q")
    exited = re.compile(r"^CONSOLE-EXIT=(\d+)", re.M)
    screen = tmux.wait_for(lambda s: exited.search(s) is not None, "the console to exit")
    assert exited.search(screen).group(1) == "0", screen  # type: ignore[union-attr]
    assert tmux.run("display", "-p", "-t", tmux.session, "#{alternate_on}").strip() == "0"
    tmux.send("stty -a | grep -o -- ' -\\?echo ' | head -1; echo SHELL-OK", "Enter")
    screen = tmux.wait_for(lambda s: re.search(r"^SHELL-OK", s, re.M) is not None, "the shell to answer")
    assert " echo " in screen and " -echo " not in screen  # the terminal echoes again


def _console_without_terminal(tmp_path: Path, redirect: str) -> subprocess.CompletedProcess[str]:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    command = f"exec {shlex.quote(sys.executable)} -m monque_tui {shlex.quote(url)} {redirect}"
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60, cwd=tmp_path)


@pytest.mark.parametrize("redirect", ["</dev/null", "<&-"], ids=["stdin-devnull", "stdin-closed"])
def test_without_a_terminal_the_console_exits_2_with_one_line(tmp_path: Path, redirect: str) -> None:
    result = _console_without_terminal(tmp_path, redirect)
    assert result.returncode == 2, result
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert "needs a terminal" in result.stderr and "stdin" in result.stderr
    assert result.stdout == ""


def test_the_palette_opens_and_runs_a_command_in_a_real_terminal(tmux: Tmux, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    command = f"{shlex.quote(sys.executable)} -m monque_tui --demo {shlex.quote(url)}; echo CONSOLE-EXIT=$?"
    tmux.send(command, "Enter")
    tmux.wait_for(lambda s: "completed/s" in s, "the jobs screen")
    for key in ("C-p", ":"):
        tmux.send(key)
        tmux.wait_for(lambda s: "Filter [/]" in s or "Search for commands" in s, "the palette")
        tmux.send("Escape")
        tmux.wait_for(lambda s: "Search for commands" not in s, "the palette to close")
    tmux.send(":")
    tmux.wait_for(lambda s: "Search for commands" in s, "the palette")
    tmux.send("Queues")
    tmux.wait_for(lambda s: "Queues [w]" in s, "the Queues command")
    tmux.send("Enter")
    tmux.wait_for(lambda s: "PENDING" in s and "OLDEST DUE" in s, "the queues screen")
    tmux.send("q")
    exited = re.compile(r"^CONSOLE-EXIT=(\d+)", re.M)
    screen = tmux.wait_for(lambda s: exited.search(s) is not None, "the console to exit")
    assert exited.search(screen).group(1) == "0", screen  # type: ignore[union-attr]

"""A real ``monque-tui --serve`` process for the tests of the served console.

The server runs as a subprocess exactly as a user starts it (``python -m monque_tui --serve
127.0.0.1:0 URL``, the token in its environment); ``ServedConsole`` reads the URL and the
one-time login link it prints, and everything it logs, so a test can check the logs for what
must never be in them. ``new_link()`` asks for another link as an operator does (SIGUSR1).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

TOKEN = "test-token-" + "k3Yq9" * 6  # 41 characters, never printed by the server
START_TIMEOUT = 30.0
_SERVING = re.compile(r" on (http://\S+?)/?$")
_LINK = re.compile(r"(http://\S+/login\?once=\S+)")


@dataclass
class ServedConsole:
    process: subprocess.Popen[str]
    base_url: str
    lines: list[str] = field(default_factory=list)

    @property
    def output(self) -> str:
        """Everything the server printed and logged so far (stdout and stderr, merged)."""
        return "\n".join(self.lines)

    def links(self) -> list[str]:
        """Every one-time login link printed so far, oldest first."""
        return [match.group(1) for line in list(self.lines) if (match := _LINK.search(line))]

    @property
    def login_link(self) -> str:
        """The link printed last."""
        return wait_until(lambda: self.links(), what="a login link")[-1]  # type: ignore[no-any-return]

    def new_link(self) -> str:
        """SIGUSR1, as the start-up lines tell an operator: the server prints a new link."""
        before = len(self.links())
        self.process.send_signal(signal.SIGUSR1)
        return wait_until(lambda: len(self.links()) > before and self.links()[-1], what="a new login link")  # type: ignore[no-any-return]


@contextmanager
def served_console(
    store_url: str, *extra: str, token: str = TOKEN, address: str = "127.0.0.1:0"
) -> Iterator[ServedConsole]:
    environment = {**os.environ, "MONQUE_SERVE_TOKEN": token, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    for name in ("MONQUE_SERVE_TOKEN_FILE", "MONQUE_SERVE_SESSION_LIFETIME", "MONQUE_ALLOW_REMOTE"):
        environment.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "monque_tui", "--serve", address, *extra, store_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=environment,
        text=True,
    )
    lines: list[str] = []
    arrived: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            arrived.put(line)
        arrived.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + START_TIMEOUT
        base_url = None
        while base_url is None:
            try:
                line = arrived.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("monque-tui --serve printed no URL in time:\n" + "\n".join(lines)) from None
            if line is None:
                raise AssertionError(f"monque-tui --serve exited ({process.wait()}):\n" + "\n".join(lines))
            if match := _SERVING.search(line.rstrip()):
                base_url = match.group(1)
        yield ServedConsole(process, base_url, lines)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until(condition, timeout: float = 30.0, interval: float = 0.1, what: str = "condition"):  # type: ignore[no-untyped-def]
    """Poll a cheap condition until it holds (returns its value) or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)

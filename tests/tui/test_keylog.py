"""MONQUE_TUI_KEYLOG: the console's own key-to-frame times, for the soak benchmark.

The bench reads the screen over tmux, which adds the terminal's share; this log says how
much of a key's latency is the console's. Off unless the variable names a file. In a real
terminal the clock stops when Textual's writer thread has written and flushed the key's
first frame (a display with nothing to draw stops nothing); headless, at the hand-over.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import signal
import struct
import sys
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from monque_tui.console.keylog import ENV, KeyLog

from .conftest import running_console, wait_for


async def test_each_key_that_runs_an_action_gets_one_line(
    seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "keys.tsv"
    monkeypatch.setenv(ENV, str(log))
    async with running_console(seeded_url) as (_app, pilot):
        await pilot.press("4", "s")
        await wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == 2)
    lines = [line.split("\t") for line in log.read_text().splitlines()]
    assert [key for key, _ in lines] == ["4", "s"]
    assert all(float(ms) >= 0 for _, ms in lines)


async def test_off_by_default(seeded_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    async with running_console(seeded_url) as (app, pilot):
        assert app._keylog is None
        await pilot.press("4")


# -- the clock stops where the bytes leave (the writer thread), not at hand-over -----------------------
class _Terminal(io.StringIO):
    """A terminal file that records, per flush, how many characters had been written."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed_at: list[int] = []

    def flush(self) -> None:
        self.flushed_at.append(len(self.getvalue()))


def test_a_frame_mark_records_its_keys_once_the_frame_is_flushed(tmp_path: Path) -> None:
    log = KeyLog(str(tmp_path / "keys.tsv"))
    terminal = _Terminal()
    out = log.clocked(terminal)
    assert log.marks_frames
    written: list[str] = []

    def write(text: str) -> None:  # the writer thread, run inline
        written.append(text)
        out.write(text)

    log.handled("s", time.monotonic())
    log.frame_displayed(write)  # a display with nothing to draw: no bytes since the last mark
    assert not (tmp_path / "keys.tsv").read_text()  # the key waits for a frame with bytes
    out.write("\x1b[2;1Hframe")
    log.frame_displayed(write)
    lines = (tmp_path / "keys.tsv").read_text().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["s"]
    assert lines[0].split("\t")[2] == str(len("\x1b[2;1Hframe"))  # that frame's bytes
    assert terminal.flushed_at and terminal.flushed_at[-1] == len(terminal.getvalue())  # flushed first
    assert terminal.getvalue() == "\x1b[2;1Hframe"  # marks write nothing
    out.write("next")
    log.frame_displayed(write)  # a frame with no key pending records nothing
    assert len((tmp_path / "keys.tsv").read_text().splitlines()) == 1
    log.close()


def test_the_real_console_logs_key_time_and_frame_bytes_from_its_writer_thread(seeded_url: str, tmp_path: Path) -> None:
    """In a real pseudo-terminal (not headless): Textual's writer thread writes, and the log says so."""
    log = tmp_path / "keys.tsv"
    env = {**os.environ, ENV: str(log), "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the console on the pty
        os.execvpe(sys.executable, [sys.executable, "-m", "monque_tui", seeded_url], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    received = bytearray()
    done = threading.Event()

    def drain() -> None:  # read everything, as a terminal does, so writes never block
        while not done.is_set():
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                received.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        _wait(lambda: b"sorted by" in received, "the jobs screen")
        os.write(fd, b"4")
        _wait(lambda: log.exists() and len(log.read_text().splitlines()) >= 1, "the key's line")
        os.write(fd, b"s")
        _wait(lambda: len(log.read_text().splitlines()) >= 2, "the second key's line")
        lines = [line.split("\t") for line in log.read_text().splitlines()]
        assert [fields[0] for fields in lines] == ["4", "s"]
        for _key, ms, size in lines:
            assert float(ms) >= 0
            assert 0 < int(size) <= len(received)
        os.write(fd, b"q")
        _wait(lambda: os.waitpid(pid, os.WNOHANG)[0] == pid, "the console to quit")
    finally:
        done.set()
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        reader.join(5)
        os.close(fd)


def _wait(test: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)

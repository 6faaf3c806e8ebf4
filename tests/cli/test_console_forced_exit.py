"""A signalled console always ends, even when its shutdown blocks the event loop (probe finding).

With the terminal gone (ssh dropped, tmux killed) Textual's shutdown could block the loop for
good, waiting on its output thread; the signal handlers installed on the loop then never ran,
so a second SIGTERM did nothing and the process stayed behind until SIGKILL. A stand-in app
reproduces that: its shutdown blocks the loop in a lock wait, as Textual's did.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from cli_helpers import wait_until

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys, threading
    from types import SimpleNamespace
    from monque_tui.console import launch as console

    class BlockingShutdownApp:
        config = SimpleNamespace(monque_options={"shutdown_timeout": float(sys.argv[1])})

        def __init__(self):
            self._stop = asyncio.Event()

        def exit(self):
            # Textual's shutdown waiting on its output thread: the loop is blocked for good.
            print("shutting down", flush=True)
            asyncio.get_running_loop().call_soon(BLOCKED.acquire)

        async def run_async(self):
            print("ready", flush=True)
            await self._stop.wait()

    BLOCKED = threading.Lock()
    BLOCKED.acquire()
    asyncio.run(console._run_until_signalled(BlockingShutdownApp()))
    """
)


def _start(tmp_path: Path, shutdown_timeout: float) -> subprocess.Popen[str]:
    script = tmp_path / "blocking_console.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen([sys.executable, str(script), str(shutdown_timeout)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


def test_a_second_signal_ends_a_console_whose_shutdown_blocks_the_loop(tmp_path: Path) -> None:
    process = _start(tmp_path, shutdown_timeout=600)
    try:
        process.send_signal(signal.SIGHUP)  # the terminal went away: the shutdown starts and blocks
        assert process.stdout is not None and process.stdout.readline().strip() == "shutting down"
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        process.kill()


def test_a_console_whose_shutdown_blocks_ends_after_the_shutdown_timeout_on_its_own(tmp_path: Path) -> None:
    process = _start(tmp_path, shutdown_timeout=0.5)  # the watchdog fires 10.5 s after the signal
    try:
        process.send_signal(signal.SIGHUP)
        wait_until(lambda: process.poll() is not None, timeout=60, what="the watchdog to end the process")
        assert process.returncode == 128 + signal.SIGHUP
    finally:
        process.kill()

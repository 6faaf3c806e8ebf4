"""A stop signal reaches a command while it waits for an unreachable MongoDB (probe-cli).

The reachability ping ran on the command's event loop and blocked it for up to
``--connect-timeout``, so the loop never ran its SIGINT/SIGTERM handlers: ctrl+c and kill did
nothing to ``monque-tui export mongodb://...`` until the timeout ran out, and then it said
"Cannot reach MongoDB", exit 3. The start-up ping of the modes (and of ``check``) ran in the
main thread before any event loop: SIGTERM and SIGHUP took their default action there (a
worker waiting on a down server ended with exit 143 and not a word in its log) and Ctrl-C
exited 130 in silence. A mode now says it stopped before it started, exit 0, as a worker
stopped before it started; ``check`` says it as the other commands do.

A listening socket that accepts and never answers stands in for the server: once the child
has connected it is inside the ping, and the signal is sent.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import CLI_DIR

CONNECT_TIMEOUT = "30"


APP = "async def noop(job):\n    return None\n\n\ndef setup(monque):\n    monque.register('noop', noop)\n"


def _stopped_in_ping(args: list[str], signum: int, cwd: str) -> tuple[int, str]:
    """Run ``monque-tui ARGS URL``, signal it once it is inside the ping; its code and stderr."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(60)
        url = f"mongodb://ops:s3cret@127.0.0.1:{server.getsockname()[1]}/app?directConnection=true"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
        child = subprocess.Popen(
            [sys.executable, "-m", "monque_tui", *args, "--connect-timeout", CONNECT_TIMEOUT, url],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            connection, _ = server.accept()  # the child is in the ping now, waiting for a reply
            with connection:
                child.send_signal(signum)
                out, err = child.communicate(timeout=120)
        finally:
            child.kill()
    assert "s3cret" not in out + err
    return child.returncode, err


@pytest.mark.parametrize(
    ("signum", "code", "said"), [(signal.SIGINT, 130, "stopped by ctrl+c"), (signal.SIGTERM, 143, "stopped by SIGTERM")]
)
def test_a_signal_during_the_mongodb_ping_stops_the_command(signum: int, code: int, said: str) -> None:
    returncode, err = _stopped_in_ping(["export"], signum, str(CLI_DIR))
    assert returncode == code, err
    assert err.strip().splitlines() == [f"monque-tui: error: {said} before export finished"], err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_worker_stopped_during_its_start_up_ping_says_so_and_exits_0(signum: signal.Signals, tmp_path: Path) -> None:
    (tmp_path / "stop_app.py").write_text(APP)
    code, err = _stopped_in_ping(["--worker", "--app", "stop_app:setup"], signum, str(tmp_path))
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"monque-tui: stopped before it started ({signum.name} while reaching "
    ), err
    assert "mongodb://ops:***@127.0.0.1:" in lines[0]


def test_check_stopped_during_its_ping_says_so_as_the_commands_do() -> None:
    code, err = _stopped_in_ping(["check"], signal.SIGTERM, str(CLI_DIR))
    assert code == 143, err
    assert err.strip().splitlines() == ["monque-tui: error: stopped by SIGTERM before check finished"], err

"""A stop signal reaches a command while it waits for an unreachable MongoDB (probe-cli).

The reachability ping ran on the command's event loop and blocked it for up to
``--connect-timeout``, so the loop never ran its SIGINT/SIGTERM handlers: ctrl+c and kill did
nothing to ``monque-tui export mongodb://...`` until the timeout ran out, and then it said
"Cannot reach MongoDB", exit 3. A listening socket that accepts and never answers stands in
for the server: once the child has connected it is inside the ping, and the signal is sent.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest
from cli_helpers import CLI_DIR

CONNECT_TIMEOUT = "30"


@pytest.mark.parametrize(
    ("signum", "code", "said"), [(signal.SIGINT, 130, "stopped by ctrl+c"), (signal.SIGTERM, 143, "stopped by SIGTERM")]
)
def test_a_signal_during_the_mongodb_ping_stops_the_command(signum: int, code: int, said: str) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(60)
        url = f"mongodb://user:secret@127.0.0.1:{server.getsockname()[1]}/db?directConnection=true"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
        child = subprocess.Popen(
            [sys.executable, "-m", "monque_tui", "export", "--connect-timeout", CONNECT_TIMEOUT, url],
            cwd=CLI_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            connection, _ = server.accept()  # the child is in the ping now, waiting for a reply
            with connection:
                child.send_signal(signum)
                _, err = child.communicate(timeout=120)
        finally:
            child.kill()
    assert child.returncode == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0] == f"monque-tui: error: {said} before export finished", err
    assert "secret" not in err

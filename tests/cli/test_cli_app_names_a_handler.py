"""``--app`` naming a handler instead of the setup function says so (issue 28).

It failed with ``'Monque' object has no attribute 'data'``: the handler was called with
the Monque and read ``job.data`` off it. Real subprocess, real SQLite file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TASKS = """
async def send_email(job):
    print("sending", job.data["template"], "to", job.data["to"])


def setup(monque):
    monque.register("email.send", send_email)
"""


def test_a_handler_named_as_the_app_is_recognised(tmp_path: Path) -> None:
    (tmp_path / "tasks.py").write_text(TASKS)
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "monque_tui", "--worker", "--app", "tasks:send_email", "--duration", "1", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    assert "no attribute 'data'" not in done.stderr and "Traceback" not in done.stderr
    assert "send_email looks like a job handler" in done.stderr and "--app tasks:setup" in done.stderr

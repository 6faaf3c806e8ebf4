"""Who consumes what, from the command line (issue 28).

``pause ops.slwo`` (a typo) was accepted in silence; the worker's start line gave the worker
default, not the concurrency ``tasks.py`` registered; ``paused`` printed nothing at all when
nothing was paused. Real subprocesses on real SQLite files.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

from cli_helpers import CliProcess, enqueue
from test_cli_fleet import cli

APP_SOURCE = """
async def send(job):
    return None


def setup(monque):
    monque.register("email.send", send, concurrency=10)
    monque.register("report.build", send)
"""


def test_pausing_a_name_nothing_uses_is_refused_unless_forced(db_url: str) -> None:
    enqueue(db_url, "ops.slow")
    typo = cli("pause", "ops.slwo", "--url", db_url)
    assert typo.returncode == 2, typo.stderr
    assert typo.stderr.count("\n") == 1 and "Traceback" not in typo.stderr
    assert "no job and no registered worker uses the name 'ops.slwo'" in typo.stderr
    assert "did you mean ops.slow" in typo.stderr and "--force" in typo.stderr
    listed = cli("paused", "--url", db_url)
    assert (listed.returncode, listed.stdout, listed.stderr.strip()) == (0, "", "nothing paused")
    forced = cli("pause", "ops.slwo", "--force", "--url", db_url)
    assert (forced.returncode, forced.stderr.strip()) == (0, "paused ops.slwo")
    assert cli("pause", "ops.slow", "--url", db_url).returncode == 0  # a name a job has
    assert sorted(line.split("\t")[0] for line in cli("paused", "--url", db_url).stdout.splitlines()) == [
        "ops.slow",
        "ops.slwo",
    ]


def test_a_name_only_a_registered_worker_handles_can_be_paused_and_the_start_line_gives_its_concurrency(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "tasks_app.py").write_text(APP_SOURCE)
    args = ("--worker", "--app", "tasks_app:setup", "--concurrency", "5")
    worker = spawn(*args, "--log-format", "json", db_url, cwd=tmp_path)
    started = worker.wait_for_event("worker:started")
    line = str(started)
    assert "email.send (concurrency 10)" in line and "report.build (concurrency 5)" in line, line
    assert started["concurrency_by_name"] == {"email.send": 10, "report.build": 5}
    done = cli("pause", "report.build", "--url", db_url)  # no job has the name; the worker handles it
    assert (done.returncode, done.stderr.strip()) == (0, "paused report.build")
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0

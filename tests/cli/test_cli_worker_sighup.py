"""SIGHUP (a closed terminal or ssh session) stops a worker as SIGTERM does.

The first SIGHUP stops taking work and lets the running job finish, then exits 0; a second
one forces the exit with 129 and leaves the job ``processing`` for stale recovery. The real
command in a subprocess (found by the acceptance probe: SIGHUP killed running jobs on the
spot); synchronised on log lines and stored state, never on sleeps.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable

from cli_helpers import CliProcess, enqueue, get_job

APP = "apps.worker_app:setup"


def start_worker(spawn: Callable[..., CliProcess], url: str, *extra: str) -> CliProcess:
    worker = spawn("--worker", "--app", APP, "--log-format", "json", "--log-level", "debug", *extra, url)
    worker.wait_for_event("worker:started")
    return worker


# -- SIGHUP: a closed terminal or ssh session must not kill running jobs on the spot ---------------
def test_sighup_stops_gracefully_and_lets_the_running_job_finish(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker = start_worker(spawn, db_url)
    job_id = enqueue(db_url, "slow", {"seconds": 1.0})
    worker.wait_for_event("job:start", job_id=job_id)
    worker.send(signal.SIGHUP)
    assert worker.wait_for_event("worker:stopping")["signal"] == "SIGHUP"
    assert worker.wait_exit(timeout=15) == 0
    assert get_job(db_url, job_id).status == "completed"
    events = [json.loads(line)["event"] for line in worker.lines]
    assert events.index("worker:stopping") < events.index("job:complete") < events.index("worker:stopped")


def test_second_sighup_forces_the_exit_with_129(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker = start_worker(spawn, db_url)
    job_id = enqueue(db_url, "slow", {"seconds": 120})
    worker.wait_for_event("job:start", job_id=job_id)
    worker.send(signal.SIGHUP)
    worker.wait_for_event("worker:stopping")
    began = time.monotonic()
    worker.send(signal.SIGHUP)
    assert worker.wait_exit(timeout=10) == 128 + signal.SIGHUP
    assert time.monotonic() - began < 10
    worker.wait_for_event("worker:forced")
    assert get_job(db_url, job_id).status == "processing"  # left for stale recovery, as with SIGTERM

"""Several real processes on one SQLite file: a worker claims only the names it handles, one
cron job scheduled by several processes at once is stored once, and a SIGKILLed worker's job
is recovered once by a running worker (found by acceptance probe round 5). Synchronised on the processes' JSON lines and on read-only queries,
never on fixed sleeps (see tests/test_multiprocess.py for the harness).
"""

from __future__ import annotations

import json
import signal
import sys
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # the scripts are imported as tests.procs.*
    sys.path.insert(0, str(REPO_ROOT))

from monque_engine.store.sqlite.queries import row_to_job  # noqa: E402
from monque_engine.store.sqlite.schema import JOB_COLUMNS  # noqa: E402
from tests.procs._common import read_run_logs  # noqa: E402
from tests.procs.harness import Launcher, StoreProbe, wait_until  # noqa: E402
from tests.test_multiprocess import (  # noqa: E402
    READY_TIMEOUT,
    enqueue_here,
    errors_reported,
    start_worker,
    stop_gracefully,
)


def test_a_worker_never_claims_a_name_only_another_worker_handles(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    a = start_worker(procs, db, runs_dir, "A", name="alpha", concurrency=5)
    b = start_worker(procs, db, runs_dir, "B", name="beta", concurrency=5)
    for w in (a, b):
        w.wait_for("ready", READY_TIMEOUT)
    alpha = set(enqueue_here(db, "alpha", 300))
    beta = set(enqueue_here(db, "beta", 300))
    orphan = set(enqueue_here(db, "gamma", 20))  # nobody handles it
    wait_until(
        lambda: probe.count("status = 'completed'") == 600,
        60,
        "every alpha and beta job completed",
        on_timeout=lambda: str(probe.status_counts()),
    )
    stop_gracefully(a, b)

    started = Counter((job_id, instance) for kind, job_id, instance in read_run_logs(runs_dir) if kind == "start")
    assert {job_id for job_id, instance in started if instance == "A"} == alpha
    assert {job_id for job_id, instance in started if instance == "B"} == beta
    assert set(started.values()) == {1}
    assert {job_id for job_id, status in probe.statuses().items() if status == "pending"} == orphan
    assert probe.count("name = 'gamma' AND (claimed_by IS NOT NULL OR locked_at IS NOT NULL)") == 0
    assert errors_reported(a, b) == []


def test_schedule_of_one_cron_job_from_several_processes_at_once_stores_one_schedule(
    procs: Launcher, db: Path, probe: StoreProbe
) -> None:
    producers = [
        procs.start(
            f"scheduler-{i}",
            "producer",
            "--db",
            db,
            "--name",
            "nightly-report",
            "--keys",
            "nightly",
            "--cron",
            "0 3 * * *",
            "--barrier",
            stdin=True,
        )
        for i in range(6)
    ]
    for p in producers:
        p.wait_for("ready", READY_TIMEOUT)
    for p in producers:  # released together, as a fleet starting at once
        p.send_line("go")
    for p in producers:
        p.finish(60)
    returned = {line["job_id"] for p in producers for line in p.events("enqueued")}
    assert len(returned) == 1, returned
    assert probe.count() == 1
    row = probe.job(returned.pop())
    assert row is not None and row["repeat_interval"] == "0 3 * * *" and row["status"] == "pending"


def test_a_job_of_a_sigkilled_worker_is_recovered_once_by_a_running_worker_with_upstreams_counts(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    quick = {"lock_timeout": 1.5, "heartbeat_interval": 0.2, "stale_recovery_interval": 0.3}
    # A takes both jobs and never finishes them.
    a = start_worker(procs, db, runs_dir, "A", concurrency=2, delay=3600, print_jobs=True, **quick)
    a.wait_for("ready", READY_TIMEOUT)
    ids = enqueue_here(db, "task", 2)
    a.wait_for("job:start", 20, count=2)
    # B is already running when A dies.
    b = start_worker(procs, db, runs_dir, "B", concurrency=2, print_jobs=True, **quick)
    b.wait_for("ready", READY_TIMEOUT)
    a.signal(signal.SIGKILL)
    a.wait_exit(10)

    wait_until(
        lambda: probe.count("status = 'completed'") == 2,
        30,
        "both jobs recovered and completed by B",
        on_timeout=lambda: f"{probe.status_counts()}\n{b.describe()}",
    )
    stop_gracefully(b)
    assert sum(line["count"] for line in b.events("stale:recovered")) == 2

    starts = Counter((job_id, instance) for kind, job_id, instance in read_run_logs(runs_dir) if kind == "start")
    assert starts == Counter({(job_id, instance): 1 for job_id in ids for instance in ("A", "B")})
    for job_id in ids:
        row = probe.job(job_id)
        assert row is not None
        job = row_to_job(tuple(row[column] for column in JOB_COLUMNS))
        # As upstream: stale recovery is not a failure (failCount unchanged), and nothing else
        # was recorded against the job; our history says what happened to each attempt.
        assert job.fail_count == 0 and job.fail_reason is None
        assert [(a.outcome, a.instance_id) for a in job.attempts] == [("stale", "A"), ("completed", "B")], json.dumps(
            row["attempts"]
        )
    assert errors_reported(b) == []

"""Time limits with real worker processes on one SQLite file (issue 37 part 1).

The workers are ``tests/procs/worker.py`` with ``--timeout`` and ``--hang``: each job's
first run hangs (async: on an event that never comes; sync: in a thread, until the test
writes ``release`` on the worker's stdin). The tests wait on the workers' JSON lines and on
the stored rows, never on sleeps or durations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # the scripts are imported as tests.procs.*
    sys.path.insert(0, str(REPO_ROOT))

from tests.procs._common import read_run_logs  # noqa: E402
from tests.procs.harness import Launcher, Proc, StoreProbe, wait_until  # noqa: E402
from tests.test_multiprocess import READY_TIMEOUT, enqueue_here  # noqa: E402

WAIT = 30.0  # a loaded 2-core machine


def start(procs: Launcher, db: Path, runs_dir: Path, instance: str, *extra: Any, stdin: bool = False) -> Proc:
    args = ["--db", db, "--instance", instance, "--runs-dir", runs_dir, "--print-jobs", "--poll-interval", "0.1"]
    worker = procs.start(instance, "worker", *args, *extra, stdin=stdin)
    worker.wait_for("ready", READY_TIMEOUT)
    return worker


def attempts_of(probe: StoreProbe, job_id: str) -> list[dict[str, Any]]:
    row = probe.job(job_id)
    assert row is not None
    return json.loads(row["attempts"] or "[]")


def test_an_async_handler_over_its_limit_is_cancelled_recorded_and_retried(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    worker = start(procs, db, runs_dir, "w-async", "--timeout", 0.2, "--hang", "async", "--max-retries", 3)
    [job_id] = enqueue_here(db, "task", 1)
    [fail] = worker.wait_for("job:fail", WAIT, where=lambda line: line["job_id"] == job_id)
    assert fail["will_retry"] is True and "time limit of 0.2 s" in fail["error"]
    worker.wait_for("job:complete", WAIT, where=lambda line: line["job_id"] == job_id)
    first, second = attempts_of(probe, job_id)
    assert (first["outcome"], first["errorType"], first["instanceId"]) == ("timed_out", "TimeoutError", "w-async")
    assert second["outcome"] == "completed"
    kinds = [kind for kind, run_id, _ in read_run_logs(runs_dir) if run_id == job_id]
    assert kinds == ["start", "cancelled", "start", "done"]  # cancelled at the deadline, then retried


def test_a_sync_handler_over_its_limit_keeps_its_job_owned_and_no_second_run_starts(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    # Stale recovery would take any job whose heartbeats stopped for a second, in both workers.
    liveness = ["--heartbeat-interval", 0.05, "--lock-timeout", 1, "--stale-recovery-interval", 0.1]
    owner = start(
        procs, db, runs_dir, "w-sync", "--timeout", 0.2, "--hang", "sync", "--concurrency", 1, *liveness, stdin=True
    )
    [job_id] = enqueue_here(db, "task", 1)
    owner.wait_for("hanging", WAIT, where=lambda line: line["job_id"] == job_id)
    other = start(procs, db, runs_dir, "w-other", "--timeout", 0.2, "--concurrency", 5, *liveness)

    def marked() -> dict[str, Any] | None:
        row = probe.job(job_id)
        return row if row and row["over_limit_at"] is not None else None

    row = wait_until(marked, WAIT, "the job is marked over its time limit", on_timeout=owner.describe)
    assert (row["status"], row["claimed_by"]) == ("processing", "w-sync")
    locked_at = row["locked_at"]

    # Held past the stale threshold (1 s of lock timeout) while both workers recover stale jobs
    # every 0.1 s: only the owner's heartbeats keep it, and they go on.
    def held_past_lock_timeout() -> bool:
        now = probe.job(job_id)
        assert now is not None and now["status"] == "processing" and now["claimed_by"] == "w-sync", now
        return bool(now["last_heartbeat"] - locked_at > 2_000)

    wait_until(held_past_lock_timeout, WAIT, "heartbeats go on past the lock timeout")
    # The owner's one slot stays counted: a new job goes to the other worker, which is claiming.
    [later] = enqueue_here(db, "task", 1)
    other.wait_for("job:complete", WAIT, where=lambda line: line["job_id"] == later)
    assert owner.events("job:start") == [line for line in owner.events("job:start") if line["job_id"] == job_id]
    assert owner.events("job:fail") == [] and other.events("job:start") == [
        line for line in other.events("job:start") if line["job_id"] == later
    ]
    assert all(line["event"] != "stale:recovered" for w in (owner, other) for line in w.lines)

    owner.send_line("release")
    [fail] = owner.wait_for("job:fail", WAIT, where=lambda line: line["job_id"] == job_id)
    assert fail["will_retry"] is True and "ran on until it returned" in fail["error"]
    wait_until(lambda: (probe.job(job_id) or {}).get("status") == "completed", WAIT, "the retry completes")
    first, second = attempts_of(probe, job_id)
    assert (first["outcome"], first["errorType"], first["instanceId"]) == ("timed_out", "TimeoutError", "w-sync")
    assert second["outcome"] == "completed"
    # Two runs in all (the hung one, then the retry) and no stale record between them: had a
    # second run started while the thread ran, stale recovery would have recorded the first
    # attempt as stale and the owner's late outcome would not have been written.
    records = [(kind, instance) for kind, run_id, instance in read_run_logs(runs_dir) if run_id == job_id]
    assert sum(1 for kind, _ in records if kind == "start") == 2 and ("released", "w-sync") in records

"""Fleet and queue control (issue 13) across real processes on one SQLite file.

Workers are ``tests/procs/worker.py`` subprocesses; the test process plays the operator
with a Monque of its own (never started, so it never registers). Waits are on observable
conditions (a stdout line, a stored row), never fixed sleeps.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.procs._common import read_run_logs  # noqa: E402
from tests.procs.harness import Launcher, Operator, Proc, wait_until  # noqa: E402

READY_TIMEOUT = 30.0


@pytest.fixture
def operator(db: Path) -> Iterator[Operator]:
    with Operator(db) as op:
        yield op


def start_worker(procs: Launcher, db: Path, runs_dir: Path, instance: str, **options: Any) -> Proc:
    args: list[Any] = ["--db", db, "--instance", instance, "--runs-dir", runs_dir]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is not None and value is not False:
            args += [flag, value]
    return procs.start(instance, "worker", *args)


def done_ids(runs_dir: Path) -> set[str]:
    return {job_id for kind, job_id, _ in read_run_logs(runs_dir) if kind == "done"}


def stop_gracefully(*workers: Proc) -> None:
    for w in workers:
        w.signal(signal.SIGTERM)
    for w in workers:
        w.finish(30)


def test_registration_death_and_a_guarded_rescue_of_a_killed_workers_jobs(procs, db, runs_dir, probe, operator):
    op = operator
    # A 2 s heartbeat: the live owner stays live even if a loaded machine delays a beat by
    # a few seconds (it is judged dead only past 2 x 2 s of silence).
    w1 = start_worker(procs, db, runs_dir, "w1", concurrency=3, delay=600, heartbeat_interval=2.0)
    w1.wait_for("ready", READY_TIMEOUT)
    ids = [op.run(op.m.enqueue("task", {"n": n})).id for n in range(3)]
    wait_until(lambda: len(probe.processing_by("w1")) == 3, 30, "w1 holds the 3 jobs", on_timeout=w1.describe)

    def registered_running() -> Any:
        found = [i for i in op.run(op.m.instances()) if i.id == "w1" and i.running == 3]
        return found[0] if found else None

    info = wait_until(registered_running, 30, "w1's record shows 3 running jobs")
    assert (info.pid, info.inferred, info.alive, info.jobs_held, info.workers) == (w1.pid, False, True, 3, {"task": 3})

    # The rescue race: while w1 lives, a release never takes its jobs, however often it is
    # tried, across several of w1's heartbeats (each watch ends at w1's next beat, and the
    # write compares with what the watch saw last).
    beats: set[int] = set()

    def release_refused_across_beats() -> bool:
        assert op.run(op.m.check_owner("w1")).alive
        assert op.run(op.m.release_dead_owner_jobs("w1")) == 0
        assert len(probe.processing_by("w1")) == 3
        beats.add(probe.job(ids[0])["last_heartbeat"])
        return len(beats) >= 3

    wait_until(release_refused_across_beats, 60, "release tried across 3 heartbeats of w1", interval=0.05)

    w1.signal(signal.SIGKILL)
    assert w1.wait_exit(10) == -signal.SIGKILL

    def judged_dead() -> Any:
        found = [i for i in op.run(op.m.instances()) if i.id == "w1" and not i.alive]
        return found[0] if found else None

    dead = wait_until(judged_dead, 30, "w1 judged dead (heartbeat older than 2 x 2 s)")
    assert dead.jobs_held == 3 and not dead.inferred
    # Dead by the watch: nothing of w1 moves for 2 x 2 s + 1 s of the operator's monotonic time.
    check = op.run(op.m.check_owner("w1"))
    assert (check.alive, check.releasable) == (False, 3), check
    assert op.run(op.m.release_dead_owner_jobs("w1")) == 3
    assert probe.count("status = 'pending' AND claimed_by IS NULL") == 3

    w2 = start_worker(procs, db, runs_dir, "w2", heartbeat_interval=1.0)
    w2.wait_for("ready", READY_TIMEOUT)
    wait_until(lambda: probe.count("status = 'completed'") == 3, 30, "w2 completes the rescued jobs")
    assert done_ids(runs_dir) == set(ids)
    assert {i.id for i in op.run(op.m.instances())} == {"w1", "w2"}
    stop_gracefully(w2)
    (left,) = op.run(op.m.instances())  # a clean stop removes the record; the killed one stays, dead
    assert left.id == "w1" and not left.alive and left.jobs_held == 0


def test_pause_and_resume_reach_every_worker_process(procs, db, runs_dir, probe, operator):
    op = operator
    workers = [start_worker(procs, db, runs_dir, f"w{i}", poll_interval=0.1, also="marker") for i in (1, 2)]
    for w in workers:
        w.wait_for("ready", READY_TIMEOUT)
    assert op.run(op.m.pause("task")) is True
    for w in workers:
        w.wait_for("queue:paused", 30, where=lambda line: line["name"] == "task")

    held = op.run(op.m.enqueue("task")).id
    marker = op.run(op.m.enqueue("marker")).id
    wait_until(lambda: marker in done_ids(runs_dir), 30, "the unpaused name still runs")
    assert probe.job(held)["status"] == "pending" and held not in done_ids(runs_dir)
    assert list(op.run(op.m.paused())) == ["task"]

    assert op.run(op.m.resume("task")) is True
    for w in workers:
        w.wait_for("queue:resumed", 30, where=lambda line: line["name"] == "task")
    wait_until(lambda: held in done_ids(runs_dir), 30, "the resumed name runs")
    stop_gracefully(*workers)


def test_per_minute_counters_survive_worker_and_reader_restarts(procs, db, runs_dir, probe):
    first = start_worker(procs, db, runs_dir, "w1", heartbeat_interval=0.2)
    first.wait_for("ready", READY_TIMEOUT)
    op = Operator(db)
    try:
        for n in range(5):
            op.run(op.m.enqueue("task", {"n": n}))
    finally:
        op.close()
    wait_until(lambda: probe.count("status = 'completed'") == 5, 30, "5 jobs completed")
    stop_gracefully(first)

    second = start_worker(procs, db, runs_dir, "w2", heartbeat_interval=0.2, fail_marked=True, max_retries=1)
    second.wait_for("ready", READY_TIMEOUT)
    op = Operator(db)  # a console opened afterwards
    try:
        (task,) = op.run(op.m.queue_health())
        assert (task.completed_last_window, task.failed_last_window) == (5, 0)
        op.run(op.m.enqueue("task", {"fail": True}))
        op.run(op.m.enqueue("task", {"fail": False}))
    finally:
        op.close()
    wait_until(lambda: probe.count("status IN ('completed', 'failed')") == 7, 30, "2 more jobs settled")
    stop_gracefully(second)

    op = Operator(db)
    try:
        (task,) = op.run(op.m.queue_health(window_minutes=24 * 60))
        assert (task.completed_last_window, task.failed_last_window) == (6, 1)
    finally:
        op.close()

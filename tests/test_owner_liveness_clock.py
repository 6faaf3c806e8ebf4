"""Dead-owner release judges liveness by the owner's records moving, never by the caller's clock.

Issue 25, point 5: with the operator's wall clock an hour ahead, ``release_dead_owner_jobs``
compared that clock with the heartbeats a worker wrote on its own, found them an hour old, and
released the jobs of a worker beating every second; they ran twice. An hour behind, a killed
worker's beats looked fresh for an hour and its jobs could not be released at all.

Workers are real ``tests/procs/worker.py`` subprocesses on one SQLite file; the operator is a
Monque in the test process whose ``now_ms`` (every module that reads it) is stepped, as NTP or
a wrong clock on the operator's machine would. Nothing waits on a fixed sleep: the worker's
beats and claims are read from the file.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from monque_engine import timeutil  # noqa: E402
from tests.procs._common import read_run_logs  # noqa: E402
from tests.procs.harness import Launcher, Operator, Proc, StoreProbe, wait_until  # noqa: E402

READY_TIMEOUT = 30.0
HOUR_MS = 3_600_000


def step_the_operators_clock(monkeypatch: pytest.MonkeyPatch, offset_ms: int) -> None:
    """Every ``now_ms`` this process's engine reads is ``offset_ms`` off; the workers' is not."""
    real = timeutil.now_ms

    def stepped() -> int:
        return real() + offset_ms

    for name, module in list(sys.modules.items()):
        if name.startswith("monque_engine") and getattr(module, "now_ms", None) is real:
            monkeypatch.setattr(module, "now_ms", stepped)


@pytest.fixture
def operator(db: Path) -> Iterator[Operator]:
    with Operator(db) as op:
        yield op


def start_worker(procs: Launcher, db: Path, runs_dir: Path, instance: str, heartbeat: float) -> Proc:
    worker = procs.start(
        instance,
        "worker",
        *("--db", db, "--instance", instance, "--runs-dir", runs_dir),
        *("--concurrency", 1, "--delay", 600, "--heartbeat-interval", heartbeat),
    )
    worker.wait_for("ready", READY_TIMEOUT)
    return worker


def starts_of(runs_dir: Path, job_id: str) -> int:
    return sum(1 for kind, ran, _ in read_run_logs(runs_dir) if kind == "start" and ran == job_id)


def test_a_worker_beating_every_second_keeps_its_job_when_the_operators_clock_is_an_hour_ahead(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe, operator: Operator, monkeypatch: pytest.MonkeyPatch
) -> None:
    op = operator
    worker = start_worker(procs, db, runs_dir, "w1", heartbeat=1.0)
    job = op.run(op.m.enqueue("task", {"long": True}))
    wait_until(lambda: probe.processing_by("w1") == [job.id], 30, "w1 runs the job", on_timeout=worker.describe)
    wait_until(lambda: starts_of(runs_dir, job.id) == 1, 30, "the handler started")

    step_the_operators_clock(monkeypatch, +HOUR_MS)
    # By the operator's clock every beat of w1 is an hour old: the old guard released its job.
    check = op.run(op.m.check_owner("w1"))
    assert check.alive and check.releasable == 0, check
    assert op.run(op.m.count_dead_owner_jobs("w1")) == 0
    assert op.run(op.m.release_dead_owner_jobs("w1")) == 0

    assert probe.processing_by("w1") == [job.id]
    assert probe.count("status = 'pending'") == 0
    assert starts_of(runs_dir, job.id) == 1  # never handed out for a second run
    worker.signal(signal.SIGKILL)


@pytest.mark.parametrize("offset_ms", [+HOUR_MS, -HOUR_MS], ids=["operator-ahead", "operator-behind"])
def test_a_killed_workers_job_is_released_whichever_way_the_operators_clock_is_off(
    procs: Launcher,
    db: Path,
    runs_dir: Path,
    probe: StoreProbe,
    operator: Operator,
    monkeypatch: pytest.MonkeyPatch,
    offset_ms: int,
) -> None:
    op = operator
    worker = start_worker(procs, db, runs_dir, "doomed", heartbeat=0.5)
    job = op.run(op.m.enqueue("task", {"long": True}))
    wait_until(lambda: probe.processing_by("doomed") == [job.id], 30, "doomed runs the job", on_timeout=worker.describe)
    worker.signal(signal.SIGKILL)
    assert worker.wait_exit(10) == -signal.SIGKILL

    step_the_operators_clock(monkeypatch, offset_ms)
    check = op.run(op.m.check_owner("doomed"))
    assert not check.alive and check.releasable == 1, check
    assert op.run(op.m.release_dead_owner_jobs("doomed")) == 1
    stored = probe.job(job.id)
    assert stored is not None and (stored["status"], stored["claimed_by"]) == ("pending", None)

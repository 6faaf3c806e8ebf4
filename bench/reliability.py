"""Reliability under faults, load and bad input: ``python -m bench.reliability [--quick] [--scenario N]``

Runs seven fault, load and bad-input scenarios with real processes on real SQLite files
and prints one markdown table (scenario, load, faults injected, lost, duplicated, time to
recover, checks, notes), also written to ``bench/results/reliability.md``:

1. exactly once without faults      5a-5e storage faults (read-only directory, disk full,
2. SIGKILL of workers, repeatedly          lock held past busy_timeout, not a database, corrupt file)
3. operator races during a drain    6. bad input, fuzzed with hypothesis
4. SIGTERM during load, restarts    7. change-feed integrity across watcher restarts

The processes are the scripts in ``tests/procs`` (workers, producers, watchers, an
operator, a feeder, a lock holder), driven through ``tests/procs/harness.py``; everything
synchronises on what a process prints or on read-only queries of the file, never on
sleeps. ``tests/test_reliability.py`` runs each scenario here at small sizes (the same
code, ``SIZES['quick']``) in ``make test`` and at full sizes behind ``-m slow``.

Each scenario returns a ``Result``; ``violations`` lists every broken promise (a lost
job, a duplicate that was not in flight in a killed process, a transition the guards
forbid, an event without its transition, a crash, a multi-line error...). A run passes
when every list is empty.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # the process scripts are imported as tests.procs.*
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.procs._common import read_run_logs, sqlite_url
from tests.procs.harness import Proc, StoreProbe, wait_until

from .reliability_base import (
    READY,
    REPO_ROOT,
    Result,
    Workspace,
    enqueue_here,
    integrity,
    table,
    workspace,
)

TABLE = "monque_jobs"
CHANGES = "monque_jobs_changes"

#: Sizes per scenario: ``quick`` is what ``make test`` runs, ``full`` is the load the README's table reports.
SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "quick": {
        "1": {"jobs": 1500, "workers": 4},
        "2": {"jobs": 900, "workers": 3, "kills": 3},
        "3": {"jobs": 300, "workers": 2, "ops": 250},
        "4": {"jobs": 900, "workers": 2, "stops": 2},
        "5": {"jobs": 200},
        "6": {"examples": 25},
        "7": {"jobs": 900, "producers": 2, "workers": 2, "restarts": 3},
    },
    "full": {
        "1": {"jobs": 50_000, "workers": 4},
        "2": {"jobs": 20_000, "workers": 4, "kills": 12},
        "3": {"jobs": 5_000, "workers": 3, "ops": 5_000},
        "4": {"jobs": 20_000, "workers": 3, "stops": 10},
        "5": {"jobs": 3_000},
        "6": {"examples": 400},
        "7": {"jobs": 20_000, "producers": 3, "workers": 3, "restarts": 12},
    },
}


# -- helpers ------------------------------------------------------------------------------------------
def plain_jobs(count: int, name: str = "task") -> list[dict[str, Any]]:
    return [{"name": name, "data": {"n": n}} for n in range(count)]


def runs_by_kind(runs_dir: Path) -> dict[str, Counter[str]]:
    kinds: dict[str, Counter[str]] = {k: Counter() for k in ("start", "done", "cancelled", "failed")}
    for kind, job_id, _instance in read_run_logs(runs_dir):
        kinds.setdefault(kind, Counter())[job_id] += 1
    return kinds


def runs_of(runs_dir: Path, instance: str, kind: str) -> set[str]:
    return {job_id for k, job_id, inst in read_run_logs(runs_dir) if inst == instance and k == kind}


def started(procs: list[Proc]) -> list[Proc]:
    """``procs`` once each has said "ready": a replacement worker spawned late in a scenario
    can still be importing when the drain ends, and a SIGTERM then kills it before its
    handler exists (exit -15, a harness race, not a worker fault)."""
    for p in procs:
        p.wait_for("ready", READY)
    return procs


def stop_gracefully(procs: list[Proc], timeout: float = 60.0) -> list[int]:
    for p in procs:
        if p.alive():
            p.signal(signal.SIGTERM)
    return [p.wait_exit(timeout) for p in procs]


def describe(*procs: Proc) -> str:
    return "\n".join(p.describe() for p in procs)


def one_line(message: str) -> bool:
    return bool(message) and "\n" not in message.strip() and "Traceback" not in message


def wait_completed(ws: Workspace, ids: set[str] | list[str], timeout: float, *procs: Proc) -> None:
    wanted = set(ids)
    wait_until(
        lambda: (
            wanted <= {i for i, s in ws.probe.statuses().items() if s == "completed"}
            if ws.probe.count("status = 'completed'") >= len(wanted)
            else False
        ),
        timeout,
        f"all {len(wanted)} jobs completed",
        interval=0.1,
        on_timeout=lambda: f"statuses: {ws.probe.status_counts()}\n{describe(*procs)}",
    )


def worker_errors(*procs: Proc) -> list[dict[str, Any]]:
    return [line for p in procs for line in p.events("job:error")]


def unprivileged_prefix() -> list[str] | None:
    """As root, run a child without the capabilities that ignore file modes (as the CLI tests do)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]


class ProcessingMonitor:
    """Samples the processing jobs from a thread of its own: the oldest lock at any moment and,
    per owner, when a processing job of that owner was last seen."""

    def __init__(self, db: Path, interval: float = 0.05) -> None:
        self.db = db
        self.interval = interval
        self.max_age_s = 0.0
        self.last_seen: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="processing-monitor", daemon=True)

    def start(self) -> ProcessingMonitor:
        self._thread.start()
        return self

    def _run(self) -> None:
        conn = sqlite3.connect(self.db, isolation_level=None, timeout=10)
        conn.execute("PRAGMA query_only=1")
        try:
            while not self._stop.wait(self.interval):
                try:
                    rows = conn.execute(
                        f"SELECT claimed_by, min(locked_at) FROM {TABLE} WHERE status = 'processing' "
                        "GROUP BY claimed_by"
                    ).fetchall()
                except sqlite3.Error:
                    continue
                now = time.time()
                for owner, locked_at in rows:
                    self.last_seen[owner] = now
                    if locked_at is not None:
                        self.max_age_s = max(self.max_age_s, now - locked_at / 1000)
        finally:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def change_rows(db: Path, after: int = 0) -> list[tuple[int, str, str, str | None]]:
    """An independent read of the change table: ``(seq, op, job_id, status)`` in seq order."""
    conn = sqlite3.connect(db, isolation_level=None, timeout=10)
    try:
        return conn.execute(
            f"SELECT seq, op, job_id, status FROM {CHANGES} WHERE seq > ? ORDER BY seq", (after,)
        ).fetchall()
    finally:
        conn.close()


def head_seq(db: Path) -> int:
    conn = sqlite3.connect(db, isolation_level=None, timeout=10)
    try:
        return int(conn.execute(f"SELECT coalesce(max(seq), 0) FROM {CHANGES}").fetchone()[0])
    finally:
        conn.close()


# -- 1. exactly once without faults -----------------------------------------------------------------
def scenario_exactly_once(ws: Workspace, jobs: int, workers: int, mixed_delay: float = 0.004) -> Result:
    result = Result(
        "1. exactly once",
        f"{jobs:,} jobs, {workers} workers + 1 producer, mixed run times (0-{mixed_delay * 1000:g} ms)",
        "none",
    )
    pool = [ws.worker(f"w{i}", concurrency=10, mixed_delay=mixed_delay) for i in range(workers)]
    for w in pool:
        w.wait_for("ready", READY)
    producer = ws.launcher.start("producer", "producer", "--db", ws.db, "--count", jobs, "--quiet")
    started = time.monotonic()
    producer.finish(120 + jobs / 200)
    ids = set(producer.events("done")[0]["ids"])
    result.jobs = len(ids)
    result.check(len(ids) == jobs, f"producer acknowledged {len(ids)} of {jobs} jobs")
    wait_completed(ws, ids, 60 + jobs / 100, *pool)
    result.notes.append(f"drained in {time.monotonic() - started:.1f} s")
    codes = stop_gracefully(pool)
    result.check(codes == [0] * workers, f"worker exit codes {codes}")

    statuses = ws.probe.statuses()
    result.lost = len(ids - {i for i, s in statuses.items() if s == "completed"})
    result.check(result.lost == 0, f"{result.lost} acknowledged job(s) did not complete")
    result.check(set(statuses) == ids, "the store holds jobs nobody enqueued, or misses some")
    runs = runs_by_kind(ws.runs)
    result.duplicated = sum(1 for n in runs["start"].values() if n > 1)
    result.check(result.duplicated == 0, f"{result.duplicated} job(s) ran more than once")
    result.check(set(runs["start"]) == ids, "a job completed without its handler running")
    result.check(runs["done"] == runs["start"], "a handler started but did not finish")
    result.check(not worker_errors(*pool), f"job:error reported: {worker_errors(*pool)[:3]}")
    per = Counter(inst for kind, _id, inst in read_run_logs(ws.runs) if kind == "start")
    result.notes.append("per worker " + "/".join(str(per[f"w{i}"]) for i in range(workers)))
    return result


# -- 2. SIGKILL at random moments ---------------------------------------------------------------------


def pick_busy_victim(
    ws: Any, live: dict[str, Any], rng: random.Random, jobs: int, round_: int, rounds: int
) -> tuple[str, Any]:
    """Choose a random live worker and wait until the drain has passed a random point of this
    round and that worker holds jobs, so every fault lands mid-work; remove it from ``live``."""
    target = int(jobs * (round_ + rng.uniform(0.3, 1.0)) / (rounds + 1))
    busy: list[str] = []

    def reached() -> bool:
        # Choose among the workers holding jobs right now (a fixed choice made up front could
        # sit idle until the drain ends on a loaded machine, and the round would never start).
        if ws.probe.count("status = 'completed'") < target:
            return False
        busy[:] = [name for name in sorted(live) if ws.probe.processing_by(name)]
        return bool(busy)

    wait_until(
        reached,
        60,
        f"drain past {target} with a worker busy",
        interval=0.005,
        on_timeout=lambda: describe(*live.values()),
    )
    victim_name = rng.choice(busy)
    return victim_name, live.pop(victim_name)


def scenario_crash(
    ws: Workspace, jobs: int, workers: int, kills: int, seed: int = 2, lock_timeout: float = 2.0, recovery: float = 0.3
) -> Result:
    rng = random.Random(seed)
    result = Result(
        "2. crash (SIGKILL)",
        f"{jobs:,} jobs, {workers} workers (killed ones replaced)",
        f"{kills} × SIGKILL of a random worker at a random point of the drain",
    )
    options = {"concurrency": 8, "mixed_delay": 0.02, "lock_timeout": lock_timeout, "stale_recovery_interval": recovery}
    live = {f"c{i}": ws.worker(f"c{i}", **options) for i in range(workers)}
    for w in live.values():
        w.wait_for("ready", READY)
    ids = set(enqueue_here(ws.db, plain_jobs(jobs)))
    result.jobs = len(ids)
    monitor = ProcessingMonitor(ws.db).start()
    next_id = workers
    killed: list[tuple[str, float, set[str], set[str]]] = []  # instance, when, held, started
    try:
        for k in range(kills):
            victim_name, victim = pick_busy_victim(ws, live, rng, jobs, k, kills)
            killed_at = time.time()
            victim.signal(signal.SIGKILL)
            result.check(victim.wait_exit(15) == -signal.SIGKILL, f"{victim_name} did not die of SIGKILL")
            held = set(ws.probe.processing_by(victim_name))
            killed.append((victim_name, killed_at, held, runs_of(ws.runs, victim_name, "start")))
            name = f"c{next_id}"
            next_id += 1
            live[name] = ws.worker(name, **options)
        wait_completed(ws, ids, 60 + jobs / 100, *live.values())
        for name, _when, _held, _started in killed:
            wait_until(lambda: not ws.probe.processing_by(name), 30, f"{name}'s jobs recovered")  # noqa: B023
    finally:
        monitor.stop()
    codes = stop_gracefully(started(list(live.values())))
    result.check(all(c == 0 for c in codes), f"survivor exit codes {codes}")

    statuses = ws.probe.statuses()
    result.lost = len(ids - {i for i, s in statuses.items() if s == "completed"})
    result.check(result.lost == 0, f"{result.lost} job(s) did not complete")
    result.check(ws.probe.integrity() == "ok", "integrity_check failed")
    runs = runs_by_kind(ws.runs)
    result.check(set(runs["start"]) == ids, "a job completed without its handler running")
    duplicated = {j for j, n in runs["start"].items() if n > 1}
    in_flight = set().union(*(held & started for _n, _t, held, started in killed)) if killed else set()
    result.duplicated = len(duplicated)
    unexplained = duplicated - in_flight
    result.check(
        not unexplained,
        f"{len(unexplained)} job(s) ran twice without being in flight in a killed worker: {sorted(unexplained)[:5]}",
    )
    result.check(all(runs["done"][j] >= 1 for j in ids), "a job completed with no finished run")
    held_total = sum(len(h) for _n, _t, h, _s in killed)
    bound = lock_timeout + recovery
    result.check(
        monitor.max_age_s <= bound + 2.0,
        f"a job stayed processing {monitor.max_age_s:.2f} s (> lock_timeout + recovery {bound:g} s + 2 s)",
    )
    recover = [monitor.last_seen.get(n, t) - t for n, t, _h, _s in killed]
    result.recover_s = max(recover) if recover else None
    result.notes.append(f"{held_total} claims held by killed workers, {len(in_flight)} of them running")
    result.notes.append(f"oldest processing lock seen {monitor.max_age_s:.2f} s (bound {bound:g} s)")
    result.check(not worker_errors(*live.values()), f"job:error: {worker_errors(*live.values())[:3]}")
    return result


# -- 3. operator races ------------------------------------------------------------------------------------
ALLOWED = {
    ("pending", "processing"),  # claim
    ("pending", "cancelled"),  # cancel
    ("pending", "pending"),  # reschedule
    ("processing", "completed"),
    ("processing", "pending"),  # retry with backoff, stale recovery, release at shutdown
    ("processing", "failed"),
    ("failed", "pending"),  # manual retry
    ("cancelled", "pending"),  # manual retry
}


def scenario_operator(ws: Workspace, jobs: int, workers: int, ops: int, seed: int = 3) -> Result:
    result = Result(
        "3. operator races",
        f"{jobs:,} jobs + a feeder (1 in 5 fails), {workers} workers, {ops:,} operator calls",
        "bulk + single cancel/retry/delete/reschedule in a loop",
    )
    watcher = ws.launcher.start("watcher", "watcher", "--db", ws.db)
    watcher.wait_for("ready", READY)
    options = {
        "concurrency": 4,
        "mixed_delay": 0.02,
        "fail_marked": True,
        "max_retries": 2,
        "base_retry_interval": 0.05,
        "print_jobs": True,
    }
    pool = [ws.worker(f"o{i}", **options) for i in range(workers)]
    for w in pool:
        w.wait_for("ready", READY)
    ids = set(enqueue_here(ws.db, [{"name": "task", "data": {"n": n, "fail": n % 5 == 0}} for n in range(jobs)]))
    feeder = ws.feeder(pause=0.01, fail_every=5)  # new work keeps arriving while the operator acts
    feeder.wait_for("ready", READY)
    operator = ws.launcher.start("operator", "operator_loop", "--db", ws.db, "--seed", seed, "--ops", ops)
    operator.finish(60 + ops / 20)
    _stop_feeder(feeder)
    ids |= _acked(feeder)
    result.jobs = len(ids)
    # Let the workers finish whatever is due now (retries spread over 30 s may stay pending).
    wait_until(
        lambda: (
            ws.probe.count("status = 'processing'") == 0
            and ws.probe.count("status = 'pending' AND next_run_at <= ?", (int(time.time() * 1000),)) == 0
        ),
        60,
        "due work drained after the operator stopped",
        interval=0.05,
        on_timeout=lambda: f"{ws.probe.status_counts()}\n{describe(*pool)}",
    )
    codes = stop_gracefully(pool)
    result.check(codes == [0] * workers, f"worker exit codes {codes}")
    head = head_seq(ws.db)
    wait_until(
        lambda: (watcher.events("change") or [{"token": 0}])[-1]["token"] >= head,
        30,
        "the watcher caught up with the change table",
        on_timeout=lambda: watcher.describe(),
    )
    watcher.signal(signal.SIGTERM)
    watcher.finish(15)

    changes = watcher.events("change")
    table_rows = change_rows(ws.db)
    result.check(
        [(c["token"], c["op"], c["job_id"], c["status"]) for c in changes] == table_rows,
        "the watcher's changes differ from the change table",
    )
    status: dict[str, str] = {}
    transitions: Counter[tuple[str, str]] = Counter()
    deleted: set[str] = set()
    bad: list[str] = []
    for c in changes:
        job_id, op, new = c["job_id"], c["op"], c["status"]
        if op == "insert":
            if job_id in status:
                bad.append(f"{job_id} inserted twice")
            status[job_id] = new
            continue
        old = status.get(job_id)
        if old is None or old == "deleted":
            bad.append(f"{job_id}: {op} {new} after {old}")
            continue
        if op == "delete":
            transitions[(old, "deleted")] += 1
            status[job_id] = "deleted"
            deleted.add(job_id)
            continue
        transitions[(old, new)] += 1
        if (old, new) not in ALLOWED:
            bad.append(f"{job_id}: {old} -> {new}")
        status[job_id] = new
    result.check(not bad, f"{len(bad)} forbidden transition(s): {bad[:5]}")

    lines = operator.lines
    op_lines = [ln for ln in lines if ln["event"] == "op"]
    events = [ln for ln in lines if ln["event"] == "event"]

    def ev(name: str) -> list[dict[str, Any]]:
        return [e for e in events if e["name"] == name]

    def bulk(op: str) -> list[dict[str, Any]]:
        return [ln for ln in op_lines if ln["op"] == op]

    bulk_ops = (("cancel_jobs", "jobs:cancelled"), ("retry_jobs", "jobs:retried"), ("delete_jobs", "jobs:deleted"))
    for op, event in bulk_ops:
        counted = [ln["count"] for ln in bulk(op) if ln["count"] > 0]
        result.check(
            sorted(counted) == sorted(e["count"] for e in ev(event)),
            f"{event} events {[e['count'] for e in ev(event)]} do not match the {op} results {counted}",
        )

    def statuses_of(line: dict[str, Any]) -> set[str]:
        s = line["status"]
        return (
            {"pending", "processing", "completed", "failed", "cancelled"}
            if s is None
            else ({s} if isinstance(s, str) else set(s))
        )

    result.check(
        all(ln["count"] == 0 for ln in bulk("cancel_jobs") if "pending" not in statuses_of(ln)),
        "cancel_jobs changed jobs with a selector that excludes pending",
    )
    result.check(
        all(ln["count"] == 0 for ln in bulk("retry_jobs") if not statuses_of(ln) & {"failed", "cancelled"}),
        "retry_jobs changed jobs with a selector that excludes failed and cancelled",
    )
    result.check(
        all(e["previous_status"] in ("failed", "cancelled") for e in ev("job:retried")),
        "job:retried from a status other than failed/cancelled",
    )

    cancels = sum(ln["count"] for ln in bulk("cancel_jobs")) + len(ev("job:cancelled"))
    retries = sum(ln["count"] for ln in bulk("retry_jobs")) + len(ev("job:retried"))
    deletes = sum(ln["count"] for ln in bulk("delete_jobs")) + len(ev("job:deleted"))
    reschedules = sum(1 for ln in op_lines if ln["op"] == "reschedule" and ln["result"] == "pending")
    result.check(
        transitions[("pending", "cancelled")] == cancels,
        f"{transitions[('pending', 'cancelled')]} cancel transitions, {cancels} reported by results/events",
    )
    retried = transitions[("failed", "pending")] + transitions[("cancelled", "pending")]
    result.check(retried == retries, f"{retried} retry transitions, {retries} reported by results/events")
    result.check(
        sum(n for (_o, new), n in transitions.items() if new == "deleted") == deletes,
        f"{len(deleted)} deletes in the feed, {deletes} reported",
    )
    result.check(
        transitions[("pending", "pending")] == reschedules,
        f"{transitions[('pending', 'pending')]} reschedules in the feed, {reschedules} returned a job",
    )

    completes = sum(len(w.events("job:complete")) for w in pool)
    fails = [ln for w in pool for ln in w.events("job:fail")]
    result.check(
        transitions[("processing", "completed")] == completes,
        f"{transitions[('processing', 'completed')]} completions in the feed, {completes} job:complete events",
    )
    result.check(
        transitions[("processing", "failed")] == sum(1 for f in fails if not f["will_retry"]),
        "job:fail (final) events do not match processing -> failed transitions",
    )
    retry_fails = sum(1 for f in fails if f["will_retry"])
    released = transitions[("processing", "pending")] - retry_fails
    result.check(
        released >= 0,
        f"{retry_fails} job:fail(willRetry) events but only "
        f"{transitions[('processing', 'pending')]} processing -> pending transitions",
    )

    # Nothing lost: every job is still there, or the feed shows who deleted it.
    remaining = ws.probe.statuses()
    lost = {j for j in ids if j not in remaining and j not in deleted}
    result.lost = len(lost)
    result.check(not lost, f"{len(lost)} job(s) vanished without a delete")
    result.check(not ws.probe.count("status = 'processing'"), "jobs left processing after a graceful stop")
    runs = runs_by_kind(ws.runs)
    twice_done = {j for j, n in runs["done"].items() if n > 1}
    result.duplicated = len(twice_done)
    result.check(not twice_done, f"{len(twice_done)} job(s) completed, then ran to completion again")
    refused = [ln for ln in op_lines if ln.get("result") == "refused"]
    odd_refusals = [
        ln
        for ln in refused
        if (ln["op"] == "cancel" and ln["current_status"] == "pending")
        or (ln["op"] == "retry" and ln["current_status"] in ("failed", "cancelled"))
    ]
    result.check(not odd_refusals, f"refused with a status the guard allows: {odd_refusals[:3]}")
    result.check(not worker_errors(*pool), f"job:error: {worker_errors(*pool)[:3]}")
    result.notes.append(
        f"feed: {sum(transitions.values())} transitions; cancelled {cancels}, retried {retries}, "
        f"deleted {deletes}, rescheduled {reschedules}, refused {len(refused)}"
    )
    return result


# -- 4. SIGTERM during load ------------------------------------------------------------------------------------
def scenario_shutdown(ws: Workspace, jobs: int, workers: int, stops: int, seed: int = 4) -> Result:
    rng = random.Random(seed)
    result = Result(
        "4. shutdown (SIGTERM)",
        f"{jobs:,} jobs, {workers} workers (stopped ones restarted)",
        f"{stops} × SIGTERM under load, shutdown_timeout 0.02 s or 10 s",
    )
    base = {"concurrency": 6, "mixed_delay": 0.06, "lock_timeout": 2.0, "stale_recovery_interval": 0.3}
    next_id = 0

    def start() -> tuple[str, Proc]:
        nonlocal next_id
        name = f"g{next_id}"
        next_id += 1
        timeout = rng.choice((0.02, 10.0))
        return name, ws.worker(name, shutdown_timeout=timeout, **base)

    live = dict(start() for _ in range(workers))
    for w in live.values():
        w.wait_for("ready", READY)
    ids = set(enqueue_here(ws.db, plain_jobs(jobs)))
    result.jobs = len(ids)
    left_for_recovery: set[str] = set()
    recover: list[float] = []
    for k in range(stops):
        victim_name, victim = pick_busy_victim(ws, live, rng, jobs, k, stops)
        stopped_at = time.monotonic()
        victim.signal(signal.SIGTERM)
        code = victim.wait_exit(60)
        result.check(code == 0, f"{victim_name} exited with {code} after SIGTERM")
        incomplete = {
            j
            for ln in victim.events("job:error")
            if ln["error_type"] == "ShutdownTimeoutError"
            for j in ln["incomplete"]
        }
        left = set(ws.probe.processing_by(victim_name))
        result.check(
            left == incomplete, f"{victim_name} left {len(left)} claims, reported {len(incomplete)} as timed out"
        )
        result.check(
            runs_of(ws.runs, victim_name, "cancelled") <= incomplete,
            f"{victim_name} cancelled handlers it did not report",
        )
        left_for_recovery |= left
        other_errors = [ln for ln in victim.events("job:error") if ln["error_type"] != "ShutdownTimeoutError"]
        result.check(not other_errors, f"{victim_name}: {other_errors[:3]}")
        name, proc = start()
        live[name] = proc
        if left:
            wait_until(
                lambda victim_name=victim_name: not ws.probe.processing_by(victim_name),
                30,
                f"{victim_name}'s timed-out jobs recovered",
            )
            recover.append(time.monotonic() - stopped_at)
    wait_completed(ws, ids, 60 + jobs / 100, *live.values())
    codes = stop_gracefully(started(list(live.values())))
    result.check(all(c == 0 for c in codes), f"exit codes {codes}")
    statuses = ws.probe.statuses()
    result.lost = len(ids - {i for i, s in statuses.items() if s == "completed"})
    result.check(result.lost == 0, f"{result.lost} job(s) did not complete")
    runs = runs_by_kind(ws.runs)
    duplicated = {j for j, n in runs["start"].items() if n > 1}
    result.duplicated = len(duplicated)
    result.check(
        duplicated <= left_for_recovery,
        f"{len(duplicated - left_for_recovery)} job(s) ran twice without a shutdown timeout leaving them",
    )
    result.check(set(runs["start"]) == ids, "a job completed without its handler running")
    result.recover_s = max(recover) if recover else None
    result.notes.append(f"{len(left_for_recovery)} job(s) left processing by a timed-out shutdown and re-run")
    return result


# -- 5. storage faults ------------------------------------------------------------------------------------
def _acked(*feeders: Proc) -> set[str]:
    return {ln["job_id"] for f in feeders for ln in f.events("acked")}


def _stop_feeder(f: Proc) -> None:
    f.send_line("stop")
    f.finish(60)


def _check_one_line_errors(result: Result, lines: list[dict[str, Any]], what: str) -> None:
    bad = [ln["message"] for ln in lines if not one_line(ln["message"])]
    result.check(not bad, f"{what}: multi-line or traceback message(s): {bad[:2]}")
    # ConnectionError, or its subclass for a store that cannot take an operation now.
    wrong = [ln for ln in lines if ln["error_type"] not in ("ConnectionError", "StoreUnavailableError")]
    result.check(not wrong, f"{what}: errors other than ConnectionError: {wrong[:2]}")


def _check_cli_refuses(
    result: Result, ws: Workspace, url: str, needles: tuple[str, ...], prefix: list[str] | None = None
) -> None:
    cli = ws.cli_worker(url, prefix=prefix)
    code = cli.wait_exit(60)
    err = cli.stderr_text().strip()
    result.check(code == 3, f"monque-tui --worker exited {code}, not 3 (store cannot be opened): {err[-300:]}")
    result.check(one_line(err) and err.startswith("monque-tui: error: "), f"CLI error not one line: {err[-300:]}")
    result.check(any(n in err for n in needles), f"CLI error does not say why ({needles}): {err}")


def scenario_readonly_dir(ws: Workspace, jobs: int) -> Result:
    result = Result(
        "5a. read-only directory",
        f"feeder + worker, {jobs} jobs queued first",
        "directory and files chmod 0555/0444 while running; restored",
    )
    prefix = unprivileged_prefix()
    if prefix is None:
        result.skipped = "running as root without setpriv: file modes do not apply to root"
        return result
    ids = set(enqueue_here(ws.db, plain_jobs(jobs)))
    w = ws.worker("ro-w", prefix=prefix, concurrency=4, delay=0.01, lock_timeout=2.0, stale_recovery_interval=0.3)
    w.wait_for("ready", READY)
    f1 = ws.feeder(prefix=prefix, pause=0.01)
    f1.wait_for("acked", READY, count=5)
    files = [p for p in (ws.db, Path(f"{ws.db}-wal"), Path(f"{ws.db}-shm")) if p.exists()]
    modes = {p: p.stat().st_mode & 0o777 for p in [ws.root, *files]}
    try:
        for p in files:
            p.chmod(0o444)
        ws.root.chmod(0o555)
        fault_at = time.monotonic()
        f2 = ws.feeder(prefix=prefix)
        (err,) = f2.wait_for("init_error", READY)
        result.check(f2.wait_exit(30) == 3, "a feeder on a read-only store did not stop with exit 3")
        _check_one_line_errors(result, [err], "new process on the read-only store")
        result.check(
            "permission denied" in err["message"] or "not writable" in err["message"] or "readonly" in err["message"],
            f"error does not say the store is read-only: {err['message']}",
        )
        _check_cli_refuses(
            result, ws, sqlite_url(str(ws.db)), ("permission denied", "not writable", "readonly"), prefix
        )
        # Processes that had the file open keep their descriptors: they go on working.
        before = len(f1.events("acked"))
        f1.wait_for("acked", 30, count=before + 5)
        result.check(w.alive(), "the running worker died when the directory became read-only")
        result.notes.append(
            f"open processes kept working ({len(f1.events('acked')) - before}+ acks during the "
            "fault); new ones refused with one line"
        )
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    cleared = time.monotonic()
    f3 = ws.feeder(prefix=prefix)
    f3.wait_for("acked", READY)
    result.recover_s = time.monotonic() - cleared
    _stop_feeder(f1)
    _stop_feeder(f3)
    acked = ids | _acked(f1, f3)
    result.jobs = len(acked)
    wait_completed(ws, acked, 60 + len(acked) / 100, w)
    result.lost = len(acked - set(ws.probe.statuses()))
    result.check(result.lost == 0, f"{result.lost} acknowledged job(s) missing")
    result.check(stop_gracefully([w]) == [0], "worker did not stop cleanly")
    result.check(integrity(ws.db) == "ok", "integrity_check failed")
    result.notes.append(f"fault lasted {cleared - fault_at:.1f} s")
    return result


def _mount_tmpfs(path: Path, size: str) -> str | None:
    """Mount a small tmpfs (root only); returns why not, or None when mounted."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return "needs root and mount(8) to create a small file system"
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True
    )
    if done.returncode != 0:
        return f"cannot mount a tmpfs here: {done.stderr.strip()}"
    return None


def scenario_disk_full(ws: Workspace, jobs: int) -> Result:
    result = Result(
        "5b. disk full",
        "feeder (2 KB payloads) + worker on a 1 MB tmpfs",
        "file system fills up; then grown to 64 MB (remount)",
    )
    mnt = ws.root / "small-fs"
    why = _mount_tmpfs(mnt, "1m")
    if why is not None:
        result.skipped = why
        return result
    db = mnt / "jobs.db"
    try:
        w = ws.worker(
            "full-w", db=db, concurrency=4, delay=0.05, lock_timeout=2.0, stale_recovery_interval=0.3, poll_interval=0.2
        )
        w.wait_for("ready", READY)
        f = ws.feeder(db=db, pad=2000, pause=0.001)
        f.wait_for("ready", READY)
        first_error = f.wait_for("enqueue_error", 120)[0]
        fault_at = time.monotonic()
        errors = f.wait_for("enqueue_error", 30, count=5)
        _check_one_line_errors(result, errors, "enqueue on a full disk")
        result.check("full" in first_error["message"], f"error does not say the disk is full: {first_error['message']}")
        result.check(w.alive() and f.alive(), "a process died when the disk filled up")
        grow = subprocess.run(["mount", "-o", "remount,size=64m", str(mnt)], capture_output=True, text=True)
        result.check(grow.returncode == 0, f"remount failed: {grow.stderr}")
        cleared = time.monotonic()
        n_err = len(f.events("enqueue_error"))
        acked_before = len(f.events("acked"))
        f.wait_for("acked", 60, count=acked_before + 1)
        result.recover_s = time.monotonic() - cleared
        f.wait_for("acked", 60, count=acked_before + 20)
        _stop_feeder(f)
        acked = _acked(f)
        result.jobs = len(acked)
        probe = StoreProbe(db)
        try:
            wait_until(
                lambda: set(acked) <= {i for i, s in probe.statuses().items() if s == "completed"},
                60 + len(acked) / 50,
                "acknowledged jobs completed after the disk grew",
                interval=0.1,
                on_timeout=lambda: f"{probe.status_counts()}\n{describe(w)}",
            )
            result.lost = len(acked - set(probe.statuses()))
        finally:
            probe.close()
        result.check(result.lost == 0, f"{result.lost} acknowledged job(s) missing")
        result.check(stop_gracefully([w]) == [0], "worker did not stop cleanly")
        result.check(integrity(db) == "ok", "integrity_check failed")
        worker_errs = worker_errors(w)
        _check_one_line_errors(
            result, [{"message": e["message"], "error_type": e["error_type"]} for e in worker_errs], "worker job:error"
        )
        runs = runs_by_kind(ws.runs)
        result.duplicated = sum(1 for n in runs["start"].values() if n > 1)
        result.notes.append(
            f"{n_err} enqueue errors and {len(worker_errs)} worker errors during "
            f"{cleared - fault_at:.1f} s of full disk"
        )
    finally:
        ws.launcher.close_all()
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
    return result


def scenario_locked(ws: Workspace, jobs: int, busy_timeout: float = 0.5) -> Result:
    result = Result(
        "5c. lock held > busy_timeout",
        f"feeder + worker, busy_timeout {busy_timeout:g} s",
        "another process holds BEGIN IMMEDIATE for several busy timeouts",
    )
    query = f"busy_timeout={busy_timeout:g}"
    ids = set(enqueue_here(ws.db, plain_jobs(jobs)))
    w = ws.worker(
        "lock-w",
        concurrency=4,
        delay=0.01,
        lock_timeout=2.0,
        stale_recovery_interval=0.3,
        poll_interval=0.2,
        url_query=query,
    )
    w.wait_for("ready", READY)
    f = ws.feeder(pause=0.01, url_query=query)
    f.wait_for("acked", READY, count=5)
    locker = ws.launcher.start("locker", "locker", "--db", ws.db, stdin=True)
    locker.wait_for("locked", READY)
    fault_at = time.monotonic()
    errors = f.wait_for("enqueue_error", 30, count=3)
    _check_one_line_errors(result, errors, "enqueue while locked")
    result.check(
        all("locked" in e["message"] and "busy_timeout" in e["message"] for e in errors),
        f"error does not say the file is locked and what to do: {errors[0]['message']}",
    )
    w.wait_for("job:error", 30)
    result.check(w.alive() and f.alive(), "a process died while the file was locked")
    locker.send_line("release")
    locker.finish(30)
    cleared = time.monotonic()
    acked_before = len(f.events("acked"))
    f.wait_for("acked", 30, count=acked_before + 1)
    result.recover_s = time.monotonic() - cleared
    _stop_feeder(f)
    acked = ids | _acked(f)
    result.jobs = len(acked)
    wait_completed(ws, acked, 60 + len(acked) / 100, w)
    result.lost = len(acked - set(ws.probe.statuses()))
    result.check(result.lost == 0, f"{result.lost} acknowledged job(s) missing")
    werrs = worker_errors(w)
    _check_one_line_errors(result, werrs, "worker job:error")
    result.check(stop_gracefully([w]) == [0], "worker did not stop cleanly")
    runs = runs_by_kind(ws.runs)
    result.duplicated = sum(1 for n in runs["start"].values() if n > 1)
    result.notes.append(
        f"{len(f.events('enqueue_error'))} enqueue errors, {len(werrs)} worker errors over "
        f"{cleared - fault_at:.1f} s of lock; worker kept retrying"
    )
    return result


def scenario_not_a_database(ws: Workspace, jobs: int) -> Result:
    result = Result(
        "5d. not a database",
        "worker and CLI worker started on the file",
        "the URL names a text file, and a file with a garbage header",
    )
    notes = ws.root / "notes.db"
    notes.write_text("shopping list: eggs, milk\n")
    garbage = ws.root / "garbage.db"
    enqueue_here(garbage, plain_jobs(10))
    with open(garbage, "r+b") as fh:
        fh.write(b"NOT A DATABASE!!" + bytes(range(84)))
    for path in (notes, garbage):
        before = path.read_bytes()
        w = ws.worker(ws.label("nodb-w"), db=path)
        (err,) = w.wait_for("init_error", READY)
        result.check(w.wait_exit(30) == 3, "worker did not stop after the open failed")
        _check_one_line_errors(result, [err], f"open {path.name}")
        result.check("not a SQLite database" in err["message"], f"unclear error: {err['message']}")
        _check_cli_refuses(result, ws, sqlite_url(str(path)), ("not a SQLite database",))
        result.check(path.read_bytes() == before, f"{path.name} was modified by a failed open")
    result.notes.append("refused at open with one line; file left untouched")
    return result


def scenario_corrupt(ws: Workspace, jobs: int, seed: int = 5) -> Result:
    result = Result(
        "5e. corrupt file",
        f"{jobs} acknowledged jobs, worker started on the damaged file",
        "pages in the middle of the file overwritten; then restored from a copy",
    )
    ids = set(enqueue_here(ws.db, [{"name": "task", "data": {"n": n, "pad": "y" * 200}} for n in range(jobs)]))
    backup = ws.root / "backup.db"
    shutil.copy(ws.db, backup)
    size = ws.db.stat().st_size
    rng = random.Random(seed)
    with open(ws.db, "r+b") as fh:
        for page in range(2, size // 4096, 2):
            fh.seek(page * 4096)
            fh.write(bytes(rng.randrange(256) for _ in range(64)))
    w = ws.worker("bad-w", concurrency=4, poll_interval=0.2)
    wait_until(
        lambda: w.events("init_error") or w.events("job:error") or not w.alive(),
        READY,
        "the worker reports the damage",
        on_timeout=w.describe,
    )
    reported = [
        {"error_type": ln["error_type"], "message": ln["message"]}
        for ln in w.events("init_error") + w.events("job:error")
    ]
    result.check(reported, f"the worker reported nothing (alive={w.alive()})")
    _check_one_line_errors(result, reported, "worker on a corrupt file")
    result.check(
        any(n in r["message"] for r in reported for n in ("malformed", "corrupt", "not a database")),
        f"unclear error: {reported[:1]}",
    )
    if w.events("init_error"):
        result.check(w.wait_exit(30) == 3, f"worker exited {w.popen.returncode} after refusing to open")
    else:
        result.check(stop_gracefully([w], 30) == [0], "worker did not stop cleanly on SIGTERM")
    result.notes.append(
        f"worker {'kept running and stopped cleanly' if w.events('ready') else 'refused at open'}: "
        f"{reported[0]['message'][:80] if reported else ''}…"
    )
    for suffix in ("-wal", "-shm"):
        Path(f"{ws.db}{suffix}").unlink(missing_ok=True)
    shutil.copy(backup, ws.db)
    cleared = time.monotonic()
    w2 = ws.worker("restored-w", concurrency=8)
    wait_completed(ws, ids, 60 + jobs / 100, w2)
    result.recover_s = time.monotonic() - cleared
    result.jobs = len(ids)
    result.lost = len(ids - set(ws.probe.statuses()))
    result.check(stop_gracefully([w2]) == [0], "worker did not stop cleanly")
    result.check(integrity(ws.db) == "ok", "integrity_check failed after restoring")
    return result


# -- 7. change-feed integrity ----------------------------------------------------------------------------------
def scenario_feed(ws: Workspace, jobs: int, producers: int, workers: int, restarts: int, seed: int = 7) -> Result:
    rng = random.Random(seed)
    result = Result(
        "7. change-feed integrity",
        f"{jobs:,} jobs, {producers} producers + {workers} workers writing",
        f"watch() consumer killed {restarts} times (SIGKILL/SIGTERM) and resumed from its last token",
    )
    watcher = ws.launcher.start("watch0", "watcher", "--db", ws.db)
    watcher.wait_for("ready", READY)
    pool = [ws.worker(f"f{i}", concurrency=10, mixed_delay=0.004) for i in range(workers)]
    per = jobs // producers
    prods = [
        ws.launcher.start(f"prod{i}", "producer", "--db", ws.db, "--count", per, "--quiet", "--tag", f"p{i}")
        for i in range(producers)
    ]
    total_changes = 3 * per * producers
    segments = [watcher]
    seen = 0
    last_token: int | None = None
    for r in range(restarts):
        target = int(total_changes * (r + rng.uniform(0.2, 1.0)) / (restarts + 1))
        current = segments[-1]
        current.wait_for("change", 120, count=max(1, target - seen))
        how = signal.SIGKILL if r % 2 == 0 else signal.SIGTERM
        current.signal(how)
        current.wait_exit(30)
        mine = current.events("change")
        seen += len(mine)
        if mine:
            last_token = mine[-1]["token"]
        args: list[Any] = ["--db", ws.db] + (["--resume-after", last_token] if last_token is not None else [])
        nxt = ws.launcher.start(f"watch{r + 1}", "watcher", *args)
        nxt.wait_for("ready", READY)
        segments.append(nxt)
    for p in prods:
        p.finish(120 + jobs / 100)
    ids = {j for p in prods for j in p.events("done")[0]["ids"]}
    result.jobs = len(ids)
    wait_completed(ws, ids, 60 + jobs / 100, *pool)
    stop_gracefully(pool)
    head = head_seq(ws.db)
    final = segments[-1]
    wait_until(
        lambda: (final.events("change") or [{"token": last_token or 0}])[-1]["token"] >= head,
        60,
        "the last watcher caught up",
        on_timeout=final.describe,
    )
    final.signal(signal.SIGTERM)
    final.finish(30)
    delivered = [(c["token"], c["op"], c["job_id"], c["status"]) for s in segments for c in s.events("change")]
    tokens = [d[0] for d in delivered]
    repeats = len(tokens) - len(set(tokens))
    result.check(tokens == sorted(set(tokens)), f"tokens not strictly increasing across restarts ({repeats} repeats)")
    truth = change_rows(ws.db)
    missing = {row[0] for row in truth} - set(tokens)
    result.check(not missing, f"{len(missing)} change(s) never delivered: {sorted(missing)[:5]}")
    result.check(delivered == truth, "delivered changes differ from the change table")
    result.duplicated = repeats
    result.lost = len(missing)
    statuses = ws.probe.statuses()
    result.check(all(statuses.get(j) == "completed" for j in ids), "a job did not complete")
    result.notes.append(
        f"{len(delivered):,} changes over {len(segments)} watcher processes, {len(truth):,} in the table"
    )
    return result


# -- runner ------------------------------------------------------------------------------------------
def run_scenario(key: str, mode: str = "quick", base: Path | None = None) -> list[Result]:
    """Run scenario ``key`` ('1'…'7', or '5a'…'5e') at the sizes of ``mode``; returns its rows."""
    sizes = SIZES[mode][key[0]]
    storage: dict[str, Callable[..., Result]] = {
        "5a": scenario_readonly_dir,
        "5b": scenario_disk_full,
        "5c": scenario_locked,
        "5d": scenario_not_a_database,
        "5e": scenario_corrupt,
    }
    simple: dict[str, Callable[..., Result]] = {
        "1": scenario_exactly_once,
        "2": scenario_crash,
        "3": scenario_operator,
        "4": scenario_shutdown,
        "7": scenario_feed,
    }
    results: list[Result] = []
    if key == "6":
        from .reliability_fuzz import run_fuzz

        with workspace(base, "s6") as ws:
            started = time.monotonic()
            result = run_fuzz(ws, **sizes)
            result.seconds = time.monotonic() - started
            results.append(result)
        return results
    keys = sorted(storage) if key == "5" else [key]
    for k in keys:
        fn = storage.get(k) or simple[k]
        with workspace(base, f"s{k}") as ws:
            started = time.monotonic()
            try:
                result = fn(ws, **sizes)
            except AssertionError as error:  # a wait that timed out: a failed scenario, not a crash
                result = Result(k, "", "", violations=[f"aborted: {str(error)[:2000]}"])
            result.seconds = time.monotonic() - started
            results.append(result)
    return results


ALL = ["1", "2", "3", "4", "5", "6", "7"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes (what make test runs)")
    p.add_argument("--scenario", action="append", default=[], help="run only this scenario (1-7, or 5a-5e); repeatable")
    p.add_argument("--out", default=None, help="markdown output [default: bench/results/reliability.md]")
    args = p.parse_args(argv)
    mode = "quick" if args.quick else "full"
    keys = args.scenario or ALL
    results: list[Result] = []
    started = time.monotonic()
    for key in keys:
        print(f"-- scenario {key} ({mode}) ...", file=sys.stderr, flush=True)
        for r in run_scenario(key, mode):
            results.append(r)
            print(("   " + r.summary()).replace("\n", "\n   "), file=sys.stderr, flush=True)
    text = table(results)
    header = (
        f"Reliability run ({mode} sizes), {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}; "
        f"total {time.monotonic() - started:.0f} s. Rerun: `python -m bench.reliability"
        f"{' --quick' if args.quick else ''}`."
    )
    print(header)
    print()
    print(text)
    out = (
        Path(args.out)
        if args.out
        else REPO_ROOT / "bench" / "results" / ("reliability-quick.md" if args.quick else "reliability.md")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(header + "\n\n" + text + "\n")
    failed = [r for r in results if not r.ok]
    for r in failed:
        print("\n" + r.summary(), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

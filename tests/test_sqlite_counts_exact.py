"""The kept counts (journal.py) stay exactly ``COUNT(*)``: whatever sequence of writes, bulk
operations, retention, crashes mid-transaction and concurrent processes (issue 26).

The property test drives every write path of the store interface (the ones the scheduler
and the console use) in random order on a real file; after each sequence the counts table
must equal a ``GROUP BY`` of the job table, durations of completed jobs included. Crashes
are real (SIGKILL of a writing process), and so are concurrent writers.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monque_engine import Attempt, JobListFilter, JobSelector, JobStatus, Monque
from monque_engine.store.base import StoreSelector
from tests.conftest import poll_until
from tests.sqlite_versions import set_back_job_columns

NAMES = ("alpha", "beta", "gamma")


#: ``schema.ERROR_MEMBER``, written out again here: the oracle does not share the code it checks.
MEMBER = "error_group IS NOT NULL AND (status = 'failed' OR (status = 'pending' AND fail_count > 0))"
GroupCounts = dict[tuple[Any, Any, Any], tuple[int, int]]


def exact_group_counts(db: Path) -> tuple[GroupCounts, GroupCounts]:
    """(kept, counted): ``(error group, name, error type) -> (failed, retrying)`` members,
    zero rows left out; a job without an error type is kept under a zero-length BLOB."""
    with sqlite3.connect(db) as conn:
        kept = {
            (group, name, error_type): (failed, retrying)
            for group, name, error_type, failed, retrying in conn.execute(
                "SELECT group_key, name, error_type, failed, retrying FROM monque_jobs_error_counts"
            )
            if failed or retrying
        }
        counted = {
            (group, name, b"" if error_type is None else error_type): (failed, retrying)
            for group, name, error_type, failed, retrying in conn.execute(
                "SELECT error_group, name, error_type, sum(status = 'failed'), sum(status = 'pending') "
                f"FROM monque_jobs NOT INDEXED WHERE {MEMBER} GROUP BY error_group, name, error_type"
            )
        }
    return kept, counted


def exact_counts(db: Path) -> tuple[dict[tuple[str, str], tuple[int, int]], dict[tuple[str, str], tuple[int, int]]]:
    """(kept, counted): ``(name, status) -> (jobs, completed duration ms)``, zero rows left out."""
    with sqlite3.connect(db) as conn:
        kept = {
            (name, status): (jobs, duration)
            for name, status, jobs, duration in conn.execute(
                "SELECT name, status, jobs, duration_ms FROM monque_jobs_counts"
            )
            if jobs or duration
        }
        counted = {
            (name, status): (jobs, duration or 0)
            for name, status, jobs, duration in conn.execute(
                "SELECT name, status, count(*), sum(CASE WHEN status = 'completed' THEN updated_at - created_at END) "
                "FROM monque_jobs GROUP BY name, status"
            )
        }
        # Jobs still in the inbox are not in the job table yet: counted when they are moved.
        assert conn.execute("SELECT count(*) FROM monque_jobs_inbox").fetchone() == (0,)
    return kept, counted


def assert_exact(db: Path) -> None:
    kept, counted = exact_counts(db)
    assert kept == counted
    kept_groups, counted_groups = exact_group_counts(db)
    assert kept_groups == counted_groups


operation = st.one_of(
    st.tuples(st.just("enqueue"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("enqueue_many"), st.sampled_from(NAMES), st.integers(1, 40)),
    st.tuples(st.just("unique"), st.sampled_from(NAMES), st.integers(0, 2)),
    st.tuples(st.just("claim"), st.sampled_from(NAMES), st.integers(1, 8)),
    st.tuples(st.just("complete"), st.integers(0, 5)),
    # An error group (none, or one of two), an error type (or none: a store caller may give no
    # attempt) and whether the fail count grows (a retry at fail count 0 is not a member).
    st.tuples(
        st.just("fail"),
        st.integers(0, 5),
        st.booleans(),
        st.sampled_from((None, "g1", "g2")),
        st.sampled_from((None, "TimeoutError")),
        st.sampled_from((1, 1, 0)),
    ),
    st.tuples(st.just("release"), st.integers(0, 5)),
    st.tuples(st.just("heartbeat"), st.just(0)),
    st.tuples(st.just("stale"), st.just(0)),
    st.tuples(st.just("cancel_one"), st.integers(0, 50)),
    st.tuples(st.just("retry_one"), st.integers(0, 50)),
    st.tuples(st.just("reschedule_one"), st.integers(0, 50)),
    st.tuples(st.just("delete_one"), st.integers(0, 50)),
    st.tuples(st.just("cancel_many"), st.sampled_from((*NAMES, None))),
    st.tuples(st.just("retry_many"), st.sampled_from((*NAMES, None))),
    st.tuples(st.just("delete_many"), st.sampled_from((*NAMES, None)), st.sampled_from((None, "failed", "completed"))),
    st.tuples(st.just("purge"), st.sampled_from(("completed", "failed"))),
    st.tuples(st.just("release_dead"), st.just(0)),
    st.tuples(st.just("streak"), st.sampled_from(NAMES), st.integers(33, 90)),
)


_fail = st.tuples(
    st.just("fail"),
    st.integers(0, 5),
    st.booleans(),
    st.sampled_from(("g1", "g2", "g1", None)),
    st.sampled_from(("TimeoutError", None)),
    st.sampled_from((1, 1, 1, 0)),
)
_claim = st.tuples(st.just("claim"), st.sampled_from(NAMES[:2]), st.integers(1, 8))
#: Error groups' paths weighted up: jobs fail (and retry) often, and every way in and out of a
#: group follows: claims of retrying jobs, releases, stale recovery, single and bulk retry,
#: cancel and delete, retention of failed jobs, a dead owner's release, unreadable payloads.
failure_operation = st.one_of(
    _fail,
    _claim,
    _fail,
    st.tuples(st.just("enqueue_many"), st.sampled_from(NAMES[:2]), st.integers(1, 12)),
    _fail,
    _claim,
    st.tuples(st.just("complete"), st.integers(0, 5)),
    st.tuples(st.just("release"), st.integers(0, 5)),
    st.tuples(st.just("stale"), st.just(0)),
    st.tuples(st.just("release_dead"), st.just(0)),
    # A pending job's payload made unreadable by hand: its next claim marks it failed
    # (claims.fail_unreadable), keeping its error group (a retrying job fails for good).
    st.tuples(st.just("corrupt"), st.integers(0, 50)),
    st.tuples(st.just("cancel_one"), st.integers(0, 50)),
    st.tuples(st.just("retry_one"), st.integers(0, 50)),
    st.tuples(st.just("reschedule_one"), st.integers(0, 50)),
    st.tuples(st.just("delete_one"), st.integers(0, 50)),
    st.tuples(st.just("cancel_many"), st.sampled_from((*NAMES[:2], None))),
    st.tuples(st.just("retry_many"), st.sampled_from((*NAMES[:2], None))),
    st.tuples(st.just("delete_many"), st.sampled_from((*NAMES[:2], None)), st.sampled_from((None, "failed"))),
    st.tuples(st.just("purge"), st.just("failed")),
)


def assert_groups_exact(db: Path) -> None:
    kept, counted = exact_group_counts(db)
    assert kept == counted


async def _run(
    db: Path,
    operations: list[tuple[Any, ...]],
    after_each: Callable[[Path], None] | None = None,
    autoclaim: bool = False,
) -> None:
    """Run ``operations`` on a store at ``db``; ``after_each(db)`` after each one, and with
    ``autoclaim`` an outcome (complete, fail, release) with nothing claimed claims first."""
    monque = Monque(f"sqlite:///{db}", recover_stale_jobs=False)
    await monque.initialize()
    store: Any = monque.store
    owner = "worker-a"
    claimed: list[Any] = []
    try:
        for op in operations:
            kind = op[0]
            if autoclaim and kind in ("complete", "fail", "release") and not claimed:
                claimed += await store.claim(NAMES[op[1] % 2], owner, 4_000_000_000_000, 4, 1000)
            now = 1_800_000_000_000 + len(claimed)
            if kind == "enqueue":
                await monque.enqueue(op[1], {"i": op[2]})
            elif kind == "enqueue_many":
                await monque.enqueue_many([{"name": op[1], "data": {"i": i}} for i in range(op[2])])
            elif kind == "unique":
                await monque.enqueue(op[1], {"u": op[2]}, unique_key=f"key-{op[2]}")
            elif kind == "streak":  # one task's loop of awaited enqueues: past 32, the inbox
                for i in range(op[2]):
                    await monque.enqueue(op[1], {"s": i})
            elif kind == "claim":
                claimed += await store.claim(op[1], owner, 4_000_000_000_000, op[2], 1000)
            elif kind in ("complete", "fail", "release") and claimed:
                job = claimed.pop(op[1] % len(claimed))
                if kind == "complete":
                    await store.complete(job.id, owner, now, None if job.repeat_interval is None else now + 1000)
                elif kind == "fail":
                    group, error_type, more = op[3], op[4], op[5]
                    attempt = None if error_type is None else Attempt(1, "failed", owner, now, now, error_type, "boom")
                    fail_count = job.fail_count + more
                    retry_at = 1_000_000_000_000 if op[2] else None  # due before fresh jobs: claimed next
                    await store.fail(job.id, owner, now, fail_count, "boom", retry_at, attempt, group)
                else:
                    await store.release([job.id], owner, now)
            elif kind == "corrupt":
                with sqlite3.connect(db) as conn:
                    pending = [row[0] for row in conn.execute("SELECT id FROM monque_jobs WHERE status = 'pending'")]
                    if pending:
                        conn.execute("UPDATE monque_jobs SET data = '{' WHERE id = ?", (pending[op[1] % len(pending)],))
            elif kind == "heartbeat":
                await store.heartbeat(owner, now)
            elif kind == "stale":
                if await store.recover_stale(10**15, now):
                    claimed.clear()
            elif kind == "release_dead":
                records = await store.owner_records(owner)
                if await store.release_unmoved_owner(owner, records, now):
                    claimed.clear()
            elif kind in ("cancel_one", "retry_one", "reschedule_one", "delete_one"):
                jobs = await monque.get_jobs(limit=100)
                if jobs:
                    job = jobs[op[1] % len(jobs)]
                    try:
                        if kind == "cancel_one":
                            await monque.cancel_job(job.id)
                        elif kind == "retry_one":
                            await monque.retry_job(job.id)
                        elif kind == "reschedule_one":
                            await monque.reschedule_job(job.id, job.next_run_at)
                        else:
                            await monque.delete_job(job.id)
                    except Exception:  # noqa: BLE001 - a guard refusing is part of the sequence
                        pass
            elif kind == "cancel_many":
                await monque.cancel_jobs(JobSelector(name=op[1]))
            elif kind == "retry_many":
                await monque.retry_jobs(JobListFilter(name=op[1]))
            elif kind == "delete_many":
                await monque.delete_jobs(JobSelector(name=op[1], status=op[2]))
            elif kind == "purge":
                await store.purge_finished(JobStatus(op[1]), 10**15)
            claimed = [job for job in claimed if job is not None]
            if after_each is not None:
                after_each(db)
    finally:
        await monque.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=25))
def test_random_sequences_keep_the_counts_exact(operations: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        db = Path(directory) / "jobs.db"
        asyncio.run(_run(db, operations))
        assert_exact(db)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(failure_operation, min_size=4, max_size=30))
def test_random_failure_sequences_keep_the_error_counts_exact(operations: list[tuple[Any, ...]]) -> None:
    """The same, with failures and every way into and out of an error group weighted up."""
    with tempfile.TemporaryDirectory() as directory:
        db = Path(directory) / "jobs.db"
        # Checked after every operation: a miss that a later one happens to undo shows too.
        start = [("enqueue_many", NAMES[0], 10), ("enqueue_many", NAMES[1], 10)]
        asyncio.run(_run(db, [*start, *operations], assert_groups_exact, autoclaim=True))
        assert_exact(db)


async def test_reads_answer_from_the_counts(tmp_path: Path) -> None:
    """``count_jobs``, stats and names agree with the job table, inbox rows included."""
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as monque:
        await monque.enqueue_many([{"name": name, "data": {}} for name in NAMES for _ in range(3)])
        for i in range(60):  # a streak: the last ones wait in the inbox while the task runs on
            await monque.enqueue("alpha", {"i": i})
        await monque.cancel_jobs(JobSelector(name="beta"))
        assert await monque.count_jobs(JobListFilter(status=JobStatus.PENDING)) == 66
        assert await monque.count_jobs(JobListFilter(name_pattern="b*")) == 3
        assert await monque.count_jobs(JobListFilter(status=[JobStatus.CANCELLED], name="beta")) == 3
        stats = await monque.get_queue_stats()
        assert (stats.pending, stats.cancelled, stats.total) == (66, 3, 69)
        counted = await monque.count_bulk("cancel", JobSelector(name="alpha"))
        assert counted == 63
        store: Any = monque.store
        assert await store.count_selected(StoreSelector(name="gamma", statuses=(JobStatus.PENDING,))) == 3


WRITER = textwrap.dedent(
    """
    import asyncio, random, sys
    from monque_engine import JobSelector, Monque

    async def main(url, seed):
        rng = random.Random(seed)
        monque = Monque(url, recover_stale_jobs=False)
        await monque.initialize()
        store = monque.store
        owner = f"w{seed}"
        print("ready", flush=True)
        while True:
            kind = rng.randrange(7)
            name = rng.choice(["alpha", "beta"])
            if kind == 0:
                await monque.enqueue_many([{"name": name, "data": {}} for _ in range(rng.randint(1, 300))])
            elif kind == 1:
                for _ in range(rng.randint(1, 80)):
                    await monque.enqueue(name, {})
            elif kind == 2:
                for job in await store.claim(name, owner, 4_000_000_000_000, 50, 1000):
                    if rng.random() < 0.7:
                        await store.complete(job.id, owner, 1_800_000_000_000, None)
                    else:
                        retry = rng.choice([None, 1_000_000_000_000])  # due before fresh jobs: claimed again
                        group = rng.choice([None, "g1", "g2"])
                        await store.fail(job.id, owner, 1_800_000_000_000, job.fail_count + 1, "x", retry, None, group)
            elif kind == 3:
                await monque.retry_jobs(JobSelector(name=name))
            elif kind == 4:
                await monque.cancel_jobs(JobSelector(name=name))
            elif kind == 5:
                await monque.delete_jobs(JobSelector(name=name, status="completed"))
            else:
                await store.recover_stale(10**15, 1_800_000_000_000)

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


def _writers(db: Path, seeds: range) -> list[subprocess.Popen[str]]:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"sqlite:///{db}", str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in seeds
    ]
    for process in processes:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready", process.stderr.read() if process.stderr else ""
    return processes


async def _reopen(db: Path) -> None:
    """A writable open moves what a killed producer left in the inbox (and recovers nothing else)."""
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False):
        pass


async def test_killed_mid_write_and_concurrent_writers_keep_the_counts_exact(tmp_path: Path) -> None:
    """Three processes write at once; each round SIGKILLs them wherever they are (inside a
    transaction, mid-streak), and the counts must still be exact: a transaction that dies is
    rolled back with its counts, one that commits brings its counts with it."""
    db = tmp_path / "jobs.db"
    await _reopen(db)
    for round_ in range(3):
        processes = _writers(db, range(round_ * 3, round_ * 3 + 3))
        try:
            goal = _feed_position(db) + 500
            await poll_until(lambda goal=goal: _feed_position(db) > goal, 30.0, "the writers made progress")
        finally:
            for process in processes:
                os.kill(process.pid, signal.SIGKILL)
                process.communicate(timeout=30)
        await _reopen(db)
        assert_exact(db)


def _feed_position(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM monque_jobs_changes").fetchone()[0])


async def test_repair_counts_puts_right_a_hand_edited_row(tmp_path: Path) -> None:
    """A row changed in the sqlite3 shell bypasses the journal: the counts drift, and
    ``monque-tui repair-counts`` recounts them (and says what was off)."""
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as monque:
        await monque.enqueue_many([{"name": "alpha", "data": {}} for _ in range(5)])
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE monque_jobs SET status = 'failed' WHERE id IN (SELECT id FROM monque_jobs LIMIT 2)")
    kept, counted = exact_counts(db)
    assert kept != counted
    done = subprocess.run(
        [sys.executable, "-m", "monque_tui", "repair-counts", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "alpha pending: 5 -> 3" in done.stdout and "alpha failed: 0 -> 2" in done.stdout
    assert_exact(db)
    again = subprocess.run(
        [sys.executable, "-m", "monque_tui", "repair-counts", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0 and "already exact" in again.stdout


async def test_a_version_4_file_gets_its_counts_built(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as monque:
        await monque.enqueue_many([{"name": name, "data": {}} for name in NAMES for _ in range(4)])
        await monque.cancel_jobs(JobSelector(name="beta"))
    with sqlite3.connect(db) as conn:  # as a version 4 file was: no counts, no change_seq, no time limits
        conn.execute("DROP TABLE monque_jobs_counts")
        set_back_job_columns(conn, 4)
    await _reopen(db)
    assert_exact(db)
    kept, _ = exact_counts(db)
    assert kept[("beta", "cancelled")] == (4, 0) and kept[("alpha", "pending")] == (4, 0)


def test_only_the_journal_writes_the_feed_and_the_counts() -> None:
    """One write path: no other module of the store (or the console) writes the change table,
    the counts table or the error counts table."""
    root = Path(__file__).resolve().parents[1]
    writes = ("INSERT INTO {", "DELETE FROM {", "UPDATE {", "REPLACE INTO {")
    tables = (".changes}", ".counts}", ".error_counts}", "_changes", "_counts")
    offenders = []
    for path in sorted([*(root / "monque_engine").rglob("*.py"), *(root / "monque_tui").rglob("*.py")]):
        if path.name == "journal.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if any(w in line for w in writes) and any(table in line for table in tables):
                offenders.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert offenders == []

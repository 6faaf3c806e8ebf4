"""The errors view on SQLite reads the error counts the journal keeps (schema version 6): a
row per group, not a row per failure, and always what a ``GROUP BY`` over the jobs says.

Failures go through the real processor (so the group keys are the ones it computes), and the
bulk actions through ``Monque``; the oracle is a ``GROUP BY`` written out here. The cost is
checked without a clock: the SQLite virtual machine's steps for the same groups holding 20 or
2,000 failures each must not grow with the failures (they did, linearly, when the view read
every member of the errors index).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from monque_engine import JobSelector, JobStatus, Monque, NonRetryableError
from monque_engine.errorgroups import error_group_key, hour_window
from monque_engine.store.sqlite import reads
from monque_engine.store.sqlite.journal import Journal
from monque_engine.store.sqlite.schema import SCHEMA_VERSION, Tables
from tests.conftest import EventRecorder
from tests.sqlite_versions import set_back_job_columns

#: ``schema.ERROR_MEMBER``, written out again: the oracle does not share the code it checks.
MEMBER = "error_group IS NOT NULL AND (status = 'failed' OR (status = 'pending' AND fail_count > 0))"


class OrderMissing(NonRetryableError):
    """Final at the first failure."""


class SecretMissing(NonRetryableError):
    """Final at the first failure."""


def _handler(job: Any) -> None:
    kind = job.data["kind"]
    if kind == "missing":
        raise OrderMissing(f"order {job.data['n']} not found")
    if kind == "timeout":
        raise TimeoutError(f"upstream took {job.data['n']} s")  # retried in an hour: stays retrying
    if kind == "key":
        raise SecretMissing("no key 'signing_secret'")


def _grouped(db: Path, name: str | None = None, since_ms: int = 0) -> dict[str, tuple[Any, ...]]:
    """``key -> (name, type, members, retrying, first seen, last seen)`` from the job table."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT error_group, name, error_type, count(*), sum(status = 'pending'), min(updated_at), max(updated_at) "
            f"FROM monque_jobs NOT INDEXED WHERE {MEMBER} AND (name = ?1 OR ?1 IS NULL) AND updated_at >= ?2 "
            "GROUP BY error_group",
            (name, since_ms),
        ).fetchall()
    return {row[0]: tuple(row[1:]) for row in rows}


async def _assert_view_is_a_group_by(m: Monque, db: Path, name: str | None = None, since_ms: int = 0) -> None:
    since = datetime.fromtimestamp(since_ms / 1000, UTC) if since_ms else None
    groups = await m.error_groups(name=name, since=since)
    grouped = _grouped(db, name, since_ms)
    shown = {g.key: (g.name, g.error_type, g.count, g.retrying, g.last_seen_ms) for g in groups}
    assert shown == {key: (*row[:4], row[5]) for key, row in grouped.items()}
    for group in groups:  # every failure of this test is seconds old: all in the last hour
        # First seen and the sparkline count failed attempts too (issue 40): a retried
        # member's earlier failures are not taken back.
        assert group.first_seen_ms <= grouped[group.key][4]
        assert sum(group.per_minute) >= group.count
    if name is None and not since_ms:
        with sqlite3.connect(db) as conn:
            kept = conn.execute(
                "SELECT coalesce(sum(failed), 0), coalesce(sum(retrying), 0) FROM monque_jobs_error_counts"
            )
            assert kept.fetchone() == (sum(g.count - g.retrying for g in groups), sum(g.retrying for g in groups))


async def _run_until(m: Monque, fails: int, completes: int = 0) -> None:
    recorder = EventRecorder().attach(m, "job:fail", "job:complete")
    await m.start()
    await recorder.wait_for("job:fail", count=fails)
    await recorder.wait_for("job:complete", count=completes)
    await m.stop()


def _monque(db: Path) -> Monque:
    m = Monque(f"sqlite:///{db}", max_retries=3, base_retry_interval=3600, poll_interval=0.05)
    for name in ("orders", "mail"):
        m.register(name, _handler)
    return m


#: 14 failures: "orders" 5 missing and 3 key (final), "mail" 4 timeouts (retrying) and 2 key.
PAYLOADS: list[tuple[str, dict[str, Any]]] = [
    *[("orders", {"kind": "missing", "n": n}) for n in range(5)],
    *[("orders", {"kind": "key", "n": n}) for n in range(3)],
    *[("mail", {"kind": "timeout", "n": n}) for n in range(4)],
    *[("mail", {"kind": "key", "n": n}) for n in range(2)],
    ("orders", {"kind": "ok", "n": 0}),
]


async def _fail_payloads(m: Monque) -> None:
    for name, payload in PAYLOADS:
        await m.enqueue(name, payload)
    await _run_until(m, fails=14, completes=1)


async def test_the_errors_view_totals_equal_a_group_by_after_failures_retries_and_bulk_actions(
    tmp_path: Path,
) -> None:
    db = tmp_path / "jobs.db"
    m = _monque(db)
    await m.initialize()
    try:
        await _fail_payloads(m)
        await _assert_view_is_a_group_by(m, db)
        groups = {(g.name, g.error_type): g for g in await m.error_groups()}
        assert len(groups) == 4 and groups[("mail", "TimeoutError")].retrying == 4
        missing = groups[("orders", f"{__name__}.OrderMissing")].key
        orders_key = groups[("orders", f"{__name__}.SecretMissing")].key

        # Singles: a retry and a delete of failed jobs, a cancel of a retrying one (all leave
        # their group), a reschedule of a retrying one (stays).
        failed = await m.get_jobs(status=JobStatus.FAILED, name="orders")
        await m.retry_job(next(j for j in failed if j.error_group == orders_key).id)
        await m.delete_job(next(j for j in failed if j.error_group == missing).id)
        retrying = await m.get_jobs(status=JobStatus.PENDING, name="mail")
        await m.cancel_job(retrying[0].id)
        await m.reschedule_job(retrying[1].id, datetime.now(UTC) + timedelta(hours=2))
        await _assert_view_is_a_group_by(m, db)
        # The retried job runs at once and fails again: back in its group.
        await _run_until(m, fails=1)
        await _assert_view_is_a_group_by(m, db)
        assert [g.count for g in await m.error_groups() if g.key == orders_key] == [3]

        # Bulk: retry a group, cancel the retrying jobs, delete a group, purge the failed rest.
        assert (await m.retry_jobs(JobSelector(error_group=missing))).count == 4
        await _assert_view_is_a_group_by(m, db)
        assert (await m.cancel_jobs(JobSelector(name="mail"))).count == 3
        await _assert_view_is_a_group_by(m, db)
        assert (await m.delete_jobs(JobSelector(error_group=orders_key))).count == 3
        await _assert_view_is_a_group_by(m, db)
        assert await m.store.purge_finished(JobStatus.FAILED, 10**15) == 2  # type: ignore[attr-defined]
        await _assert_view_is_a_group_by(m, db)
        assert await m.error_groups() == []
    finally:
        await m.close()


async def test_name_and_since_filters_count_the_members_they_keep(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = _monque(db)
    await m.initialize()
    try:
        await _fail_payloads(m)
        await _assert_view_is_a_group_by(m, db, name="mail")
        assert await m.error_groups(name="nobody") == []
        assert await m.error_groups(since=datetime.now(UTC) + timedelta(minutes=1)) == []
        # Members since an instant between others: range counts, not the kept totals.
        with sqlite3.connect(db) as conn:
            times = sorted(t for (t,) in conn.execute(f"SELECT updated_at FROM monque_jobs WHERE {MEMBER}"))
        for since in (times[0], times[len(times) // 2], times[-1]):
            await _assert_view_is_a_group_by(m, db, since_ms=since)
            await _assert_view_is_a_group_by(m, db, name="orders", since_ms=since)
    finally:
        await m.close()


def _seed_failures(db: Path, per_group: int) -> None:
    """Three groups of ``per_group`` failed jobs each, two hours old, and one recent failure
    per group; written in bulk and adopted by the journal (as the demo's seed is)."""
    asyncio.run(_create(db))
    now = int(datetime.now(UTC).timestamp() * 1000)
    rows = []
    for g, message in enumerate(("disk full", "quota exceeded", "host unreachable")):
        key = error_group_key("orders", "app.Error", message)
        for n in range(per_group + 1):
            at = now - (7_200_000 if n < per_group else 1_000)
            rows.append((f"{g:04x}{n:020x}", "orders", "{}", "failed", at, 1, message, at, at, "app.Error", key))
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO monque_jobs (id, name, data, status, next_run_at, fail_count, fail_reason, created_at, "
            "updated_at, error_type, error_group) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        ids = json.dumps([row[0] for row in rows])
        Journal(Tables("monque_jobs")).adopt(conn, "id IN (SELECT value FROM json_each(?))", (ids,))
        conn.execute("COMMIT")
    finally:
        conn.close()


async def _create(db: Path) -> None:
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False):
        pass


def _steps(db: Path) -> int:
    """Virtual machine steps (in hundreds) of the errors view's read, on a plain connection."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn = sqlite3.connect(db)
    try:
        conn.set_progress_handler(count, 100)
        hour = hour_window(int(datetime.now(UTC).timestamp() * 1000))
        assert reads.error_groups(Tables("monque_jobs"), None, None, hour).op(conn)
    finally:
        conn.close()
    return steps


def test_the_errors_view_reads_a_row_per_group_not_per_failure(tmp_path: Path) -> None:
    few, many = tmp_path / "few.db", tmp_path / "many.db"
    _seed_failures(few, 20)
    _seed_failures(many, 2_000)
    steps_few, steps_many = _steps(few), _steps(many)
    # Reading every member: ~100x the steps. Seeks per group: the same few, give or take a
    # B-tree level.
    assert steps_many <= 2 * steps_few + 5, (steps_few, steps_many)


async def test_a_version_5_file_gets_its_error_counts_built(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = _monque(db)
    await m.initialize()
    try:
        await _fail_payloads(m)
    finally:
        await m.close()
    with sqlite3.connect(db) as conn:  # as a version 5 file was: no error counts, no time limits
        conn.execute("DROP TABLE monque_jobs_error_counts")
        set_back_job_columns(conn, 5)
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as reopened:
        await _assert_view_is_a_group_by(reopened, db)
        assert sum(g.count for g in await reopened.error_groups()) == 14
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM monque_jobs_meta WHERE key = 'schema_version'").fetchone() == (
            SCHEMA_VERSION,
        )


async def test_repair_counts_recounts_the_error_groups(tmp_path: Path) -> None:
    """A failure written in the sqlite3 shell is in no kept count until ``repair-counts``."""
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        job = await m.enqueue("orders", {})
        with sqlite3.connect(db) as conn:
            conn.execute(
                "UPDATE monque_jobs SET status = 'failed', fail_count = 1, error_type = 'E', error_group = 'g' "
                "WHERE id = ?",
                (job.id,),
            )
        assert await m.error_groups() == []  # drifted: the kept counts never saw it
        differed = await m.repair_counts()
        assert ("orders", "failed in error group g", 0, 1) in (differed or [])
        assert [(g.key, g.count) for g in await m.error_groups()] == [("g", 1)]
        assert await m.repair_counts() == []

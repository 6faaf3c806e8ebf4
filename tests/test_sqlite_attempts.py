"""SQLite side of issue 12: schema v2 (attempts, error_type, error_group and the errors
index) from the v1 fixture, and the query plans that keep grouping and group actions
responsive at 1M jobs (index-only grouping; see bench/error_groups_bench.py for timings)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from test_sqlite_schema import V1_IDS, v1_copy

from monque_engine import JobSelector, Monque
from monque_engine.job import JobSort
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.sqlite.queries import page_query, selector_where
from monque_engine.store.sqlite.schema import SCHEMA_VERSION


def _columns(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[1] for row in conn.execute("PRAGMA table_info(monque_jobs)")]
    finally:
        conn.close()


async def test_v1_file_is_upgraded_past_v2_and_records_attempts(tmp_path: Path, recorder) -> None:
    path = v1_copy(tmp_path)
    assert "attempts" not in _columns(path)
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False, max_retries=1, poll_interval=0.05)
    await m.initialize()
    try:
        assert SCHEMA_VERSION >= 2
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("SELECT value FROM monque_jobs_meta WHERE key='schema_version'").fetchone() == (
                SCHEMA_VERSION,
            )
            indexes = {row[1] for row in conn.execute("PRAGMA index_list(monque_jobs)")}
        finally:
            conn.close()
        assert {"attempts", "error_type", "error_group"} <= set(_columns(path))
        assert "monque_jobs_errors" in indexes
        jobs = {job.id: job for job in await m.get_jobs(limit=10)}
        assert set(jobs) == V1_IDS and all(job.attempts == () for job in jobs.values())
        # an old pending job now fails with a recorded attempt and a group
        rec = recorder(m, "job:fail")

        def boom(job):
            raise LookupError(f"template {job.id} missing")

        m.register("email.send", boom)
        await m.start()
        [event] = await rec.wait_for("job:fail")
        stored = await m.get_job(event.job.id)
        assert stored.attempts[-1].error_type == "LookupError" and stored.error_group is not None
        [group] = await m.error_groups()
        assert group.pattern == "template <id> missing" and group.count == 1
    finally:
        await m.close()


def _plan(path: Path, sql: str, params: tuple[object, ...] = ()) -> str:
    conn = sqlite3.connect(path)
    try:
        return " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
    finally:
        conn.close()


async def test_grouping_and_group_actions_use_the_partial_errors_index(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{path}")
    await m.initialize()
    await m.error_groups()  # INDEXED BY: raises if the planner could not use the index
    await m.close()
    where, params = selector_where(StoreSelector(error_group="0123456789abcdef", updated_before_ms=5))
    plan = _plan(path, f"SELECT id FROM monque_jobs WHERE {where}", tuple(params))
    assert "USING COVERING INDEX monque_jobs_errors" in plan, plan
    assert JobSelector(error_group="k").error_group == "k"
    # a group's page in the console's sorts: ids picked from the covering index, then 50 rows read
    for sort in (
        JobSort("created_at", "desc"),
        JobSort("id", "asc"),
        JobSort("updated_at", "desc"),
        JobSort("next_run_at", "asc"),
    ):
        sql, params = page_query(
            "id, name", "monque_jobs", StoreListFilter(error_group="0123456789abcdef"), sort, "forward", None, 51
        )
        plan = _plan(path, sql, tuple(params))
        assert "SEARCH monque_jobs USING COVERING INDEX monque_jobs_errors (error_group=?)" in plan, plan


async def test_a_history_edited_into_invalid_json_starts_over_instead_of_failing_writes(tmp_path: Path, raw) -> None:
    """Recording is diagnostic: a damaged ``attempts`` value must never block an outcome write
    (the fail path, a completion, or stale recovery's bulk update)."""
    m = Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False, lock_timeout=1)
    await m.initialize()
    try:
        store = m.store
        job = await m.enqueue("x")
        await store.execute_write(
            lambda c: c.execute("UPDATE monque_jobs SET attempts = 'not json{' WHERE id = ?", (job.id,))
        )
        await raw(m).set(job.id, status="processing", claimedBy="ghost", lockedAt=1_000, lastHeartbeat=1_000)
        assert await m.recover_stale_jobs() == 1
        stored = await m.get_job(job.id)
        assert [a.outcome for a in stored.attempts] == ["stale"]
        await store.execute_write(
            lambda c: c.execute("UPDATE monque_jobs SET attempts = '{\"a\": 1}' WHERE id = ?", (job.id,))
        )
        [claimed] = await store.claim("x", "me", 10**13, 1, 30_000)
        done = await store.complete(claimed.id, "me", 10**13 + 5, None)
        assert done is not None and [a.outcome for a in (await m.get_job(job.id)).attempts] == ["completed"]
    finally:
        await m.close()

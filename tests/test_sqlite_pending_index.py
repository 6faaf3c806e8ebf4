"""The pending index covers every count of pending jobs; files made before that get it once.

SQLite 3.40 does not count a column that a partial index's WHERE fixes as covered, so
``count(*) … WHERE status = 'pending'`` over an index of (name, next_run_at) looked up every
row (1.4 s for 1M pending jobs). The index now holds ``status`` too.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from monque_engine import Monque
from monque_engine.store.sqlite import migrations
from monque_engine.store.sqlite.schema import Tables

OLD_DEFINITION = "CREATE INDEX monque_jobs_pending ON monque_jobs(name, next_run_at) WHERE status = 'pending'"
PENDING_COUNTS = [
    "SELECT count(*) FROM monque_jobs WHERE status = 'pending'",
    "SELECT name, count(*) FROM monque_jobs WHERE status = 'pending' GROUP BY name",
    "SELECT name, sum(next_run_at <= 0), min(next_run_at) FROM monque_jobs WHERE status = 'pending' GROUP BY name",
]


def _index_sql(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT sql FROM sqlite_master WHERE name = 'monque_jobs_pending'").fetchone()[0]


def _plans(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [" ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")) for sql in PENDING_COUNTS]


async def _seed(db: Path) -> list[str]:
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as monque:
        jobs = await monque.enqueue_many([{"name": f"n{i % 3}", "data": {"i": i}} for i in range(30)])
    return sorted(job.id for job in jobs)


def _ids(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM monque_jobs ORDER BY id")]


async def test_counts_of_pending_jobs_are_answered_from_the_index_alone(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    await _seed(db)
    assert "(name, next_run_at, status)" in _index_sql(db)
    for plan in _plans(db):
        assert "COVERING INDEX monque_jobs_pending" in plan, plan


async def test_a_file_with_the_old_index_gets_the_new_one_on_a_writable_open_only(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    ids = await _seed(db)
    with sqlite3.connect(db) as conn:  # as a file made before the change has it
        conn.execute("DROP INDEX monque_jobs_pending")
        conn.execute(OLD_DEFINITION)
    assert not any("COVERING" in plan for plan in _plans(db))

    async with Monque(f"sqlite:///{db}?mode=ro", recover_stale_jobs=False) as reader:
        assert (await reader.get_queue_stats()).pending == 30
    assert _index_sql(db) == OLD_DEFINITION  # a read-only open never writes

    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as writer:
        assert (await writer.get_queue_stats()).pending == 30
    assert "(name, next_run_at, status)" in _index_sql(db)
    assert all("COVERING INDEX monque_jobs_pending" in plan for plan in _plans(db))
    assert _ids(db) == ids


def test_the_upgrade_runs_once(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    tables = Tables("monque_jobs")
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE monque_jobs (id TEXT PRIMARY KEY, name TEXT, next_run_at INTEGER, status TEXT)")
        conn.execute(OLD_DEFINITION)
        assert migrations.upgrade_pending_index(conn, tables) is True
        assert migrations.upgrade_pending_index(conn, tables) is False
        conn.execute("DROP INDEX monque_jobs_pending")  # create_indexes=False files may have none
        assert migrations.upgrade_pending_index(conn, tables) is False

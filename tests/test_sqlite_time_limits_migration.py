"""SQLite schema version 7 (issue 37 part 1, ADR 0019): a version 6 file gains the columns
``timeout_ms`` and ``over_limit_at`` on open, keeps its jobs (which have no limit of their
own), and stores limits from then on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from monque_engine import JobStatus, Monque
from monque_engine.store.sqlite.schema import SCHEMA_VERSION


def _columns(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[1] for row in conn.execute("PRAGMA table_info(monque_jobs)")}


async def test_a_version_6_file_gains_the_time_limit_columns_and_keeps_its_jobs(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        old = await m.enqueue("old", {"kept": True})
    with sqlite3.connect(db) as conn:  # as a version 6 file was
        for column in ("timeout_ms", "over_limit_at"):
            conn.execute(f"ALTER TABLE monque_jobs DROP COLUMN {column}")
        conn.execute("UPDATE monque_jobs_meta SET value = 6 WHERE key = 'schema_version'")
    assert not {"timeout_ms", "over_limit_at"} & _columns(db)
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        kept = await m.get_job(old.id)
        assert kept is not None and kept.status is JobStatus.PENDING and kept.data == {"kept": True}
        assert kept.timeout is None and kept.over_limit_at_ms is None
        new = await m.enqueue("new", timeout=12)
        stored = await m.get_job(new.id)
        assert stored is not None and stored.timeout == 12
    assert {"timeout_ms", "over_limit_at"} <= _columns(db)
    with sqlite3.connect(db) as conn:
        version = conn.execute("SELECT value FROM monque_jobs_meta WHERE key = 'schema_version'").fetchone()[0]
    assert int(version) == SCHEMA_VERSION == 7

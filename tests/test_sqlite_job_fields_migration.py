"""SQLite schema version 7 (issue 37 part 1, ADR 0019): a version 6 file gains the columns
``timeout_ms`` and ``over_limit_at`` on open, keeps its jobs (which have no limit of their
own), and stores limits from then on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from monque_engine import Job, JobStatus, Monque
from monque_engine.run_progress import Progress
from monque_engine.store.sqlite.schema import SCHEMA_VERSION
from tests.sqlite_versions import set_back_job_columns


def _columns(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[1] for row in conn.execute("PRAGMA table_info(monque_jobs)")}


async def test_a_version_6_file_gains_the_time_limit_columns_and_keeps_its_jobs(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        old = await m.enqueue("old", {"kept": True})
    with sqlite3.connect(db) as conn:  # as a version 6 file was
        set_back_job_columns(conn, 6)
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
    assert int(version) == SCHEMA_VERSION


async def test_a_version_7_file_gains_the_running_job_columns_and_keeps_its_jobs(tmp_path: Path) -> None:
    """Version 8 (stop request, progress, result): an old file's jobs read as having none,
    and a job imported with them keeps them."""
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        old = await m.enqueue("old", {"kept": True}, timeout=5)
    with sqlite3.connect(db) as conn:
        set_back_job_columns(conn, 7)
    assert not {"stop_requested_at", "progress", "result"} & _columns(db)
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        kept = await m.get_job(old.id)
        assert kept is not None and kept.data == {"kept": True} and kept.timeout == 5
        assert kept.stop_requested_at_ms is None and kept.progress is None and kept.result is None
    assert {"stop_requested_at", "progress", "result"} <= _columns(db)


async def test_running_job_fields_round_trip_through_sqlite_and_documents(tmp_path: Path) -> None:
    """The version 8 fields as stored, read back and written as a MongoDB document; odd
    stored values (a hand edit) read as absent instead of making the job unreadable."""
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        job = await m.enqueue("work", {"n": 1})
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE monque_jobs SET stop_requested_at = 1700000000000, "
            'progress = \'{"fraction":0.25,"message":"rows","at":1700000000001}\', result = \'{"ok":[1,2]}\' '
            "WHERE id = ?",
            (job.id,),
        )
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        stored = await m.get_job(job.id)
    assert stored is not None
    assert stored.stop_requested_at_ms == 1700000000000 and stored.result == {"ok": [1, 2]}
    assert stored.progress == Progress(0.25, "rows", 1700000000001) and stored.progress.percent == 25
    doc = stored.to_document()
    assert doc["progress"]["fraction"] == 0.25 and doc["result"] == {"ok": [1, 2]} and "stopRequestedAt" in doc
    assert Job.from_document(doc) == stored
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE monque_jobs SET progress = 'half', result = '{not json' WHERE id = ?", (job.id,))
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as m:
        odd = await m.get_job(job.id)
    assert odd is not None and odd.progress is None and odd.result is None
    assert Progress.from_mapping({"fraction": 1.5, "at": 1}, lambda at: 1) is None

"""SQLite schema version 3 (issue 13): the fleet tables, created by the migration from a
version-1 file (``tests/fixtures/monque_v1.db``) and by a new file alike."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from monque_engine import Monque
from monque_engine.store.sqlite.schema import SCHEMA_VERSION

FIXTURE = Path(__file__).parent / "fixtures" / "monque_v1.db"
FLEET_TABLES = {"monque_jobs_instances", "monque_jobs_control", "monque_jobs_counters"}


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


def version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT value FROM monque_jobs_meta WHERE key = 'schema_version'").fetchone()[0])
    finally:
        conn.close()


async def test_a_version_1_file_is_upgraded_to_the_fleet_tables_with_its_jobs_intact(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    shutil.copy(FIXTURE, path)
    assert not FLEET_TABLES & tables(path)
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await m.initialize()
    try:
        assert SCHEMA_VERSION >= 3 and version(path) == SCHEMA_VERSION
        assert tables(path) >= FLEET_TABLES
        assert await m.count_jobs() == 4
        assert await m.pause("email.send") is True
        assert list(await m.paused()) == ["email.send"]
        assert await m.instances() == []
    finally:
        await m.close()


async def test_a_new_file_gets_the_fleet_tables(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    m = Monque(f"sqlite:///{path}")
    await m.initialize()
    await m.close()
    assert tables(path) >= FLEET_TABLES and version(path) == SCHEMA_VERSION


async def test_a_file_opened_with_skip_index_creation_is_still_migrated(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    shutil.copy(FIXTURE, path)
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False, skip_index_creation=True)
    await m.initialize()
    try:
        assert tables(path) >= FLEET_TABLES
        assert await m.queue_health() != []
    finally:
        await m.close()

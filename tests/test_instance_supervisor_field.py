"""The instance registry's ``supervisor`` (issue 38 part 4, schema version 9, ADR 0019): the id of
the supervisor that started a worker process (``--processes``), on both stores, read leniently."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_mongo_fleet import NOW, fleet_store

from monque_engine import Monque
from monque_engine.job import InstanceRecord
from monque_engine.scheduler.fleet import SUPERVISOR_ENV
from monque_engine.store.sqlite.schema import SCHEMA_VERSION
from monque_tui.worker import child_link
from tests.sqlite_versions import set_back_job_columns


def _registry_columns(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[1] for row in conn.execute("PRAGMA table_info(monque_jobs_instances)")}


async def _register(url: str) -> list[str | None]:
    async with Monque(url, recover_stale_jobs=False) as m:
        m.register("work", lambda job: None)
        await m.start()
        infos = await m.instances()
        await m.stop()
    return [info.supervisor for info in infos if info.id == m.instance_id]


async def test_a_worker_records_the_supervisor_named_in_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    assert await _register(url) == [None]
    monkeypatch.setenv(SUPERVISOR_ENV, "host:7:abc")
    assert await _register(url) == ["host:7:abc"]


async def test_a_version_8_file_gains_the_supervisor_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "jobs.db"
    url = f"sqlite:///{db}"
    async with Monque(url, recover_stale_jobs=False) as m:
        await m.enqueue("old", {"kept": True})
    with sqlite3.connect(db) as conn:
        set_back_job_columns(conn, 8)
    assert "supervisor" not in _registry_columns(db)
    monkeypatch.setenv(SUPERVISOR_ENV, "sup-1")
    assert await _register(url) == ["sup-1"]
    assert "supervisor" in _registry_columns(db)
    with sqlite3.connect(db) as conn:
        version = conn.execute("SELECT value FROM monque_jobs_meta WHERE key = 'schema_version'").fetchone()[0]
    assert int(version) == SCHEMA_VERSION == 9


async def test_a_version_2_file_upgrades_through_the_registry_table_and_its_column(tmp_path: Path) -> None:
    """Version 3 creates the registry with today's layout (supervisor included): version 9 must not add it twice."""
    db = tmp_path / "jobs.db"
    url = f"sqlite:///{db}"
    async with Monque(url, recover_stale_jobs=False) as m:
        await m.enqueue("old")
    with sqlite3.connect(db) as conn:
        set_back_job_columns(conn, 2)
        for table in ("instances", "control", "counters"):
            conn.execute(f"DROP TABLE IF EXISTS monque_jobs_{table}")
    assert await _register(url) == [None]
    assert "supervisor" in _registry_columns(db)


async def test_mongo_registry_keeps_the_supervisor_and_reads_an_odd_one_as_none() -> None:
    store, _, database = fleet_store()
    record = InstanceRecord("w1", "h", 1, "v", NOW - 1, 1_000, {"a": 1}, 0, 0, 0, NOW, supervisor="sup-9")
    await store.upsert_instance(record)
    assert await store.list_instances() == [record]
    assert database["monque_jobs_instances"].sync.find_one({"_id": "w1"})["supervisor"] == "sup-9"
    plain = InstanceRecord("w2", "h", 2, "v", NOW - 1, 1_000, {}, 0, 0, 0, NOW)
    await store.upsert_instance(plain)
    assert "supervisor" not in database["monque_jobs_instances"].sync.find_one({"_id": "w2"})
    database["monque_jobs_instances"].sync.update_one({"_id": "w2"}, {"$set": {"supervisor": 5}})
    assert [r.supervisor for r in await store.list_instances()] == ["sup-9", None]


def test_the_supervisor_and_the_engine_name_one_variable() -> None:
    assert child_link.SUPERVISOR_ENV == SUPERVISOR_ENV

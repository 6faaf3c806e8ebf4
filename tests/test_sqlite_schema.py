"""Whose file is it, which version, and read-only opens (issue 9, item 7).

``tests/fixtures/monque_v1.db`` was written by the base commit (6b33060), whose schema is
version 1: four jobs (one cancelled, one with a unique key, one far in the future, one
recurring). Every test works on a copy in ``tmp_path``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from monque_engine import ConnectionError, Monque
from monque_engine.store import StoreOpenOptions
from monque_engine.store.sqlite import SqliteStore, migrations
from monque_engine.store.sqlite.schema import SCHEMA_VERSION, Tables

FIXTURE = Path(__file__).parent / "fixtures" / "monque_v1.db"
V1_IDS = {
    "6b11055c259a3b8d24122905",
    "6b11055c259a3b8d24122906",
    "6b11055c259a3b8d24122907",
    "6b11055c259a3b8d24122908",
}


def fingerprint(path: Path) -> tuple[str, int, list[str]]:
    """The file's bytes, its mtime, and which side files exist next to it."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


def v1_copy(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.db"
    shutil.copy(FIXTURE, path)
    return path


async def upgraded_copy(tmp_path: Path) -> Path:
    """The v1 fixture upgraded to this code's version by one read-write open (a read-only
    open only accepts a file at exactly this version, see ADR 0006)."""
    path = v1_copy(tmp_path)
    writer = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await writer.initialize()
    await writer.close()
    return path


def foreign_file(tmp_path: Path) -> Path:
    path = tmp_path / "crm.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('Ada')")
    conn.commit()
    conn.close()
    return path


def journal_mode(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


# -- not ours ---------------------------------------------------------------------------------------
async def test_another_applications_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = foreign_file(tmp_path)
    before = fingerprint(path)
    m = Monque(f"sqlite:///{path}")
    with pytest.raises(ConnectionError) as info:
        await m.initialize()
    message = str(info.value)
    assert "another application's SQLite database (tables: customers)" in message
    assert "\n" not in message and "point the URL at a new file" in message
    assert fingerprint(path) == before  # no tables added, no WAL switch, no side files
    assert journal_mode(path) == "delete"


async def test_a_table_with_our_name_but_not_ours_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE monque_jobs (id INTEGER PRIMARY KEY, what TEXT)")
    conn.commit()
    conn.close()
    before = fingerprint(path)
    with pytest.raises(ConnectionError, match="already has a table named monque_jobs that Monque did not create"):
        await Monque(f"sqlite:///{path}").initialize()
    assert fingerprint(path) == before


async def test_a_second_collection_may_join_a_monque_file(tmp_path: Path) -> None:
    path = v1_copy(tmp_path)
    m = Monque(f"sqlite:///{path}", collection_name="reports", recover_stale_jobs=False)
    await m.initialize()
    try:
        await m.enqueue("build")
        assert len(await m.get_jobs()) == 1
    finally:
        await m.close()


async def test_an_empty_file_becomes_a_monque_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    m = Monque(f"sqlite:///{path}")
    await m.initialize()
    await m.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM monque_jobs_meta WHERE key='schema_version'").fetchone() == (SCHEMA_VERSION,)
    conn.close()


# -- versions ---------------------------------------------------------------------------------------
async def test_the_version_1_fixture_opens_and_its_jobs_are_all_there(tmp_path: Path) -> None:
    path = v1_copy(tmp_path)
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await m.initialize()
    try:
        jobs = {job.id: job for job in await m.get_jobs(limit=10)}
        assert set(jobs) == V1_IDS
        assert {job.name for job in jobs.values()} == {"email.send", "report.build", "nightly.cleanup"}
        assert any(job.repeat_interval for job in jobs.values())
        await m.enqueue("email.send", {"to": "c@example.com"})  # and it takes new work
    finally:
        await m.close()


async def test_a_newer_schema_version_is_refused_and_the_file_left_alone(tmp_path: Path) -> None:
    path = v1_copy(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE monque_jobs_meta SET value = 99 WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    before = fingerprint(path)
    with pytest.raises(ConnectionError) as info:
        await Monque(f"sqlite:///{path}").initialize()
    message = str(info.value)
    assert f"schema version 99, newer than the {SCHEMA_VERSION} this monque_engine knows" in message
    assert "upgrade monque_engine" in message and "\n" not in message
    assert fingerprint(path) == before


def _in_transaction(path: Path, action: object) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            action(conn)  # type: ignore[operator]
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()


def _version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT value FROM monque_jobs_meta WHERE key='schema_version'").fetchone()[0])
    finally:
        conn.close()


def test_the_runner_applies_steps_in_order_from_the_files_version(tmp_path: Path) -> None:
    path = v1_copy(tmp_path)
    tables = Tables("monque_jobs")
    seen: list[tuple[int, int]] = []

    def step(version: int) -> migrations.Migration:
        def run(conn: sqlite3.Connection, t: Tables) -> None:
            seen.append((version, _stored(conn)))
            if version == 2:  # a real change: a column the code of version 2 would use
                conn.execute(f"ALTER TABLE {t.jobs} ADD COLUMN priority INTEGER NOT NULL DEFAULT 0")

        return run

    def _stored(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT value FROM monque_jobs_meta WHERE key='schema_version'").fetchone()[0])

    steps = [(2, step(2)), (3, step(3)), (4, step(4))]
    applied: list[int] = []
    _in_transaction(path, lambda conn: applied.extend(migrations.migrate(conn, tables, 1, steps=steps, target=4)))
    assert applied == [2, 3, 4]
    assert seen == [(2, 1), (3, 2), (4, 3)]  # each step sees the version before it
    assert _version(path) == 4
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*), sum(priority) FROM monque_jobs").fetchone() == (4, 0)
    conn.close()
    # Starting from 3, only 4 runs.
    seen.clear()
    applied.clear()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE monque_jobs_meta SET value = 3 WHERE key='schema_version'")
    conn.close()
    _in_transaction(path, lambda conn: applied.extend(migrations.migrate(conn, tables, 3, steps=steps, target=4)))
    assert applied == [4] and [v for v, _ in seen] == [4]


def test_a_failing_step_leaves_the_file_at_its_old_version(tmp_path: Path) -> None:
    path = v1_copy(tmp_path)
    tables = Tables("monque_jobs")

    def add_column(conn: sqlite3.Connection, t: Tables) -> None:
        conn.execute(f"ALTER TABLE {t.jobs} ADD COLUMN priority INTEGER NOT NULL DEFAULT 0")

    def broken(conn: sqlite3.Connection, t: Tables) -> None:
        raise RuntimeError("step 3 is broken")

    with pytest.raises(RuntimeError, match="step 3 is broken"):
        _in_transaction(
            path, lambda conn: migrations.migrate(conn, tables, 1, steps=[(2, add_column), (3, broken)], target=3)
        )
    assert _version(path) == 1
    conn = sqlite3.connect(path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(monque_jobs)")]
    conn.close()
    assert "priority" not in columns  # step 2 was rolled back with step 3


@pytest.mark.parametrize("steps", [[(3, lambda c, t: None)], [(2, lambda c, t: None), (2, lambda c, t: None)]])
def test_the_runner_refuses_steps_that_are_not_one_per_version(steps: list[tuple[int, migrations.Migration]]) -> None:
    conn = sqlite3.connect(":memory:")
    with pytest.raises(RuntimeError, match="ascending, one per version"):
        migrations.migrate(conn, Tables("monque_jobs"), 1, steps=steps, target=3)


def test_the_shipped_migrations_reach_the_current_version() -> None:
    assert [version for version, _ in migrations.MIGRATIONS] == list(range(2, SCHEMA_VERSION + 1))


# -- read-only ----------------------------------------------------------------------------------------
async def test_read_only_never_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    with pytest.raises(ConnectionError, match=r"does not exist, and a read-only open .* never creates one"):
        await Monque(f"sqlite:///{path}?mode=ro").initialize()
    assert list(tmp_path.iterdir()) == []


async def test_read_only_session_leaves_the_file_unchanged(tmp_path: Path) -> None:
    path = await upgraded_copy(tmp_path)
    digest, mtime, _ = fingerprint(path)
    m = Monque(f"sqlite:///{path}?mode=ro", recover_stale_jobs=False)
    await m.initialize()
    try:
        assert {job.id for job in await m.get_jobs(limit=10)} == V1_IDS
        assert (await m.get_queue_stats()).pending == 3
        assert await m.count_jobs() == 4
        page = await m.get_jobs_with_cursor(limit=2)
        assert len(page.jobs) == 2
        stream = await m.open_watch()
        await stream.aclose()  # type: ignore[attr-defined]
        with pytest.raises(ConnectionError, match=r"open read-only \(mode=ro\)"):
            await m.enqueue("email.send")
        with pytest.raises(ConnectionError, match="read-only"):
            await m.cancel_job(next(iter(V1_IDS)))
    finally:
        await m.close()
    assert fingerprint(path)[:2] == (digest, mtime)
    assert journal_mode(path) == "wal"


async def test_read_only_sees_what_a_writer_commits(tmp_path: Path) -> None:
    path = await upgraded_copy(tmp_path)
    writer = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    reader = Monque(f"sqlite:///{path}?mode=ro", recover_stale_jobs=False)
    await writer.initialize()
    await reader.initialize()
    try:
        job = await writer.enqueue("email.send", {"to": "d@example.com"})
        assert (await reader.get_job(job.id)) is not None
    finally:
        await reader.close()
        await writer.close()


@pytest.mark.parametrize("kind", ["foreign", "empty", "newer"])
async def test_read_only_refuses_files_it_cannot_read_as_a_queue(tmp_path: Path, kind: str) -> None:
    if kind == "foreign":
        path, needle = foreign_file(tmp_path), "another application's SQLite database"
    elif kind == "empty":
        path, needle = tmp_path / "empty.db", "has no Monque collection 'monque_jobs' yet"
        path.touch()
    else:
        path, needle = v1_copy(tmp_path), "newer than the"
        conn = sqlite3.connect(path)
        conn.execute("UPDATE monque_jobs_meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION + 1,))
        conn.commit()
        conn.close()
    digest, mtime, _ = fingerprint(path)
    with pytest.raises(ConnectionError, match=needle):
        await Monque(f"sqlite:///{path}?mode=ro").initialize()
    assert fingerprint(path)[:2] == (digest, mtime)


async def test_mode_rw_requires_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConnectionError, match="does not exist, and mode=rw never creates one"):
        await Monque(f"sqlite:///{tmp_path / 'missing.db'}?mode=rw").initialize()
    assert list(tmp_path.iterdir()) == []


def test_bad_mode_is_a_url_error() -> None:
    from monque_engine.store.sqlite.url import InvalidSqliteUrlError, parse_sqlite_url

    with pytest.raises(InvalidSqliteUrlError, match="mode must be rwc, rw or ro"):
        parse_sqlite_url("sqlite:///x.db?mode=readonly")


async def test_store_level_open_checks_before_any_write(tmp_path: Path) -> None:
    """The store refuses before its write thread switches the file to WAL."""
    path = foreign_file(tmp_path)
    store = SqliteStore.from_url(f"sqlite:///{path}")
    with pytest.raises(migrations.ForeignDatabaseError):
        await store.open(StoreOpenOptions())
    await store.close()
    assert journal_mode(path) == "delete"
    assert sorted(os.listdir(tmp_path)) == ["crm.db"]


async def test_a_read_only_monque_initializes_with_defaults_but_cannot_start(tmp_path: Path) -> None:
    path = await upgraded_copy(tmp_path)
    m = Monque(f"sqlite:///{path}?mode=ro")  # stale recovery on by default: skipped, it would write
    await m.initialize()
    try:
        m.register("email.send", lambda job: None)
        with pytest.raises(ConnectionError, match="open read-only, so this Monque cannot process jobs"):
            await m.start()
    finally:
        await m.close()


async def test_integer_columns_name_the_columns_the_ddl_declares_integer(tmp_path: Path) -> None:
    """The inbox view CASTs by ``INTEGER_COLUMNS``; a column typed otherwise in the DDL would
    stop SQLite flattening the view into pages (a full scan and sort at 1M jobs)."""
    from monque_engine.store.sqlite.schema import INTEGER_COLUMNS, JOB_COLUMNS

    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False):
        pass
    with sqlite3.connect(db) as conn:
        declared = {row[1]: row[2] for row in conn.execute("PRAGMA table_info(monque_jobs)")}
    # change_seq is bookkeeping, never a job field: the inbox view does not carry it.
    assert declared.pop("change_seq") == "INTEGER"
    assert set(declared) == set(JOB_COLUMNS)
    assert {column for column, kind in declared.items() if kind == "INTEGER"} == INTEGER_COLUMNS
    assert {kind for column, kind in declared.items() if column not in INTEGER_COLUMNS} == {"TEXT"}


async def test_an_upgrade_waits_until_older_workers_stop_running_jobs(tmp_path: Path) -> None:
    """A worker of the file's older version, still running, went on claiming and completing
    jobs after a newer process upgraded the file: it checks the version only when it opens,
    and it keeps no counts, so they read wrong afterwards (a migration probe). The upgrade is
    refused while such a worker's claims have fresh heartbeats; once they stop, it goes on."""
    import time

    path = v1_copy(tmp_path)
    job_id = sorted(V1_IDS)[0]
    now = int(time.time() * 1000)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE monque_jobs SET status = 'processing', claimed_by = 'old-worker', locked_at = ?, "
            "last_heartbeat = ?, heartbeat_interval = 30000 WHERE id = ?",
            (now, now, job_id),
        )
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    with pytest.raises(ConnectionError, match="workers of that older version are running jobs on it") as refused:
        await m.initialize()
    assert "old-worker" in str(refused.value) and "stop them" in str(refused.value)
    assert _version(path) == 1 and hashlib.sha256(path.read_bytes()).hexdigest() == before
    with sqlite3.connect(path) as conn:  # the old worker stopped (or died two intervals ago)
        conn.execute("UPDATE monque_jobs SET last_heartbeat = ? WHERE id = ?", (now - 61_000, job_id))
    conn.close()
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await m.initialize()
    try:
        assert _version(path) == SCHEMA_VERSION
        assert (await m.get_job(job_id)).status.value == "processing"  # nothing else changed
    finally:
        await m.close()


async def test_a_version_3_file_without_version_2s_columns_is_upgraded(tmp_path: Path) -> None:
    """The development line between 2e3d907 and 179062e (never released) wrote version 3 files
    whose version 2 was an empty placeholder: every open failed with "no such column:
    error_group" (a migration probe). The upgrade adds the missing columns; nothing is lost."""
    path = v1_copy(tmp_path)
    with sqlite3.connect(path) as conn:  # version 3 as that line wrote it: v3's tables, not v2's columns
        conn.execute("UPDATE monque_jobs_meta SET value = 3 WHERE key = 'schema_version'")
        for statement in Tables("monque_jobs").fleet_ddl():
            conn.execute(statement)
    conn.close()
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await m.initialize()
    try:
        assert _version(path) == SCHEMA_VERSION
        assert {job.id for job in await m.get_jobs(limit=10)} == V1_IDS
        assert list(await m.error_groups()) == []  # the errors view reads the new columns
    finally:
        await m.close()

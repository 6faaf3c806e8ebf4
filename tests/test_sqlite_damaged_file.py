"""A SQLite file damaged under a running process stops it taking work (issue 25, point 8).

Random bytes written over the database file left the process enqueueing as before: five
further ``enqueue`` calls succeeded, a read that met a damaged page said "malformed", and
the next enqueue (an append to the inbox, on pages the process had cached) succeeded again.
Once the store knows the file is damaged, every operation now fails with one clear
``StoreDamagedError`` (how to check the file, what to do), reported once as ``job:error``.

Real files, damaged with plain file writes while the store has them open.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from monque_engine import ConnectionError, Monque, StoreDamagedError
from monque_engine.store.sqlite import SqliteStore
from monque_engine.store.sqlite.identity import FileIdentity, is_damage_error
from tests.conftest import EventRecorder

PAGE = 4096
JOBS = 10_000


async def _seed(url: str) -> None:
    async with Monque(url) as m:
        for start in range(0, JOBS, 1000):
            await m.enqueue_many(
                [{"name": "n", "data": {"i": i, "pad": "x" * 200}} for i in range(start, start + 1000)]
            )


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[tuple[Monque, Path, EventRecorder]]:
    """A store of 10,000 jobs (checkpointed into the file), open in this process."""
    path = tmp_path / "jobs.db"
    await _seed(f"sqlite:///{path}")
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await m.initialize()
    events = EventRecorder().attach(m, "job:error")
    try:
        yield m, path, events
    finally:
        await m.close()


def _overwrite(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as file:
        file.seek(offset)
        file.write(data)


async def _streak(m: Monque, count: int = 40) -> int:
    """``count`` awaited enqueues in one loop turn (past the inbox's STREAK: appends to the
    inbox, which touch none of the damaged pages); how many succeeded before one raised."""
    done = 0
    try:
        for i in range(count):
            await m.enqueue("n", {"after": i})
            done += 1
    except StoreDamagedError:
        pass
    return done


def _damaged(payload: Any) -> bool:
    return isinstance(payload.error, StoreDamagedError)


def _says_what_to_do(message: str, path: Path) -> None:
    assert f"{path} is damaged" in message, message
    assert f"sqlite3 {path} 'PRAGMA integrity_check'" in message, message
    assert "restore a backup" in message and ".recover" in message, message


async def test_a_damaged_page_met_by_a_read_fails_every_later_operation(
    opened: tuple[Monque, Path, EventRecorder],
) -> None:
    m, path, events = opened
    assert await _streak(m) == 40  # the inbox path works before the damage
    size = path.stat().st_size
    _overwrite(path, (size // 2) // PAGE * PAGE, bytes(16 * PAGE))  # zeroed b-tree pages mid-file
    with pytest.raises(StoreDamagedError) as raised:
        for skip in range(0, JOBS, 1000):  # read every row: some lie on the zeroed pages
            await m.get_jobs(limit=1000, skip=skip)
    _says_what_to_do(str(raised.value), path)
    assert "database disk image is malformed" in str(raised.value)

    assert await _streak(m) == 0  # the inbox append never reads a damaged page, and still fails
    with pytest.raises(StoreDamagedError):
        await m.enqueue_many([{"name": "n", "data": {}}])
    with pytest.raises(StoreDamagedError):
        await m.get_queue_stats()
    with pytest.raises(StoreDamagedError):
        await m.pause("n")
    assert isinstance(m.store.health_error(), StoreDamagedError)
    [event] = await events.wait_for("job:error", where=_damaged)  # said once, however many met it
    _says_what_to_do(str(event.error), path)
    assert len(events.of("job:error")) == 1


async def test_an_overwritten_header_fails_the_next_enqueue(opened: tuple[Monque, Path, EventRecorder]) -> None:
    """Nothing SQLite reads: the header is checked after every commit, before the caller is
    told the write succeeded."""
    m, path, events = opened
    _overwrite(path, 0, os.urandom(100))  # the header alone: no page SQLite reads is damaged
    assert await _streak(m) == 0
    with pytest.raises(StoreDamagedError, match="header was overwritten"):
        await m.enqueue("n", {})
    [event] = await events.wait_for("job:error", where=_damaged)
    _says_what_to_do(str(event.error), path)


async def test_an_idle_process_notices_an_overwritten_header(tmp_path: Path) -> None:
    """No operation at all: the maintenance tick looks at the header, as it stats the path."""
    path = tmp_path / "jobs.db"
    await _seed(f"sqlite:///{path}")
    store = SqliteStore.from_url(f"sqlite:///{path}", maintenance_interval=0.05)
    m = Monque(store, recover_stale_jobs=False)
    await m.initialize()
    try:
        events = EventRecorder().attach(m, "job:error")
        _overwrite(path, 0, os.urandom(2 * PAGE))
        [event] = await events.wait_for("job:error", where=_damaged)
        assert "header was overwritten" in str(event.error)
        with pytest.raises(StoreDamagedError):
            await m.enqueue("n", {})
    finally:
        await m.close()


async def test_a_store_closed_after_damage_closes_quietly_and_reopens_with_the_open_error(
    opened: tuple[Monque, Path, EventRecorder],
) -> None:
    m, path, _ = opened
    _overwrite(path, 0, os.urandom(3 * PAGE))
    with pytest.raises(StoreDamagedError):
        await m.enqueue("n", {})
    await m.close()
    again = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    with pytest.raises(ConnectionError, match="not a SQLite database or is corrupt"):
        await again.initialize()


def test_only_damage_counts_as_damage(tmp_path: Path) -> None:
    """SQLITE_CORRUPT and SQLITE_NOTADB only: "malformed JSON" (a bad value, not a bad file)
    and a busy file never mark the store damaged."""
    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError) as json_error:
        conn.execute("SELECT json('{')").fetchone()
    assert "malformed JSON" in str(json_error.value)
    assert not is_damage_error(json_error.value)
    path = tmp_path / "not-a-db"
    path.write_bytes(os.urandom(2 * PAGE))
    with pytest.raises(sqlite3.DatabaseError) as notadb:
        sqlite3.connect(path).execute("SELECT * FROM sqlite_master").fetchall()
    assert is_damage_error(notadb.value)
    busy = sqlite3.OperationalError("database is locked")
    assert not is_damage_error(busy)
    assert not is_damage_error(ValueError("database disk image is malformed"))


def test_a_journal_mode_switch_is_not_damage(tmp_path: Path) -> None:
    """Header bytes 18-19 change when another process switches a file to WAL (a read-only
    store may have it open then): only the fixed fields count."""
    path = tmp_path / "rollback.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
    identity = FileIdentity(str(path))
    identity.capture()
    try:
        with closing(sqlite3.connect(path)) as conn:
            assert conn.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
        identity.check()
        _overwrite(path, 21, b"\x00")  # a payload fraction: fixed, so damage
        with pytest.raises(StoreDamagedError, match="header was overwritten"):
            identity.check()
    finally:
        identity.close()

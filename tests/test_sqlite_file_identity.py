"""A deleted or replaced SQLite file is noticed, never silently written to (issue 9, item 6).

Real files, a real running ``Monque``: the test deletes the file, or restores a backup
over it with ``os.replace``, exactly as an operator would, and checks that the process
fails loudly (``is_healthy()`` false, a ``job:error``, ``ConnectionError`` on writes) and
never acknowledges a write that went to the unlinked file.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from monque_engine import ConnectionError, Job, Monque, StoreLostError
from monque_engine.store.sqlite import SqliteStore
from monque_engine.store.sqlite.identity import FileLostError
from tests.conftest import SHORT_INTERVALS, EventRecorder, poll_until


def backup(path: Path, to: Path) -> None:
    """A consistent copy through SQLite's backup API, as an operator's backup tool would make."""
    source, target = sqlite3.connect(path), sqlite3.connect(to)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def ids_in(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {row[0] for row in conn.execute("SELECT id FROM monque_jobs")}
    finally:
        conn.close()


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[tuple[Monque, Path, EventRecorder]]:
    path = tmp_path / "jobs.db"
    # A short maintenance tick so an idle process notices within the test's patience.
    store = SqliteStore.from_url(f"sqlite:///{path}", maintenance_interval=0.05)
    m = Monque(store, **SHORT_INTERVALS)
    await m.initialize()
    done: list[str] = []

    async def handler(job: Job) -> None:
        done.append(job.id)

    m.register("work", handler)
    events = EventRecorder().attach(m, "job:error")
    await m.start()
    first = await m.enqueue("work", {"n": 1})
    await poll_until(lambda: first.id in done, message="the first job ran")
    assert m.is_healthy()
    try:
        yield m, path, events
    finally:
        await m.close()


def lost(payload: Any) -> bool:
    return isinstance(payload.error, FileLostError)


async def test_deleted_file_fails_writes_and_health(running: tuple[Monque, Path, EventRecorder]) -> None:
    m, path, events = running
    os.unlink(path)
    with pytest.raises(ConnectionError, match=r"jobs\.db was deleted while this process had it open.*restart"):
        await m.enqueue("work", {"n": 2})
    assert m.is_healthy() is False
    [event] = await events.wait_for("job:error", where=lost)
    assert "was deleted" in str(event.error) and str(path) in str(event.error)
    with pytest.raises(ConnectionError, match="was deleted"):  # every later write too
        await m.enqueue("work", {"n": 3})


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="where a moved file went is read from /proc")
async def test_a_moved_file_is_named_where_it_went_and_moving_it_back_keeps_every_commit(
    running: tuple[Monque, Path, EventRecorder],
) -> None:
    """A rename read "was deleted ... restart the process", and a restart made a new, empty
    store at the path and lost the commits left in the WAL beside it (a resource-exhaustion
    probe). The error says where the file went and how to keep them."""
    m, path, _ = running
    acknowledged = [job.id for job in await m.enqueue_many([{"name": "later", "data": {"n": n}} for n in range(50)])]
    moved = path.with_name("moved.db")
    os.rename(path, moved)
    with pytest.raises(ConnectionError, match="was moved to") as raised:
        await m.enqueue("work", {"n": 2})
    said = str(raised.value)
    assert str(moved) in said and "move the file back" in said and "was deleted" not in said
    await m.close()
    os.rename(moved, path)  # as the message says
    again = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await again.initialize()
    try:
        assert {job.id for job in await again.get_jobs(name="later", limit=100)} == set(acknowledged)
    finally:
        await again.close()


async def test_replaced_file_is_reported_and_its_jobs_not_ignored_silently(
    running: tuple[Monque, Path, EventRecorder], tmp_path: Path
) -> None:
    m, path, events = running
    copy = tmp_path / "restore.db"
    backup(path, copy)
    conn = sqlite3.connect(copy)  # the restored file gets a job of its own
    conn.execute("UPDATE monque_jobs SET id = 'restoredjob0000000000000' WHERE 1")
    conn.commit()
    conn.close()
    os.replace(copy, path)
    for side in ("-wal", "-shm"):  # a careful restore removes the old side files with the file
        Path(f"{path}{side}").unlink(missing_ok=True)
    # Nothing is written by the test: the maintenance tick (or the poll's reads) notice it.
    [event] = await events.wait_for("job:error", where=lost)
    assert "was replaced by another file" in str(event.error) and "restart the process" in str(event.error)
    assert m.is_healthy() is False
    with pytest.raises(ConnectionError, match="was replaced"):
        await m.enqueue("work", {"n": 2})
    # The file at the path is exactly the restored one: nothing of this process went into it.
    await m.close()
    assert ids_in(path) == {"restoredjob0000000000000"}


async def test_the_loss_is_reported_once_however_often_the_engine_meets_it(
    running: tuple[Monque, Path, EventRecorder],
) -> None:
    """The poll loop retries its claim every poll interval, the heartbeat beats, callers write:
    each met the loss and each sent a ``job:error``, several a second for as long as the
    process ran (a worker's log filled with the same line). It is said once."""
    m, path, events = running
    claims_after_loss = [0]
    claim = m.store.claim

    async def counted(*args: Any, **kwargs: Any) -> Any:
        if m.store.health_error() is not None:
            claims_after_loss[0] += 1
        return await claim(*args, **kwargs)

    m.store.claim = counted  # type: ignore[method-assign]
    os.unlink(path)
    for n in range(3):
        with pytest.raises(StoreLostError, match="was deleted"):
            await m.enqueue("work", {"n": n})
    await poll_until(lambda: claims_after_loss[0] >= 3, message="the poll loop met the loss three times")
    errors = events.of("job:error")
    assert len(errors) == 1 and isinstance(errors[0].error, StoreLostError)


async def test_a_store_opened_again_reports_its_own_loss(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    m = Monque(SqliteStore.from_url(f"sqlite:///{path}", maintenance_interval=0.05), **SHORT_INTERVALS)
    events = EventRecorder().attach(m, "job:error")
    for round_ in range(2):
        await m.initialize()
        os.unlink(path)
        with pytest.raises(StoreLostError):
            await m.enqueue("work", {"n": round_})
        await events.wait_for("job:error", count=round_ + 1, where=lost)
        await m.close()
        for side in ("-wal", "-shm"):
            Path(f"{path}{side}").unlink(missing_ok=True)
    assert len(events.of("job:error")) == 2


@pytest.mark.parametrize("inline", [False, True], ids=["write-thread", "inline"])
async def test_a_write_committed_to_a_replaced_file_is_not_acknowledged(tmp_path: Path, inline: bool) -> None:
    """The file is replaced *inside* the write transaction: the commit lands in the old inode,
    so the caller must get ConnectionError, not success."""
    path = tmp_path / "jobs.db"
    store = SqliteStore.from_url(f"sqlite:///{path}")
    m = Monque(store, **SHORT_INTERVALS)
    await m.initialize()
    copy = tmp_path / "restore.db"
    backup(path, copy)

    def write_then_restore(conn: sqlite3.Connection) -> str:
        conn.execute("INSERT INTO monque_jobs_meta(key, value) VALUES ('probe', 1)")
        os.replace(copy, path)  # an operator restores a backup while the write is in flight
        for side in ("-wal", "-shm"):
            Path(f"{path}{side}").unlink(missing_ok=True)
        return "written"

    try:
        with pytest.raises(ConnectionError, match="was replaced"):
            # The store's own write path (inline: the loop-thread fast path enqueues use).
            await store._write(write_then_restore, inline=inline)
        assert m.store.health_error() is not None
        conn = sqlite3.connect(path)
        assert conn.execute("SELECT count(*) FROM monque_jobs_meta WHERE key = 'probe'").fetchone() == (0,)
        conn.close()
    finally:
        await m.close()


async def test_reads_from_a_replaced_file_fail_too(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{path}", **SHORT_INTERVALS)
    await m.initialize()
    try:
        job = await m.enqueue("work")
        empty = tmp_path / "empty.db"
        shutil.copy(path, empty)
        os.replace(empty, path)
        with pytest.raises(ConnectionError, match="was replaced"):
            await m.get_job(job.id)
    finally:
        await m.close()


async def test_an_unchanged_file_stays_healthy_through_many_writes(tmp_path: Path) -> None:
    m = Monque(f"sqlite:///{tmp_path / 'jobs.db'}", **SHORT_INTERVALS)
    await m.initialize()
    try:
        await m.enqueue_many([{"name": "work", "data": {"n": n}} for n in range(200)])
        for n in range(20):
            await m.enqueue("work", {"n": n})
        assert m.store.health_error() is None
    finally:
        await m.close()


def test_a_disk_io_error_says_what_to_check() -> None:
    """SQLite reports a write the system refused (a file past ``ulimit -f``, a failing
    device) as a bare "disk I/O error"; the wrapped error names the usual causes."""
    from monque_engine.store.sqlite.sqlerrors import wrap_error

    wrapped = wrap_error(sqlite3.OperationalError("disk I/O error"), lambda: "SQLite database /x/jobs.db")
    assert str(wrapped).startswith("SQLite database /x/jobs.db: disk I/O error (")
    assert "ulimit -f" in str(wrapped) and "free space" in str(wrapped)
    other = wrap_error(sqlite3.OperationalError("database or disk is full"), lambda: "SQLite database /x/jobs.db")
    assert str(other) == "SQLite database /x/jobs.db: database or disk is full"


async def test_a_relative_path_keeps_naming_its_file_after_the_process_changes_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sqlite:///jobs.db`` is resolved once, at open: an ``--app`` whose setup or handler
    calls ``os.chdir`` made every later check stat ``jobs.db`` in the new directory, so the
    store called its file deleted (a worker then stopped with exit 3, a console said "restart"),
    and new read connections opened, or created, another ``jobs.db`` there."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(home)
    m = Monque("sqlite:///jobs.db", **SHORT_INTERVALS)
    events = EventRecorder().attach(m, "job:error")
    await m.initialize()
    try:
        await m.enqueue("work", {"n": 1})
        monkeypatch.chdir(elsewhere)
        assert m.store.health_error() is None
        await m.enqueue("work", {"n": 2})
        assert (await m.get_queue_stats("work")).total == 2
        assert m.store.health_error() is None
        assert events.of("job:error") == []
        assert not (elsewhere / "jobs.db").exists()
        assert len(ids_in(home / "jobs.db")) == 2
    finally:
        await m.close()


@pytest.mark.parametrize(
    ("words", "passes"),
    [
        ("database is locked", True),
        ("database or disk is full", True),
        ("disk I/O error", True),
        ("attempt to write a readonly database", False),
        ("UNIQUE constraint failed: monque_jobs.id", False),
    ],
)
def test_only_what_may_pass_later_is_store_unavailable(words: str, passes: bool) -> None:
    """SQLite's errors as the engine sees them: a lock, a full disk or an I/O error may pass
    (a completion is written again, ADR 0026); a read-only file or a constraint never will."""
    from monque_engine.errors import StoreUnavailableError
    from monque_engine.store.sqlite.sqlerrors import wrap_error

    wrapped = wrap_error(sqlite3.OperationalError(words), lambda: "SQLite database jobs.db")
    assert isinstance(wrapped, ConnectionError)
    assert isinstance(wrapped, StoreUnavailableError) is passes, wrapped


async def test_a_moved_file_is_never_named_by_a_descriptor_since_reused(tmp_path: Path) -> None:
    """The descriptor the move is read from is shared and closed once its file left its path
    (another store opening closes such descriptors): its number then named another file, and
    the message told the operator to ``mv b.db-shm a.db`` (a review). Such a move reads as
    the file being gone, never as another file's name."""
    first = Monque(f"sqlite:///{tmp_path / 'a.db'}", recover_stale_jobs=False)
    await first.initialize()
    try:
        await first.enqueue("work", {"n": 1})
        os.rename(tmp_path / "a.db", tmp_path / "moved.db")
        second = Monque(f"sqlite:///{tmp_path / 'b.db'}", recover_stale_jobs=False)
        await second.initialize()  # closes the descriptors of files no longer at their path
        try:
            # whatever takes the freed number
            with open(tmp_path / "other.txt", "w"), pytest.raises(ConnectionError) as raised:
                await first.enqueue("work", {"n": 2})
            said = str(raised.value)
            assert "b.db" not in said and "other.txt" not in said, said
        finally:
            await second.close()
    finally:
        await first.close()

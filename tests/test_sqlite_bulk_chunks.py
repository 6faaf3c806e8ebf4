"""Bulk actions and retention write in bounded transactions, one purger per file (issue 26).

A bulk retry of 95k jobs held the write lock 12.8 s and a purge of 1M jobs 31 s, so other
workers' completions and heartbeats failed with "database is locked". Now each chunk of
``BULK_CHUNK`` jobs is its own transaction, with a pause between; "never more than counted"
still holds across the chunks; and only one process purges a file at a time.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monque_engine import JobListFilter, JobRetention, JobSelector, JobStatus, Monque
from monque_engine.store.sqlite import management, retention
from monque_engine.store.sqlite import store as sqlite_store
from monque_engine.store.sqlite.journal import Journal


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(management, "BULK_CHUNK", 10)  # bulk actions
    monkeypatch.setattr(retention, "BULK_CHUNK", 10)  # retention's purge writes the same chunks
    return 10


def _spy(monkeypatch: pytest.MonkeyPatch, method: str, each: Any = None) -> list[int]:
    """Rows each call of a journal method took, in order (one call per chunk transaction)."""
    sizes: list[int] = []
    real = getattr(Journal, method)

    def spy(self: Journal, conn: sqlite3.Connection, *args: Any) -> Any:
        before = conn.total_changes
        result = real(self, conn, *args)
        sizes.append(conn.total_changes - before)
        if each is not None:
            each(len(sizes))
        return result

    monkeypatch.setattr(Journal, method, spy)
    return sizes


async def test_a_bulk_delete_goes_a_chunk_per_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_chunks: int
) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False) as monque:
        await monque.enqueue_many([{"name": "n", "data": {"i": i}} for i in range(35)])
        chunks = _spy(monkeypatch, "delete_where")
        result = await monque.delete_jobs(JobSelector(name="n"))
        assert result.count == 35
        assert len(chunks) == 4  # 10 + 10 + 10 + 5 jobs, each its own transaction
        assert await monque.count_jobs() == 0


async def test_never_more_than_counted_holds_across_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_chunks: int
) -> None:
    """Between two chunks another writer adds matching jobs and changes a counted one: the
    action still reaches only what the count saw, unchanged."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    async with Monque(url, recover_stale_jobs=False) as monque, Monque(url, recover_stale_jobs=False) as other:
        jobs = await monque.enqueue_many([{"name": "n", "data": {"i": i}} for i in range(30)])
        counted = await monque.count_bulk("cancel", JobListFilter(name="n"))
        last = jobs[-1]
        pending_meanwhile: list[Any] = []

        async def meanwhile() -> None:
            pending_meanwhile.extend(await other.enqueue_many([{"name": "n", "data": {}} for _ in range(5)]))
            await other.reschedule_job(last.id, last.next_run_at)  # a counted job changes

        real_write = sqlite_store.SqliteStore._write
        writes = 0

        async def write(self: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
            nonlocal writes
            result = await real_write(self, op, *args, **kwargs)
            writes += 1
            if self is monque.store and writes == 2:  # after the first chunk
                await meanwhile()
            return result

        monkeypatch.setattr(sqlite_store.SqliteStore, "_write", write)
        result = await monque.cancel_jobs(JobListFilter(name="n"), as_of=counted)
        assert counted == 30 and result.count == 29
        for job in (*pending_meanwhile, last):
            stored = await monque.get_job(job.id)
            assert stored is not None and stored.status is JobStatus.PENDING


async def test_a_bulk_retry_lists_each_unique_key_clash_once_across_chunks(tmp_path: Path, small_chunks: int) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False) as monque:
        for i in range(25):
            job = await monque.enqueue("u", {"i": i}, unique_key=f"k{i % 12}")
            await monque.cancel_job(job.id)
        result = await monque.retry_jobs(JobSelector(name="u"))
        assert result.count == 12  # one per key
        assert len(result.errors) == 13 and len({e["jobId"] for e in result.errors}) == 13


async def test_retention_purges_in_chunks_and_builds_no_index(tmp_path: Path, small_chunks: int) -> None:
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as monque:
        jobs = await monque.enqueue_many([{"name": f"n{i % 3}", "data": {}} for i in range(45)])
        for job in jobs:
            await monque.cancel_job(job.id)
    with sqlite3.connect(db) as conn:  # finished long ago
        conn.execute("UPDATE monque_jobs SET status = 'failed', updated_at = 1000")
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False, job_retention=JobRetention(failed=60)) as monque:
        await monque.repair_counts()  # the hand edit above
        assert await monque.purge_expired_jobs() == 45
        assert await monque.count_jobs() == 0
    with sqlite3.connect(db) as conn:
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "monque_jobs_retention" not in indexes


async def test_one_purger_per_file(tmp_path: Path) -> None:
    """A live lease held by another process: this round purges nothing; an expired one is taken over."""
    db = tmp_path / "jobs.db"
    url = f"sqlite:///{db}"
    async with Monque(url, recover_stale_jobs=False, job_retention=JobRetention(completed=0.001)) as monque:
        jobs = await monque.enqueue_many([{"name": "n", "data": {}} for _ in range(5)])
        for job in jobs:
            await monque.cancel_job(job.id)
        await monque.repair_counts()
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE monque_jobs SET status = 'completed', updated_at = 1000")
            conn.execute(
                "INSERT OR REPLACE INTO monque_jobs_meta (key, value) VALUES ('retention_lease', ?)",
                (f"other-host:1:abc:{2**50}",),
            )
        await monque.repair_counts()
        assert await monque.purge_expired_jobs() == 0  # another process is purging
        assert await monque.count_jobs() == 5
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE monque_jobs_meta SET value = 'other-host:1:abc:1000' WHERE key = 'retention_lease'")
        assert await monque.purge_expired_jobs() == 5  # its lease ran out: taken over
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT value FROM monque_jobs_meta WHERE key = 'retention_lease'").fetchone() is None

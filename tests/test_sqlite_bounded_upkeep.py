"""The SQLite store's housekeeping writes in bounded transactions (issue 34, part 5).

After a retention purge had written ~680k feed rows, the feed trim deleted everything past
``feed_retention`` in one statement and held the write lock for seconds, so another
process's claims and heartbeats waited as long. Now the trim (and the drop of emptied error
groups' counts) goes ``TRIM_CHUNK`` rows per transaction, and every chunk leaves
``feed_pruned_through`` naming exactly what is gone, so resume tokens are judged right between
chunks. Rows per transaction are read from ``conn.total_changes`` around each commit (the
``_commit_batch`` seam, tests/README.md).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monque_engine import ChangeFeedHistoryLostError, Monque
from monque_engine.store.sqlite import maintenance

CHUNK = 50


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(maintenance, "TRIM_CHUNK", CHUNK, raising=False)
    return CHUNK


def _commits(monkeypatch: pytest.MonkeyPatch, monque: Monque, each: Any = None) -> list[int]:
    """Rows each write transaction of ``monque``'s store changed, in order."""
    writer = monque.store._writer  # type: ignore[attr-defined]
    real = writer._commit_batch
    sizes: list[int] = []

    def spy(conn: sqlite3.Connection, batch: list[Any]) -> list[tuple[bool, Any]]:
        before = conn.total_changes
        outcomes: list[tuple[bool, Any]] = real(conn, batch)
        sizes.append(conn.total_changes - before)
        if each is not None:
            each()
        return outcomes

    monkeypatch.setattr(writer, "_commit_batch", spy)
    return sizes


def _feed_state(path: Path) -> tuple[int, int, int]:
    """(feed_pruned_through, oldest kept seq, rows kept), read by a connection of its own."""
    with sqlite3.connect(path) as conn:
        (pruned,) = conn.execute("SELECT value FROM monque_jobs_meta WHERE key='feed_pruned_through'").fetchone()
        first, rows = conn.execute("SELECT min(seq), count(*) FROM monque_jobs_changes").fetchone()
    return int(pruned), int(first), int(rows)


async def test_a_feed_trim_goes_a_bounded_chunk_per_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_chunks: int
) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}?feed_retention=1000") as monque:
        await monque.enqueue_many([{"name": "n", "data": i} for i in range(1400)])
        commits = _commits(monkeypatch, monque)
        removed = await monque.store.prune_feed()  # type: ignore[attr-defined]
        assert removed == 400
        # each chunk deletes at most CHUNK feed rows and moves feed_pruned_through (one row)
        assert max(commits) <= small_chunks + 1, commits
        assert sum(commits) >= 400
        assert _feed_state(tmp_path / "jobs.db")[2] == 1000


async def test_every_chunk_leaves_resume_tokens_judged_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_chunks: int
) -> None:
    """Between any two chunks, feed_pruned_through names exactly the rows gone: a token at it
    resumes without a gap, one before it is reported lost."""
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}?feed_retention=1000") as monque:
        await monque.enqueue_many([{"name": "n", "data": i} for i in range(1400)])
        states: list[tuple[int, int, int]] = []
        _commits(monkeypatch, monque, each=lambda: states.append(_feed_state(path)))
        first_seq = _feed_state(path)[1]
        await monque.store.prune_feed()  # type: ignore[attr-defined]
        trimming = [s for s in states if s[1] > first_seq]
        assert len(trimming) >= 400 // small_chunks, states  # the trim was seen between chunks
        for pruned, first, _rows in trimming:
            assert first == pruned + 1  # nothing kept at or before it, nothing lost after it
        pruned, first, rows = _feed_state(path)
        assert rows == 1000
        resumed = await monque.open_watch(resume_after=pruned)
        change = await resumed.__anext__()
        assert change.token == first
        await resumed.aclose()
        with pytest.raises(ChangeFeedHistoryLostError):
            await monque.open_watch(resume_after=pruned - 1)


async def test_a_trim_never_empties_the_feed_and_ends_while_writers_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_chunks: int
) -> None:
    """The trim's end is fixed by its first chunk: jobs enqueued between chunks neither
    prolong it nor get trimmed, and the window of ``feed_retention`` rows stays."""
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}?feed_retention=1000") as monque:
        await monque.enqueue_many([{"name": "n", "data": i} for i in range(1400)])
        raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        added = calls = 0

        def add_one() -> None:  # after the trim's end was fixed (its first two transactions)
            nonlocal added, calls
            calls += 1
            if calls >= 2 and added < 30:
                raw.execute(
                    "INSERT INTO monque_jobs_changes (op, job_id, name, status, next_run_at) "
                    "VALUES ('insert', 'x', 'n', 'pending', 0)"
                )
                added += 1

        commits = _commits(monkeypatch, monque, each=add_one)
        assert await monque.store.prune_feed() == 400  # type: ignore[attr-defined]
        raw.close()
        assert len(commits) > 2
        assert _feed_state(path)[2] == 1000 + added


async def test_emptied_error_groups_are_dropped_a_bounded_chunk_per_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_chunks: int
) -> None:
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}") as monque:
        with sqlite3.connect(path) as raw:  # groups whose members were all deleted: zero rows
            raw.executemany(
                "INSERT INTO monque_jobs_error_counts (group_key, name, error_type, failed, retrying) "
                "VALUES (?, 'n', 'E', 0, 0)",
                [(f"g{i}",) for i in range(130)],
            )
            raw.execute("INSERT INTO monque_jobs_error_counts VALUES ('live', 'n', 'E', 1, 0)")
        commits = _commits(monkeypatch, monque)
        await monque.store.prune_feed()  # type: ignore[attr-defined]
        assert max(commits) <= small_chunks, commits
        with sqlite3.connect(path) as raw:
            assert raw.execute("SELECT group_key FROM monque_jobs_error_counts").fetchall() == [("live",)]

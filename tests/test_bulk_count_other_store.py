"""A bulk count bounds an action only on the store it was counted on (``BulkCount.scope``).

Its position is a place in one store's commit order. Handed to a ``Monque`` on another store
(a count taken on staging, a file recreated at the same path) it bounded the action there
to every matching job written up to that number: "counted 4, deleted 12". Real files.
"""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

import pytest

from monque_engine import BulkCount, InvalidJobQueryError, Job, JobListFilter, JobSelector, JobStatus, Monque
from monque_engine.timeutil import now_ms

FAILED = JobSelector(status=JobStatus.FAILED)


async def _store_with_failed(path: Path, failed: int) -> Monque:
    monque = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await monque.initialize()
    at = now_ms()
    await monque.import_jobs(
        [
            Job(
                id=f"65f0{n:020x}",
                name="email",
                data={"n": n},
                status=JobStatus.FAILED,
                fail_count=3,
                fail_reason="boom",
                next_run_at_ms=at,
                created_at_ms=at,
                updated_at_ms=at,
            )
            for n in range(failed)
        ]
    )
    return monque


async def _failed(monque: Monque) -> int:
    return await monque.count_jobs(JobListFilter(status=JobStatus.FAILED))


async def test_a_count_of_another_store_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    staging = await _store_with_failed(tmp_path / "staging.db", 4)
    prod = await _store_with_failed(tmp_path / "prod.db", 12)
    try:
        counted = await staging.count_bulk("delete", FAILED)
        assert counted == 4 and counted.scope and counted.scope != prod.store.position_scope
        for act in (prod.delete_jobs, prod.cancel_jobs, prod.retry_jobs):
            with pytest.raises(InvalidJobQueryError, match="counted on another store"):
                await act(FAILED, as_of=counted)
        with pytest.raises(InvalidJobQueryError, match="counted on another store"):
            await prod.count_bulk("delete", FAILED, as_of=counted)
        assert await _failed(prod) == 12
        assert (await staging.delete_jobs(FAILED, as_of=counted)).count == 4  # its own store: acts
    finally:
        await staging.close()
        await prod.close()


async def test_a_file_recreated_at_the_same_path_is_another_store(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    old = await _store_with_failed(path, 2)
    counted = await old.count_bulk("delete", FAILED)
    await old.close()
    for leftover in tmp_path.iterdir():
        leftover.unlink()
    new = await _store_with_failed(path, 7)
    try:
        with pytest.raises(InvalidJobQueryError, match="recreated"):
            await new.delete_jobs(FAILED, as_of=counted)
        assert await _failed(new) == 7
    finally:
        await new.close()


async def test_every_opener_of_one_store_shares_its_scope(tmp_path: Path) -> None:
    """A second process, a read-only console and a pickled count all agree on the store."""
    path = tmp_path / "jobs.db"
    writer = await _store_with_failed(path, 3)
    reader = Monque(f"sqlite:///{path}?mode=ro", recover_stale_jobs=False)
    other = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await reader.initialize()
    await other.initialize()
    try:
        counted = await reader.count_bulk("retry", FAILED)
        assert writer.store.position_scope == reader.store.position_scope == other.store.position_scope
        carried = pickle.loads(pickle.dumps(counted))
        assert isinstance(carried, BulkCount) and carried.scope == counted.scope
        assert (await other.retry_jobs(FAILED, as_of=carried)).count == 3
    finally:
        for monque in (writer, reader, other):
            await monque.close()


async def test_a_store_made_before_store_ids_gets_one_at_its_next_writable_open(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    first = await _store_with_failed(path, 1)
    await first.close()
    with sqlite3.connect(path) as db:  # as this code's predecessor left it
        db.execute("DELETE FROM monque_jobs_meta WHERE key='store_id'")
    reader = Monque(f"sqlite:///{path}?mode=ro", recover_stale_jobs=False)
    await reader.initialize()
    assert reader.store.position_scope.endswith("#monque_jobs")  # the file stands in, read-only
    await reader.close()
    again = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await again.initialize()
    try:
        with sqlite3.connect(path) as db:
            (made,) = db.execute("SELECT value FROM monque_jobs_meta WHERE key='store_id'").fetchone()
        assert again.store.position_scope == f"sqlite:{made}" and len(made) == 32
    finally:
        await again.close()

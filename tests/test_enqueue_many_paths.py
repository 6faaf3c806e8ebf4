"""enqueue_many's insert path (issue 14, ADR 0001 addendum 3b) keeps the plain path's promises.

The path binds the values a chunk shares once per statement, hands chunks to the write thread
in lockstep, writes each chunk's feed rows before its jobs, and pauses the cyclic garbage
collector while it builds. Each test checks one of those on a real SQLite file against what
enqueue_many promised before: every job stored once with its own values, a feed row each,
all or none, and nothing left changed in the process.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import threading
from datetime import timedelta

import pytest

from monque_engine import InvalidJobIdentifierError, Monque, MonqueError
from monque_engine.job import NewJob
from monque_engine.scheduler import intake
from monque_engine.scheduler.intake import BUILD_CHUNK
from monque_engine.store.sqlite.intake import MULTI_ROW
from monque_engine.timeutil import now_ms

COLUMNS = "id, name, data, status, next_run_at, fail_count, repeat_interval, unique_key, created_at, updated_at"


def _rows(path) -> tuple[dict[str, tuple], list[tuple]]:
    conn = sqlite3.connect(path)
    try:
        jobs = {row[0]: row for row in conn.execute(f"SELECT {COLUMNS} FROM monque_jobs")}
        feed = conn.execute(
            "SELECT op, job_id, name, status, next_run_at FROM monque_jobs_changes ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    return jobs, feed


async def test_a_chunk_whose_names_and_due_times_differ_stores_each_rows_own_values(tmp_path):
    """Shared values are bound once per statement; a column that varies within a chunk must
    still be stored per row (names, due times), in the jobs table and in the feed."""
    count = 2 * BUILD_CHUNK + 11
    items = []
    for i in range(count):
        item: dict = {"name": ("a", "b", "c")[i % 3] if i >= BUILD_CHUNK else "same", "data": {"i": i}}
        if i % 7 == 0:
            item["run_at"] = timedelta(seconds=i)
        items.append(item)
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        jobs = await m.enqueue_many(items)
    finally:
        await m.close()
    stored, feed = _rows(tmp_path / "jobs.db")
    assert len(stored) == count
    created = jobs[0].created_at_ms
    for job, item in zip(jobs, items, strict=True):
        due = created + (int(item["run_at"].total_seconds() * 1000) if "run_at" in item else 0)
        assert (job.name, job.data, job.next_run_at_ms, job.created_at_ms) == (item["name"], item["data"], due, created)
        data = f'{{"i":{item["data"]["i"]}}}'
        assert stored[job.id] == (job.id, item["name"], data, "pending", due, 0, None, None, created, created)
    assert feed == [("insert", j.id, j.name, "pending", j.next_run_at_ms) for j in jobs]


async def test_insert_many_longer_than_one_statement_with_varying_values(tmp_path):
    """The store's own insert_many splits into MULTI_ROW statements, each with its own shape."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    now = now_ms()
    built = intake.JobIntake(m._ctx, m.store).build_many(
        [{"name": f"n{i // 100}", "data": i} for i in range(2 * MULTI_ROW + 3)], now=now
    )
    built[MULTI_ROW + 1] = NewJob(built[MULTI_ROW + 1].id, "x", 1, "1", now + 5, now - 1, "*/5 * * * *")
    try:
        jobs = await m.store.insert_many(built)
    finally:
        await m.close()
    stored, feed = _rows(tmp_path / "jobs.db")
    assert [j.id for j in jobs] == [b.id for b in built]
    odd = stored[built[MULTI_ROW + 1].id]
    assert odd == (odd[0], "x", "1", "pending", now + 5, 0, "*/5 * * * *", None, now - 1, now - 1)
    assert all(stored[b.id][1] == b.name and stored[b.id][4] == b.next_run_at_ms for b in built)
    assert [row[1] for row in feed] == [b.id for b in built]


async def test_enqueue_many_while_the_write_thread_is_busy_with_another_operation(tmp_path):
    """The loop hands chunks over in lockstep only once the operation runs: behind a long
    write it must not wait for hand-overs that cannot come (it builds on, then awaits)."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    entered, release = threading.Event(), threading.Event()

    def hold(conn: sqlite3.Connection) -> None:
        entered.set()
        release.wait(30)

    try:
        blocker = asyncio.ensure_future(m.store.execute_write(hold))
        assert await asyncio.to_thread(entered.wait, 30)
        # Runs at the loop's next turn, i.e. once enqueue_many has handed every chunk over
        # and awaits: the insert cannot start before then.
        asyncio.get_running_loop().call_soon(release.set)
        count = 3 * BUILD_CHUNK + 7
        jobs = await m.enqueue_many([{"name": "bulk", "data": i} for i in range(count)])
        await blocker
        assert [j.data for j in jobs] == list(range(count))
    finally:
        release.set()
        await m.close()
    stored, feed = _rows(tmp_path / "jobs.db")
    assert sorted(stored) == sorted(j.id for j in jobs)
    assert [row[1] for row in feed] == [j.id for j in jobs]


async def test_a_database_error_in_a_later_chunk_rolls_back_every_chunk(tmp_path, monkeypatch):
    """The write thread fails mid-operation (here: a chunk carries an id that exists) while
    the loop is handing chunks over: the loop stops waiting, nothing of the call is stored,
    and the store goes on working."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    existing = await m.enqueue("bulk", "old")
    calls = {"n": 0}
    real = intake.new_object_ids

    def ids_with_a_duplicate_in_the_third_chunk(count: int) -> list[str]:
        ids = real(count)
        calls["n"] += 1
        if calls["n"] == 3:
            ids[5] = existing.id
        return ids

    monkeypatch.setattr(intake, "new_object_ids", ids_with_a_duplicate_in_the_third_chunk)
    try:
        with pytest.raises(MonqueError):
            await m.enqueue_many([{"name": "bulk", "data": i} for i in range(4 * BUILD_CHUNK)])
        assert calls["n"] >= 3
        assert [j.id for j in await m.get_jobs()] == [existing.id]
        monkeypatch.setattr(intake, "new_object_ids", real)
        after = await m.enqueue_many([{"name": "bulk", "data": "new"}])
        assert sorted(j.id for j in await m.get_jobs()) == sorted([existing.id, after[0].id])
    finally:
        await m.close()
    _, feed = _rows(tmp_path / "jobs.db")
    assert [row[1] for row in feed] == [existing.id, after[0].id]


@pytest.mark.parametrize("bad", [False, True], ids=["ok", "bad-item"])
async def test_the_garbage_collector_is_running_again_after_enqueue_many(tmp_path, bad):
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        items = [{"name": "bulk", "data": i} for i in range(2 * BUILD_CHUNK)]
        if bad:
            items[BUILD_CHUNK + 1] = {"name": "bad name", "data": 0}
            with pytest.raises(InvalidJobIdentifierError):
                await m.enqueue_many(items)
        else:
            await m.enqueue_many(items)
        assert gc.isenabled()
    finally:
        await m.close()


async def test_a_garbage_collector_the_program_turned_off_stays_off(tmp_path):
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    gc.disable()
    try:
        await m.enqueue_many([{"name": "bulk", "data": i} for i in range(2 * BUILD_CHUNK)])
        assert not gc.isenabled()
    finally:
        gc.enable()
        await m.close()


async def test_items_of_two_keys_other_than_name_and_data_are_still_checked(tmp_path):
    """Only ``{name, data}`` takes the short path: a unique key or run_at without data is
    validated and honoured as before (data defaults to None)."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        with pytest.raises(InvalidJobIdentifierError):
            await m.enqueue_many([{"name": "bulk", "data": 1}, {"name": "bulk", "unique_key": " "}])
        first, again, later = await m.enqueue_many(
            [
                {"name": "bulk", "unique_key": "k"},
                {"name": "bulk", "unique_key": "k"},
                {"name": "bulk", "run_at": timedelta(hours=1)},
            ]
        )
        assert first.id == again.id and first.data is None and first.unique_key == "k"
        assert later.data is None and later.next_run_at_ms == later.created_at_ms + 3_600_000
        assert len(await m.get_jobs()) == 2
    finally:
        await m.close()

"""The SQLite store's inbox (inbox.py, ADR 0009): a loop of awaited enqueues appends to a
table with no index, and the rows are absorbed into the job table in bulk.

Each test checks a promise the job table used to keep alone: a job whose ``enqueue``
returned is seen by every later read and write, in this process and in others; it reaches
other processes' workers and watchers; it survives a crash before any absorb; and a few
enqueues (a request handler's) never leave the job table. Real files, real subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from monque_engine import Monque
from monque_engine.store.sqlite import SqliteStore
from monque_engine.store.sqlite.inbox import ABSORB_EVERY, STREAK
from monque_engine.store.sqlite.schema import SCHEMA_VERSION
from tests.conftest import poll_until
from tests.sqlite_versions import set_back_job_columns

REPO_ROOT = Path(__file__).resolve().parents[1]
CHILD_TIMEOUT = 60.0


def counts(path: Path) -> tuple[int, int]:
    """(rows in the job table, rows in the inbox), read with plain sqlite3."""
    conn = sqlite3.connect(path)
    try:
        jobs = conn.execute("SELECT count(*) FROM monque_jobs").fetchone()[0]
        inbox = conn.execute("SELECT count(*) FROM monque_jobs_inbox").fetchone()[0]
        return int(jobs), int(inbox)
    finally:
        conn.close()


def run_child(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )


async def test_a_streak_goes_through_the_inbox_and_the_turns_end_absorbs_it(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    try:
        jobs = [await m.enqueue("stream", {"i": i}) for i in range(100)]
        # No yield since the first enqueue: the jobs past the streak wait in the inbox.
        in_table, in_inbox = counts(db)
        assert in_inbox == 100 - STREAK and in_table == STREAK
        await asyncio.sleep(0)  # the turn ends
        assert counts(db) == (100, 0)
        conn = sqlite3.connect(db)
        feed = conn.execute("SELECT job_id FROM monque_jobs_changes WHERE op = 'insert' ORDER BY seq").fetchall()
        rows = conn.execute("SELECT id, status, data, created_at, updated_at FROM monque_jobs ORDER BY id").fetchall()
        conn.close()
        assert [job_id for (job_id,) in feed] == [job.id for job in jobs]  # enqueue order
        assert [(r[0], r[1], json.loads(r[2])) for r in rows] == [(j.id, "pending", j.data) for j in jobs]
        assert all(r[3] == r[4] for r in rows)
    finally:
        await m.close()


async def test_a_few_enqueues_stay_in_the_job_table(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    try:
        for i in range(STREAK):
            await m.enqueue("handler", {"i": i})
        assert counts(db) == (STREAK, 0)  # read before any yield
    finally:
        await m.close()


async def test_a_long_streak_absorbs_as_it_goes(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    try:
        total = STREAK + 3 * ABSORB_EVERY + 10
        for i in range(total):
            await m.enqueue("long", {"i": i})
        in_table, in_inbox = counts(db)
        assert in_table + in_inbox == total and in_inbox < ABSORB_EVERY
    finally:
        await m.close()


async def test_reads_and_writes_in_the_same_turn_see_the_inbox(tmp_path: Path) -> None:
    """Nothing has yielded, so the turn's absorb has not run: the reads absorb first, and so
    do the writes (inside their own transaction)."""
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    try:
        jobs = [await m.enqueue("same-turn", {"i": i}) for i in range(STREAK + 20)]
        assert counts(db)[1] > 0
        cancelled = await m.cancel_job(jobs[-1].id)
        assert cancelled is not None and cancelled.status.value == "cancelled"
        jobs += [await m.enqueue("same-turn", {"i": i}) for i in range(10)]
        assert counts(db)[1] > 0
        assert (await m.get_job(jobs[-1].id)) is not None
        assert (await m.get_queue_stats("same-turn")).pending == STREAK + 20 - 1 + 10
    finally:
        await m.close()


async def test_another_process_reads_a_job_still_in_the_inbox(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    try:
        jobs = [await m.enqueue("shared", {"i": i}) for i in range(STREAK + 40)]
        assert counts(db)[1] == 40
        # subprocess.run blocks the loop: this process cannot absorb while the child reads.
        child = run_child(
            """
            import asyncio, sys
            from monque_engine import Monque

            async def main():
                m = Monque(f"sqlite:///{sys.argv[1]}", recover_stale_jobs=False)  # no write at start
                await m.initialize()
                job = await m.get_job(sys.argv[2])
                stats = await m.get_queue_stats("shared")
                await m.close()
                print(job is not None and job.data == {"i": int(sys.argv[3])}, stats.pending)

            asyncio.run(main())
            """,
            str(db),
            jobs[-1].id,
            str(len(jobs) - 1),
        )
        assert child.returncode == 0, child.stderr
        assert child.stdout.split() == ["True", str(len(jobs))]
    finally:
        await m.close()


PRODUCER = """
import asyncio, os, sys, time
from monque_engine import Monque

async def main():
    m = Monque(f"sqlite:///{sys.argv[1]}")
    await m.initialize()
    for i in range(int(sys.argv[2])):  # the streak's head goes to the job table
        await m.enqueue("head", {"i": i})
    for i in range(int(sys.argv[3])):
        await m.enqueue("orphan", {"i": i})
    print("enqueued", flush=True)
    if sys.argv[4] == "crash":
        os._exit(0)  # no yield, no close: the streak's tail is only in the inbox
    time.sleep(120)  # holds the loop: this process never absorbs

asyncio.run(main())
"""


async def test_a_crash_mid_streak_leaves_the_jobs_to_the_next_opener(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    count = 50
    child = run_child(PRODUCER, str(db), str(STREAK), str(count), "crash")
    assert child.returncode == 0 and child.stdout.strip() == "enqueued", child.stderr
    assert counts(db) == (STREAK, count)

    ran: list[int] = []
    m = Monque(f"sqlite:///{db}")
    m.register("orphan", lambda job: ran.append(job.data["i"]))
    await m.initialize()
    try:
        await m.start()
        await poll_until(lambda: len(ran) >= count, 30, "every job of the crashed producer ran")
        assert sorted(ran) == list(range(count))
        assert counts(db) == (STREAK + count, 0)
    finally:
        await m.close()
    assert sorted(ran) == list(range(count))  # and none twice


async def test_a_worker_in_another_process_gets_jobs_its_producer_never_absorbed(tmp_path: Path) -> None:
    """The producer holds its loop after the streak, and the worker's own periodic writes and
    reads come once a minute at most: its feed watcher, which sees rows in the inbox and has
    them absorbed, must wake it."""
    db = tmp_path / "jobs.db"
    store = SqliteStore.from_url(f"sqlite:///{db}", maintenance_interval=60)
    m = Monque(store, poll_interval=60, safety_poll_interval=60, heartbeat_interval=60)
    ran: list[int] = []
    m.register("orphan", lambda job: ran.append(job.data["i"]))
    await m.initialize()
    count = 60
    producer = subprocess.Popen(
        [sys.executable, "-c", PRODUCER, str(db), str(STREAK), str(count), "hold"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        await m.start()
        assert producer.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(producer.stdout.readline), CHILD_TIMEOUT)
        assert line.strip() == "enqueued"
        await poll_until(lambda: len(ran) >= count, 20, "every job reached the other process's worker")
        assert sorted(ran) == list(range(count))
        assert producer.poll() is None  # it was still holding its loop: it absorbed nothing
    finally:
        producer.send_signal(signal.SIGKILL)
        producer.wait()
        await m.close()


async def test_watch_streams_see_jobs_from_the_inbox(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    try:
        stream = await m.open_watch()
        ids = [(await m.enqueue("watched", {"i": i})).id for i in range(STREAK + 30)]
        seen: list[str] = []
        async for event in stream:
            if event.operation == "insert":
                seen.append(event.job_id)
            if len(seen) == len(ids):
                break
        assert seen == ids
        await stream.aclose()
    finally:
        await m.close()


async def test_unique_keys_and_schedules_never_use_the_inbox(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    try:
        for i in range(STREAK + 5):
            await m.enqueue("plain", {"i": i})
        _, before = counts(db)
        first = await m.enqueue("keyed", {"n": 1}, unique_key="k")
        again = await m.enqueue("keyed", {"n": 2}, unique_key="k")
        await m.schedule("*/5 * * * *", "cron", None)
        assert again.id == first.id
        in_table, in_inbox = counts(db)
        # Their own transactions absorbed the inbox first and wrote their rows to the table.
        assert before > 0 and in_inbox == 0 and in_table == STREAK + 5 + 2
    finally:
        await m.close()


async def test_close_leaves_nothing_in_the_inbox(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    for i in range(STREAK + 7):
        await m.enqueue("closing", {"i": i})
    await m.close()
    assert counts(db) == (STREAK + 7, 0)


async def test_a_version_3_file_gains_the_inbox_and_keeps_its_jobs(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    job = await m.enqueue("old", {"kept": True})
    await m.close()
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE monque_jobs_inbox")
    set_back_job_columns(conn, 3)
    conn.commit()
    conn.close()

    m = Monque(f"sqlite:///{db}")
    await m.initialize()
    try:
        assert (await m.get_job(job.id)) is not None
        for i in range(STREAK + 3):
            await m.enqueue("new", {"i": i})
        assert counts(db)[1] == 3
    finally:
        await m.close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT value FROM monque_jobs_meta WHERE key = 'schema_version'").fetchone() == (
        SCHEMA_VERSION,
    )
    conn.close()
    assert os.path.exists(db)


async def test_a_read_never_waits_for_the_write_lock_and_still_sees_the_inbox(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another process holds the write lock while the inbox holds rows. Reads used to absorb
    first, so they waited for that lock (busy_timeout, then answered from the job table alone,
    missing the jobs); WAL readers never wait. They read the inbox through the view instead,
    write nothing, and the next write moves the rows."""
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}?busy_timeout=30", recover_stale_jobs=False)
    await m.initialize()
    try:
        child = run_child(PRODUCER, str(db), str(STREAK), "20", "crash")
        assert child.returncode == 0, child.stderr
        assert counts(db) == (STREAK, 20)
        assert await m.count_jobs() == STREAK + 20
        assert counts(db) == (STREAK, 20)  # a read writes nothing, even in a writable store
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with caplog.at_level(logging.WARNING, logger="monque_engine"):
                # Under a 30 s busy_timeout and a 10 s bound: a read that waited would fail here.
                stats = await asyncio.wait_for(m.store.stats("orphan"), 10)  # the store itself: no stats cache
                listed = await asyncio.wait_for(m.get_jobs(name="orphan", limit=100), 10)
                due = await asyncio.wait_for(m.store.next_due_ms(["orphan"]), 10)
            assert stats.pending == 20 and len(listed) == 20 and due is not None
            assert caplog.text == ""
            assert counts(db) == (STREAK, 20)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        await m.enqueue("after", {"n": 1})  # a write: the rows move first
        assert counts(db) == (STREAK + 21, 0)
        assert (await m.store.stats("orphan")).pending == 20
    finally:
        await m.close()

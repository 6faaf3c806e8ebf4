"""The SQLite inbox (inbox.py) around its absorb and for read-only readers: an enqueue whose
job was appended succeeds even when the absorb after it fails, ``close()`` leaves nothing in
the inbox, and a read-only store sees, counts and pages over jobs still in the inbox as it
will once they are absorbed. (Faults found by a review after ed04f93, one test each.)

Real files and real subprocesses, as in test_sqlite_inbox.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from monque_engine import JobStatus, Monque
from monque_engine.errors import MonqueError
from monque_engine.job import JobSort
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.sqlite.inbox import ABSORB_EVERY, STREAK, InboxView
from monque_engine.store.sqlite.journal import Journal
from monque_engine.store.sqlite.queries import page_query
from monque_engine.store.sqlite.schema import Tables
from tests.test_sqlite_inbox import PRODUCER, counts, run_child


async def test_an_enqueue_whose_job_was_appended_does_not_fail_when_the_absorb_after_it_does(
    tmp_path: Path,
) -> None:
    """Every ABSORB_EVERY appends the enqueue that made the last one absorbs, after its own
    append has committed. When that absorb fails (SQLITE_FULL: the absorb writes six B-trees
    where the append wrote one; here a trigger stands in for the full disk), the enqueue
    raised although its job is queued: a caller that retries enqueues it twice."""
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}", recover_stale_jobs=False)
    await m.initialize()
    try:
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute(
            "CREATE TRIGGER review_absorb_fails BEFORE INSERT ON monque_jobs WHEN NEW.name = 'doomed' "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
        for i in range(STREAK):
            await m.enqueue("plain", {"i": i})
        returned, raised = 0, 0
        for i in range(ABSORB_EVERY + 5):
            try:
                await m.enqueue("doomed", {"i": i})
            except (ConnectionError, MonqueError):
                raised += 1
            else:
                returned += 1
        conn.execute("DROP TRIGGER review_absorb_fails")
        conn.close()
        stored = (await m.store.stats("doomed")).pending
        assert stored == returned, f"{raised} enqueue(s) raised, but {stored - returned} of them queued a job"
    finally:
        await m.close()


async def test_a_read_only_store_sees_jobs_still_in_the_inbox(tmp_path: Path) -> None:
    """The console's --read-only (``mode=ro``) cannot absorb. A producer that crashed
    mid-streak leaves its jobs in the inbox until some writer opens the file: before the
    inbox, a read-only console counted, listed and found them at once; it must still."""
    db = tmp_path / "jobs.db"
    count = 20
    child = run_child(PRODUCER, str(db), str(STREAK), str(count), "crash")
    assert child.returncode == 0 and child.stdout.strip() == "enqueued", child.stderr
    assert counts(db) == (STREAK, count)
    conn = sqlite3.connect(db)
    queued = [row[0] for row in conn.execute("SELECT id FROM monque_jobs_inbox ORDER BY seq")]
    conn.close()

    m = Monque(f"sqlite:///{db}?mode=ro", recover_stale_jobs=False)
    await m.initialize()
    try:
        assert (await m.get_queue_stats("orphan")).pending == count
        job = await m.get_job(queued[-1])
        assert job is not None and job.data == {"i": count - 1} and job.status.value == "pending"
        listed = await m.get_jobs(name="orphan")
        assert sorted(j.id for j in listed) == sorted(queued)
        assert "orphan" in await m.store.names()
        assert await m.store.error_groups(None, None, 0) == []  # INDEXED BY the job table's index
        assert await m.store.count_selected(StoreSelector(name="orphan")) == count
    finally:
        await m.close()
    assert counts(db) == (STREAK, count)  # read-only: nothing moved


async def test_close_leaves_nothing_in_the_inbox_when_another_task_streaks_during_it(tmp_path: Path) -> None:
    """close() absorbs first, then stops. Another task that runs while close() is under way
    (here: just after its absorb) must not leave returned enqueues in the inbox of a closed
    store. close() now refuses inbox appends for its whole length (``InboxProducer.closing``); in this
    arrangement the producer's own turn-end absorb would also catch them, so the test checks
    the outcome, not which of the two guards gave it."""
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}", recover_stale_jobs=False)
    await m.initialize()
    go = asyncio.Event()
    store = m.store
    producer = store._producer  # type: ignore[attr-defined]
    absorb_before_close = producer.absorb_before_close

    async def absorb_then_let_others_run() -> None:
        await absorb_before_close()
        go.set()  # close()'s last absorb is done: the producer runs before close() goes on
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    producer.absorb_before_close = absorb_then_let_others_run
    returned: list[str] = []

    async def producer() -> None:
        await go.wait()
        for i in range(STREAK + 8):  # one streak, no yield: past STREAK it would use the inbox
            try:
                returned.append((await m.enqueue("late", {"i": i})).id)
            except (ConnectionError, MonqueError):
                return

    task = asyncio.create_task(producer())
    await asyncio.sleep(0)  # the producer waits for go
    await m.close()
    await asyncio.wait_for(task, 30)
    in_table, in_inbox = counts(db)
    assert in_inbox == 0, f"{in_inbox} of {len(returned)} returned enqueues left in the inbox after close()"
    assert in_table == len(returned)


async def _read_only_answers(db: Path, now_ms: int) -> dict[str, object]:
    m = Monque(f"sqlite:///{db}?mode=ro", recover_stale_jobs=False)
    await m.initialize()
    try:
        store = m.store
        return {
            "count": await m.count_jobs(),
            "stats": await m.get_queue_stats(),
            "stats orphan": await m.get_queue_stats("orphan"),
            "stats by name": await store.stats_by_name(),
            "names": await store.names(),
            "pending health": await store.pending_health(now_ms),
            "count selected": await store.count_selected(StoreSelector(name="orphan")),
            "newest page": [j.id for j in await m.get_jobs(limit=1000)],
        }
    finally:
        await m.close()


async def test_a_read_only_stores_counts_over_the_inbox_equal_those_after_it_is_absorbed(tmp_path: Path) -> None:
    """Over the view, SQLite scans every job for a count or a GROUP BY (~1 s at 1M jobs), so
    a read-only store adds the job table's answer to the inbox rows' answer instead. Those
    sums must be what a writer's absorb then makes true: counts per status and per name,
    the completed average, the oldest due job, the names."""
    db = tmp_path / "jobs.db"
    count = 20
    child = run_child(PRODUCER, str(db), str(STREAK), str(count), "crash")
    assert child.returncode == 0 and child.stdout.strip() == "enqueued", child.stderr
    conn = sqlite3.connect(db)  # the job table's rows in every status and under two names, by hand:
    ids = [row[0] for row in conn.execute("SELECT id FROM monque_jobs ORDER BY id")]  # an engine write absorbs
    for n, status in enumerate(("completed", "completed", "failed", "cancelled", "processing", "pending", "pending")):
        conn.execute(
            "UPDATE monque_jobs SET status = ?, updated_at = created_at + ?, name = ? WHERE id = ?",
            (status, 100 * (n + 1), "other" if n % 2 else "orphan", ids[n]),
        )
    Journal(Tables("monque_jobs")).rebuild_counts(conn)  # a hand edit, then repair-counts
    conn.commit()
    conn.close()
    assert counts(db)[1] == count
    now_ms = 2**52
    with_inbox = await _read_only_answers(db, now_ms)
    assert counts(db)[1] == count  # a read-only store moved nothing
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as absorber:
        await absorber.count_jobs()  # a writable opener absorbs what a crashed producer left
    assert counts(db)[1] == 0
    assert with_inbox == await _read_only_answers(db, now_ms)
    assert with_inbox["stats orphan"].pending == count + 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("sort", "filter"),
    [
        (JobSort("created_at", "desc"), StoreListFilter()),
        (JobSort("id", "asc"), StoreListFilter()),
        (JobSort("next_run_at", "asc"), StoreListFilter(name="orphan", statuses=(JobStatus.PENDING,))),
    ],
)
def test_a_read_only_page_over_the_inbox_view_walks_the_job_tables_index(
    tmp_path: Path, sort: JobSort, filter: StoreListFilter
) -> None:
    """The view's inbox arm had bare NULLs and 'pending' (no affinity), so SQLite would not
    flatten the view into the page query: every page scanned and sorted all jobs (2.4 s at
    1M, against 1 ms). With each value CAST to its column's type, the job table's arm is an
    index walk again."""
    db = tmp_path / "jobs.db"
    child = run_child(PRODUCER, str(db), str(STREAK), "5", "crash")
    assert child.returncode == 0, child.stderr
    tables = Tables("monque_jobs")
    sql, params = page_query(tables.columns, tables.jobs, filter, sort, "forward", None, 50)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        conn.execute(InboxView(tables)._create)  # type: ignore[attr-defined]
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
        assert len(conn.execute(sql, params).fetchall()) == STREAK + 5 if filter.name is None else 5
    finally:
        conn.close()
    # Flattened: the two arms' rows are merged in order; the job table's arm needs no sort of its own.
    assert plan[0] == "MERGE (UNION ALL)", plan
    job_table_arm = plan[plan.index("LEFT") + 1 : plan.index("RIGHT")]
    assert any("main.monque_jobs" in step for step in job_table_arm), plan
    # No sort of the arm's rows; at most the id tie-break within equal due times (incremental).
    assert not any("TEMP B-TREE FOR ORDER BY" in step for step in job_table_arm), plan

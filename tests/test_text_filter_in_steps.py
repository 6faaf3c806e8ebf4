"""A text filter's counts and pages read in bounded steps (ADR 0008, issue 26).

A substring has no index, so its count reads every job (2 s at 10M) and so does the page of a
rare string. ``count_jobs_in_steps``, ``count_bulk_in_steps`` and ``get_jobs_in_steps`` read
it a step at a time: the answer must be the exact one, progress must only grow, a stop must
end the reading at once (between steps, and inside a running statement), and a bulk count in
steps must still bound its action ("never more than confirmed", ADR 0015).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine import CountProgress, InvalidJobQueryError, JobListFilter, JobSort, JobStatus, Monque
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import reads as mongo_reads
from monque_engine.store.sqlite import scan
from monque_engine.store.sqlite.queries import register_functions

STEP = 16
JOBS = 240


def _status(i: int) -> JobStatus:
    return (JobStatus.PENDING, JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)[i % 4]


async def _seed(m: Monque, jobs: int = JOBS) -> None:
    """``jobs`` jobs over two names and four statuses; one in five holds "needle" in its
    payload, every failure in its reason; one in eleven a newline (decoded path), one in
    23 "rare-one"."""
    for i in range(jobs):
        data: dict[str, Any] = {"customer": f"c{i}", "tag": "needle" if i % 5 == 0 else "hay"}
        if i % 11 == 0:
            data["note"] = "line\nbreak"
        if i % 23 == 0:
            data["rare"] = "rare-one"
        await m.enqueue("mail" if i % 2 else "sms", data)
    page = await m.get_jobs_with_cursor(limit=1000, sort=JobSort("created_at", "asc"))
    store: Any = m.store
    journal = store._j  # the kept counts follow these set-up writes
    by_status: dict[JobStatus, list[str]] = {}
    for i, job in enumerate(page.jobs):
        by_status.setdefault(_status(i), []).append(job.id)

    def write(conn: sqlite3.Connection) -> None:
        for status, ids in by_status.items():
            if status is JobStatus.PENDING:
                continue
            where = f"id IN ({','.join('?' * len(ids))})"
            journal.tally(conn, where, ids, -1)
            reason = "needle timed out" if status is JobStatus.FAILED else None
            conn.execute(
                f"UPDATE monque_jobs SET status = ?, fail_reason = ? WHERE {where}", (status.value, reason, *ids)
            )
            journal.tally(conn, where, ids, 1)

    await store.execute_write(write)


@pytest.fixture
async def seeded(tmp_path: Path) -> Any:
    m = Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False)
    await m.initialize()
    await _seed(m)
    yield m
    await m.close()


async def _last(steps: Any) -> list[CountProgress]:
    return [progress async for progress in steps]


async def _exact(m: Monque, filter: JobListFilter) -> dict[JobStatus, int]:
    """One ``count_jobs`` per status the filter allows."""
    statuses = list(JobStatus) if filter.status is None else [filter.status]
    found = {status: await m.count_jobs(replace(filter, status=status)) for status in statuses}
    return {status: count for status, count in found.items() if count}


FILTERS = {
    "text": JobListFilter(text="needle"),
    "text+failed": JobListFilter(text="needle", status=JobStatus.FAILED),
    "text+name": JobListFilter(text="NEEDLE", name="mail"),
    "newline": JobListFilter(text="e\nb"),
    "none": JobListFilter(text="no such text"),
    "no text": JobListFilter(name="sms"),
}


@pytest.mark.parametrize("label", list(FILTERS))
async def test_a_count_in_steps_ends_at_the_exact_count_by_status(seeded: Monque, label: str) -> None:
    filter = FILTERS[label]
    steps = await _last(seeded.count_jobs_in_steps(filter, step=STEP))
    final = steps[-1]
    assert final.done and {s: n for s, n in final.by_status.items() if n} == await _exact(seeded, filter)
    assert final.matched == await seeded.count_jobs(filter)
    assert (len(steps) >= JOBS // STEP) is (label != "no text"), [(p.read, p.done) for p in steps]


async def test_a_name_with_a_status_that_leaves_at_most_a_step_is_one_statement(seeded: Monque) -> None:
    """The kept counts say how many jobs the (name, status) index holds: 60 mail jobs completed."""
    narrow = JobListFilter(text="needle", name="mail", status=JobStatus.COMPLETED)
    exact = await seeded.count_jobs(narrow)
    one = await _last(seeded.count_jobs_in_steps(narrow, step=60))
    walked = await _last(seeded.count_jobs_in_steps(narrow, step=59))
    assert len(one) == 1 and len(walked) > 1
    assert one[-1].matched == walked[-1].matched == exact > 0


async def test_progress_only_grows_and_only_the_last_step_is_done(seeded: Monque) -> None:
    steps = await _last(seeded.count_jobs_in_steps(JobListFilter(text="needle"), step=STEP))
    assert [p.done for p in steps] == [False] * (len(steps) - 1) + [True]
    reads = [p.read for p in steps]
    matched = [p.matched for p in steps]
    assert reads == sorted(reads) and matched == sorted(matched)
    assert reads[0] == STEP and reads[-1] == JOBS and all(p.total == JOBS for p in steps)
    assert 0 < matched[0] < matched[-1]


async def test_jobs_waiting_in_the_inbox_are_counted_and_listed(seeded: Monque) -> None:
    """Jobs whose enqueue returned but that are not moved into the job table yet (inbox.py)."""
    store: Any = seeded.store

    def append(conn: sqlite3.Connection) -> None:
        for n in range(3):
            conn.execute(
                "INSERT INTO monque_jobs_inbox (id, name, data, next_run_at, created_at) VALUES (?, ?, ?, ?, ?)",
                (f"ffff{n:020x}", "mail", '{"tag":"needle in the inbox"}', 1, 4_000_000_000_000 + n),
            )

    await store.execute_write(append)
    needle = JobListFilter(text="needle in the")
    steps = await _last(seeded.count_jobs_in_steps(needle, step=STEP))
    assert steps[-1].by_status == {JobStatus.PENDING: 3} and len(steps) > 1
    newest = JobSort("created_at", "desc")
    pages = [p async for p in seeded.get_jobs_in_steps(limit=2, filter=needle, sort=newest, step=STEP)]
    expected = await seeded.get_jobs_with_cursor(limit=2, filter=needle, sort=newest)
    assert pages[-1].page == expected and [j.id for j in expected.jobs] == ["ffff" + f"{2:020x}", "ffff" + f"{1:020x}"]


SORTS = [
    JobSort("id", "asc"),
    JobSort("created_at", "desc"),
    JobSort("updated_at", "asc"),
    JobSort("next_run_at", "desc"),
]


@pytest.mark.parametrize("sort", SORTS, ids=lambda s: f"{s.by}-{s.direction}")
@pytest.mark.parametrize(
    "filter", [JobListFilter(text="rare-one"), JobListFilter(text="RARE", status=JobStatus.FAILED)]
)
async def test_a_page_in_steps_is_the_page_one_read_gives(seeded: Monque, sort: JobSort, filter: JobListFilter) -> None:
    first = await seeded.get_jobs_with_cursor(limit=7, filter=filter, sort=sort)
    for cursor, direction in [
        (None, "forward"),
        (None, "backward"),
        (first.cursor, "forward"),
        (first.cursor, "backward"),
    ]:
        expected = await seeded.get_jobs_with_cursor(cursor, 7, direction, filter, sort)  # type: ignore[arg-type]
        pages = [p async for p in seeded.get_jobs_in_steps(cursor, 7, direction, filter, sort, step=STEP)]  # type: ignore[arg-type]
        assert pages[-1].done and pages[-1].page == expected
        if cursor is None:
            assert len(pages) > 1  # a rare string: several steps before the page is full
        ids = [j.id for j in pages[-1].page.jobs]
        for partial in pages:  # the rows found so far are always the page's first (or last) rows
            shown = [j.id for j in partial.jobs]
            assert shown == (ids[: len(shown)] if direction == "forward" else ids[len(ids) - len(shown) :])


async def test_stopping_between_steps_reads_no_further(seeded: Monque, monkeypatch: pytest.MonkeyPatch) -> None:
    store: Any = seeded.store
    reads: list[Any] = []
    real = store._read

    async def counting(op: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(op)
        return await real(op, *args, **kwargs)

    monkeypatch.setattr(store, "_read", counting)
    steps = seeded.count_jobs_in_steps(JobListFilter(text="needle"), step=STEP)
    seen = [await steps.__anext__(), await steps.__anext__()]
    await steps.aclose()  # type: ignore[attr-defined]
    made = len(reads)
    assert not seen[-1].done and made == 3  # the store's size, then two steps
    await asyncio.sleep(0)
    assert len(reads) == made


async def test_cancelling_the_task_stops_the_step_it_waits_for(seeded: Monque, monkeypatch: pytest.MonkeyPatch) -> None:
    """The task waits on a reader thread's step; cancelled, it leaves the stop flag set, so
    that step's statement ends (``stoppable``) instead of reading on; the store answers after."""
    stops: list[threading.Event] = []
    real = scan.stoppable

    def recorded(op: Any, stop: threading.Event) -> Any:
        stops.append(stop)
        return real(op, stop)

    monkeypatch.setattr(scan, "stoppable", recorded)
    started = asyncio.Event()

    async def count() -> None:
        async for _ in seeded.count_jobs_in_steps(JobListFilter(text="needle"), step=STEP):
            started.set()

    expected = await seeded.count_jobs(JobListFilter(text="needle"))
    task = asyncio.create_task(count())
    await started.wait()
    assert stops and not any(stop.is_set() for stop in stops)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all(stop.is_set() for stop in stops)
    assert await seeded.count_jobs(JobListFilter(text="needle")) == expected


def test_a_stop_while_a_statement_runs_interrupts_it(tmp_path: Path) -> None:
    """``stoppable`` ends a statement that is already running when the flag is set: the
    statement below would run for hours; it ends as soon as the other thread sets the flag."""
    conn = sqlite3.connect(tmp_path / "x.db", check_same_thread=False)
    running = threading.Event()
    stop = threading.Event()
    conn.create_function("running", 0, lambda: running.set() or 1)
    forever = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1e15) "
        "SELECT count(*) FROM n WHERE running()"
    )
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            scan.stoppable(lambda c: c.execute(forever).fetchone(), stop)(conn)
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion
            outcome.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    assert running.wait(60)
    stop.set()
    thread.join(60)  # a hang guard only: the statement itself would not end for hours
    assert not thread.is_alive()
    assert len(outcome) == 1 and "interrupted" in str(outcome[0])
    assert conn.execute("SELECT 1").fetchone() == (1,)  # the connection is usable (no handler left)
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        scan.stoppable(lambda c: c.execute("SELECT 1").fetchone(), stop)(conn)  # set before: never runs


async def test_a_bulk_count_in_steps_never_lets_its_action_reach_more(seeded: Monque) -> None:
    """Jobs that match but were written after the count began are neither counted nor reached
    by the action that carries the count, even when the walk reads them in a later step."""
    needle = JobListFilter(text="needle")
    expected = await seeded.count_bulk("cancel", needle)
    steps = seeded.count_bulk_in_steps("cancel", needle, step=STEP)
    first = await steps.__anext__()
    assert not first.done and first.bulk is None
    late = [await seeded.enqueue("mail", {"tag": "needle, late"}) for _ in range(3)]  # ids after every counted one
    rest = [progress async for progress in steps]
    counted = rest[-1].bulk
    assert counted is not None and int(counted) == int(expected) == rest[-1].matched
    result = await seeded.cancel_jobs(needle, as_of=counted)
    assert result.count == int(expected)
    still = [await seeded.get_job(job.id) for job in late]
    assert [job.status if job else None for job in still] == [JobStatus.PENDING] * 3
    again = await _last(seeded.count_bulk_in_steps("cancel", needle, as_of=counted, step=STEP))
    assert again[-1].bulk is not None and again[-1].bulk.as_of == counted.as_of and int(again[-1].bulk) == 0


async def test_each_step_reads_a_key_range_of_the_job_table(seeded: Monque, tmp_path: Path) -> None:
    """Never the finished index with a lookup per row (8x slower than the table at 1M jobs)."""
    store: Any = seeded.store
    for target in (
        StoreListFilter(text="needle", statuses=(JobStatus.FAILED,)),
        StoreSelector(statuses=(JobStatus.FAILED, JobStatus.CANCELLED), text="x"),
    ):
        where, params = scan._where(target)
        traced: list[str] = []
        conn = sqlite3.connect(tmp_path / "jobs.db")
        register_functions(conn)
        conn.set_trace_callback(traced.append)
        for after in (None, "0"):
            op = scan._count_step_op(
                store._t, None, where, params, after, STEP, None, isinstance(target, StoreSelector)
            )
            op(conn)
        conn.set_trace_callback(None)
        walked = [sql for sql in traced if "NOT INDEXED" in sql]
        assert len(walked) >= 4
        for sql in walked:
            plan = " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "INDEX" not in plan, plan  # the table itself: "SCAN" or "SEARCH … USING PRIMARY KEY"
        conn.close()


async def test_step_sizes_and_actions_are_checked_before_any_read(seeded: Monque) -> None:
    for bad in (0, -1, True, 1.5, "10"):
        with pytest.raises(InvalidJobQueryError, match="step must be a positive integer"):
            seeded.count_jobs_in_steps(JobListFilter(text="x"), step=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidJobQueryError, match="action must be"):
        seeded.count_bulk_in_steps("erase", JobListFilter(text="x"))


# -- MongoDB: one aggregation, bounded by maxTimeMS (no server here: the query documents) ----------


def test_the_mongo_count_groups_the_listing_query_by_status() -> None:
    query = q.list_filter(StoreListFilter(text="needle"))
    assert mongo_reads.matched_status_pipeline(query) == [
        {"$match": query},
        {"$group": {"_id": "$status", "count": {"$sum": 1}}},
    ]


async def test_the_mongo_store_counts_in_one_step() -> None:
    store, adapter = evaluator_store()
    jobs = [new_job(oid(n)).to_job().to_document() for n in range(9)]
    adapter.sync.insert_many(jobs)
    adapter.sync.update_one({"_id": jobs[0]["_id"]}, {"$set": {"status": "failed"}})
    # mongomock evaluates no $expr text clause: a name filter shows the one-step answer.
    steps = [s async for s in store.count_in_steps(StoreListFilter(name="email"), 2)]
    assert len(steps) == 1 and steps[0].done and steps[0].by_status == {JobStatus.FAILED: 1, JobStatus.PENDING: 8}
    name, _, kwargs = adapter.calls[-1]
    assert name == "aggregate" and kwargs["maxTimeMS"] == q.LIST_MAX_TIME_MS
    selector = StoreSelector(statuses=(JobStatus.PENDING,), listing=StoreListFilter(name="email"))
    counted = [s async for s in store.count_in_steps(selector, 2)]
    assert counted[-1].by_status == {JobStatus.PENDING: 8} and counted[-1].position is not None


# -- one-call counts and bulk actions on text with statuses: the same walk, not the status index -----


async def test_a_text_count_with_statuses_and_a_bulk_retry_read_the_table_in_steps(
    seeded: Monque, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One statement for text with statuses (no name) walked the finished index with a lookup
    per row (16.8 s at 10M jobs against 2.5 s in steps); ``count_jobs``, ``count_bulk`` and a
    bulk action's read of its candidates now take the walk, and answer the same."""
    monkeypatch.setattr(scan, "DEFAULT_STEP_JOBS", STEP)
    ids_steps: list[str | None] = []
    real_ids_step = scan._ids_step_op

    def recorded(t: Any, where: str, params: list[Any], after: str | None, step: int) -> Any:
        ids_steps.append(after)
        return real_ids_step(t, where, params, after, step)

    monkeypatch.setattr(scan, "_ids_step_op", recorded)
    failed = JobListFilter(text="needle", status=JobStatus.FAILED)
    walked = await _last(seeded.count_jobs_in_steps(failed, step=STEP))
    assert await seeded.count_jobs(failed) == walked[-1].matched == 60  # every failure's reason holds it
    needle = JobListFilter(text="needle")
    counted = await seeded.count_bulk("retry", needle)
    expected = await seeded.count_jobs(replace(needle, status=JobStatus.FAILED)) + await seeded.count_jobs(
        replace(needle, status=JobStatus.CANCELLED)
    )
    assert int(counted) == expected
    result = await seeded.retry_jobs(needle, as_of=counted)
    assert result.count == expected and len(ids_steps) >= JOBS // STEP  # the candidates, read in steps
    assert await seeded.count_jobs(replace(needle, status=JobStatus.FAILED)) == 0

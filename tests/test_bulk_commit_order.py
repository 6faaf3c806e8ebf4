"""A bounded bulk action never reaches a job its count did not see (issue 25, point 1).

Until issue 25 the bound was ``updated_before`` = the count's instant, compared with the
``updatedAt`` a writer stamps *before* its write commits: a job stamped before the count but
committed after it (its writer waited on the write lock, or its clock is behind) fell inside
the bound, so "counted 5, deleted 6". The bound is now the store's commit order: the count
returns where the store stood (``BulkCount.as_of``) and the action takes only jobs written at
or before that position (SQLite: each job row's ``change_seq``, see ``Tables.change_stamp``).

Real files, real lock waits, real producer processes.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from monque_engine import BulkCount, InvalidJobQueryError, JobListFilter, JobSelector, JobStatus, Monque
from monque_engine.scheduler import intake
from monque_engine.store.base import StoreSelector
from monque_engine.store.mongo import documents
from monque_tui.console.actions import ActionKind, execute, plan_bulk
from monque_tui.console.query import JobQuery
from tests.conftest import poll_until

STORE_DIR = Path(__file__).resolve().parents[1] / "monque_engine" / "store" / "sqlite"


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"


async def _stamped_then_blocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: JobStatus
) -> tuple[Monque, Monque, asyncio.Task[Any], sqlite3.Connection]:
    """Five jobs of ``bound`` in ``status``; then a producer whose enqueue of a sixth has read
    its clock and waits for the write lock, which this test holds."""
    url = _url(tmp_path)
    operator = Monque(url, recover_stale_jobs=False)
    await operator.initialize()
    jobs = await operator.enqueue_many([{"name": "bound", "data": {"i": i}} for i in range(5)])
    for job in jobs:
        if status is JobStatus.CANCELLED:
            await operator.cancel_job(job.id)
    producer = Monque(url, recover_stale_jobs=False)
    await producer.initialize()
    holder = sqlite3.connect(tmp_path / "jobs.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    stamped = asyncio.Event()
    loop = asyncio.get_running_loop()
    clock = intake.now_ms

    def spy() -> int:
        value = clock()
        loop.call_soon_threadsafe(stamped.set)
        return value

    monkeypatch.setattr(intake, "now_ms", spy)
    late = asyncio.create_task(producer.enqueue("bound", {"late": True}))
    await stamped.wait()
    monkeypatch.setattr(intake, "now_ms", clock)
    return operator, producer, late, holder


@pytest.mark.parametrize(
    ("action", "status"),
    [("delete", JobStatus.PENDING), ("cancel", JobStatus.PENDING), ("retry", JobStatus.CANCELLED)],
)
async def test_a_job_stamped_before_the_count_but_committed_after_it_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: str, status: JobStatus
) -> None:
    operator, producer, late, holder = await _stamped_then_blocked(tmp_path, monkeypatch, status)
    try:
        selector = JobSelector(name="bound")
        counted = await operator.count_bulk(action, selector)  # WAL: the count does not wait for the lock
        assert counted == 5 and isinstance(counted, BulkCount)
        holder.execute("COMMIT")
        late_job = await late
        if action == "retry":
            await operator.cancel_job(late_job.id)  # now it matches a retry too, but changed after the count
        assert await operator.count_bulk(action, selector) == 6  # it does match the selector now
        act: dict[str, Callable[..., Awaitable[Any]]] = {
            "delete": operator.delete_jobs,
            "cancel": operator.cancel_jobs,
            "retry": operator.retry_jobs,
        }
        result = await act[action](selector, as_of=counted)
        assert result.count == 5
        after = await operator.get_job(late_job.id)
        assert after is not None
        assert after.status is (JobStatus.CANCELLED if action == "retry" else JobStatus.PENDING)
    finally:
        holder.close()
        await producer.close()
        await operator.close()


async def test_the_console_plan_never_acts_on_more_than_it_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console's bulk path (plan → confirm → execute) carries the count itself as the bound."""
    operator, producer, late, holder = await _stamped_then_blocked(tmp_path, monkeypatch, JobStatus.PENDING)
    try:
        plan = await plan_bulk(operator, ActionKind.DELETE, JobQuery(name="bound"))
        assert plan.count == 5
        holder.execute("COMMIT")
        late_job = await late
        outcome = await execute(operator, plan)
        assert outcome.message == "Deleted 5 jobs"
        assert await operator.get_job(late_job.id) is not None
    finally:
        holder.close()
        await producer.close()
        await operator.close()


PRODUCER = textwrap.dedent(
    """
    import asyncio, sys
    from monque_engine import Monque

    async def main(url, mode):
        monque = Monque(url, recover_stale_jobs=False)
        await monque.initialize()
        print("ready", flush=True)
        i = 0
        try:
            while True:
                if mode == "many":
                    await monque.enqueue_many([{"name": "race", "data": {"i": i + k}} for k in range(7)])
                    i += 7
                else:  # single enqueues: a long streak goes through the inbox
                    await monque.enqueue("race", {"i": i})
                    i += 1
        finally:
            await monque.close()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


@pytest.mark.parametrize("mode", ["many", "single"])
async def test_rounds_against_running_producers_never_exceed_the_count(tmp_path: Path, mode: str) -> None:
    """Two producer processes (``enqueue_many``, or single enqueues through the inbox) write
    while the operator counts and deletes, round after round: no round deletes more than it
    counted (before issue 25, a third of the rounds went over by 5-10 with two producers)."""
    url = _url(tmp_path)
    async with Monque(url, recover_stale_jobs=False) as operator:
        producers = [
            subprocess.Popen(
                [sys.executable, "-c", PRODUCER, url, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        try:
            for process in producers:
                assert process.stdout is not None and process.stdout.readline().strip() == "ready"
            await poll_until(lambda: operator.count_bulk("delete", JobSelector(name="race")), 20.0)
            over: list[tuple[int, int]] = []
            for _ in range(12):
                counted = await operator.count_bulk("delete", JobSelector(name="race"))
                result = await operator.delete_jobs(JobSelector(name="race"), as_of=counted)
                if result.count > counted:
                    over.append((int(counted), result.count))
            assert over == []
        finally:
            for process in producers:
                process.terminate()
                process.communicate(timeout=30)


async def test_as_of_takes_only_a_count(tmp_path: Path) -> None:
    async with Monque(_url(tmp_path), recover_stale_jobs=False) as monque:
        for bad in (5, "5", 5.0):
            with pytest.raises(InvalidJobQueryError, match="as_of must be the BulkCount that count_bulk returned"):
                await monque.delete_jobs(JobSelector(name="x"), as_of=bad)  # type: ignore[arg-type]


async def test_a_recount_under_a_bound_keeps_the_bound(tmp_path: Path) -> None:
    """Counting again with ``as_of`` says what the action would reach now, and keeps the first
    position: a job that changed in between stays out of the action either way."""
    async with Monque(_url(tmp_path), recover_stale_jobs=False) as monque:
        jobs = await monque.enqueue_many([{"name": "n", "data": {"i": i}} for i in range(4)])
        counted = await monque.count_bulk("cancel", JobListFilter(name="n"))
        await monque.reschedule_job(jobs[0].id, jobs[0].next_run_at)  # changed after the count
        again = await monque.count_bulk("cancel", JobListFilter(name="n"), as_of=counted)
        assert again == 3 and again.as_of == counted.as_of
        assert (await monque.cancel_jobs(JobListFilter(name="n"), as_of=again)).count == 3


def test_every_write_of_a_job_row_stamps_its_commit_order() -> None:
    """The class of fault, not the example: a statement that writes a job row without
    ``change_seq`` would leave the row looking older than a count taken before it."""
    writes = re.compile(r"(UPDATE \{[^}]*jobs\} SET|INSERT INTO \{[^}]*jobs\})", re.IGNORECASE)
    unstamped: list[str] = []
    for path in sorted(STORE_DIR.glob("*.py")):
        text = path.read_text()
        for match in writes.finditer(text):
            # The SET list, or the column list: everything up to the row selection.
            head = re.split(r"\bWHERE\b|\bVALUES\b|\bSELECT\b", text[match.start() :], maxsplit=1)[0]
            if "change_seq" not in head:
                unstamped.append(f"{path.name}: {text[match.start() : match.start() + 80]!r}")
    assert writes.search((STORE_DIR / "statements.py").read_text())  # the pattern does find the writes
    assert unstamped == []


def test_mongodb_bounds_by_the_counts_instant() -> None:
    """No server here: the filter document. MongoDB's bound is a time (see the README)."""
    query = documents.selector_filter(StoreSelector(name="n", as_of=1_700_000_000_000, updated_before_ms=None))
    assert query["updatedAt"] == {"$lt": documents.dt(1_700_000_000_000)}
    both = documents.selector_filter(StoreSelector(as_of=2_000, updated_before_ms=1_000))
    assert both["updatedAt"] == {"$lt": documents.dt(1_000)}

"""SQLite rows edited by hand that cannot be read as jobs, beyond a payload (probe finding).

The contract file (``contract/claims/test_unreadable_rows.py``) covers a payload that is not
JSON on both stores; these are SQLite's own columns: a ``fail_count`` that is not a number
(the processor adds one to it when a handler fails, which raised and left the job
processing for ever, heartbeated by its owner) and the change feed of a damaged row.
Rows are damaged with plain ``sqlite3`` on the real file.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from monque_engine import JobSelector, JobStatus, Monque
from tests.conftest import SHORT_INTERVALS, EventRecorder, poll_until


def _damage(path: Path, job_id: str, assignment: str) -> None:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute(f"UPDATE monque_jobs SET {assignment} WHERE id = ?", (job_id,)).rowcount == 1
        conn.commit()
    finally:
        conn.close()


def _status_and_reason(path: Path, job_id: str) -> tuple[str, str | None]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT status, fail_reason FROM monque_jobs WHERE id = ?", (job_id,)).fetchone()
    finally:
        conn.close()


async def test_a_text_fail_count_is_failed_at_claim_and_the_queue_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{path}", **{**SHORT_INTERVALS, "max_retries": 1})
    await m.initialize()
    try:
        jobs = await m.enqueue_many([{"name": "flaky", "data": {"n": n}} for n in range(6)])
        bad = jobs[3]
        _damage(path, bad.id, "fail_count = 'x'")
        rec = EventRecorder().attach(m, "job:fail", "job:error")
        ran: list[str] = []

        def handler(job: Any) -> None:
            ran.append(job.id)
            raise RuntimeError("handler failed")

        m.register("flaky", handler)
        await m.start()
        await rec.wait_for("job:fail", count=5)
        await poll_until(lambda: _status_and_reason(path, bad.id)[0] == "failed", message="damaged job failed")
        reason = _status_and_reason(path, bad.id)[1]
        assert reason is not None and "column fail_count is 'x', not an integer" in reason
        assert bad.id not in ran and len(ran) == 5
        assert rec.of("job:error") == []
    finally:
        await asyncio.wait_for(m.close(), 10)


async def test_the_change_of_a_damaged_row_is_reported_without_its_job(tmp_path: Path) -> None:
    """As the MongoDB stream does for a document it cannot read: the change, job None."""
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}", **SHORT_INTERVALS) as m:
        good, bad = await m.enqueue_many([{"name": "report", "data": {"n": 1}}, {"name": "report", "data": {"n": 2}}])
        _damage(path, bad.id, "data = 'not json{'")
        assert (await m.cancel_jobs(JobSelector(name="report"))).count == 2
        stream = m.watch(resume_after=0)  # from the start of the feed: both inserts, both cancels
        by_id: dict[str, Any] = {}
        while len(by_id) < 2:
            event = await asyncio.wait_for(anext(stream), 5)
            if event.operation == "update":
                by_id[event.job_id] = event
        assert by_id[good.id].job is not None and by_id[good.id].job.data == {"n": 1}
        assert by_id[bad.id].job is None and by_id[bad.id].status is JobStatus.CANCELLED
        await stream.aclose()  # type: ignore[attr-defined]

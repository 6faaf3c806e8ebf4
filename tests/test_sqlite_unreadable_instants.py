"""SQLite rows whose instants were edited by hand into text (issue 34, items 2 and 3).

A hand edit (``UPDATE monque_jobs SET created_at = 'soon'``) used to make a ``Job`` whose
instant is a string: listings returned it, and the first comparison (an export's sort, a
console's age, ``instances()``) ended the whole command with a TypeError. Such a row is now
unreadable as a payload that is not JSON is: listings skip it with one warning, reading
it by id names the column. Stale recovery used to skip a processing job with no instant
(``coalesce(last_heartbeat, locked_at)`` is NULL) or a text one (text sorts after every
integer), leaving it processing for good; it now recovers the first and repairs the second.
Rows are damaged with plain ``sqlite3`` on the real file, as a user would.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monque_engine import InvalidJobDocumentError, Monque
from monque_engine.timeutil import now_ms
from tests.conftest import SHORT_INTERVALS, EventRecorder, poll_until

COLUMNS = ["next_run_at", "created_at", "updated_at", "locked_at", "last_heartbeat", "fail_count", "heartbeat_interval"]
HOUR = 3_600_000


def _edit(path: Path, sql: str, params: tuple[Any, ...]) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def _row(path: Path, job_id: str) -> tuple[Any, ...]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT status, last_heartbeat, locked_at, claimed_by FROM monque_jobs WHERE id = ?", (job_id,)
        ).fetchone()
    finally:
        conn.close()


@pytest.mark.parametrize("column", COLUMNS)
async def test_every_listing_skips_a_row_with_a_text_value_with_one_warning(
    tmp_path: Path, column: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}", **SHORT_INTERVALS, recover_stale_jobs=False) as m:
        jobs = await m.enqueue_many([{"name": "report", "data": {"n": n}} for n in range(6)])
        bad = jobs[2].id
        _edit(path, f"UPDATE monque_jobs SET {column} = 'soon' WHERE id = ?", (bad,))
        good = sorted(job.id for job in jobs if job.id != bad)
        caplog.set_level(logging.WARNING, logger="monque_engine.sqlite")
        assert sorted(job.id for job in await m.get_jobs()) == good
        assert sorted(job.id for job in (await m.get_jobs_with_cursor(limit=100)).jobs) == good
        assert sorted(await m.get_jobs_by_id([job.id for job in jobs])) == good
        assert await m.count_jobs() == 6  # counts still count it, as for an unreadable payload
        with pytest.raises(InvalidJobDocumentError, match=f"column {column} is 'soon', not an integer"):
            await m.get_job(bad)
        warnings = [r.getMessage() for r in caplog.records if bad in r.getMessage()]
        assert len(warnings) == 1 and warnings[0].endswith("skipped"), warnings


async def test_instances_and_health_read_past_text_stamps_and_hide_no_owner(tmp_path: Path) -> None:
    """``instances()`` raised TypeError on a text stamp, and listed an owner with the empty
    id '' (which ``release-dead`` cannot name) for a processing job without one."""
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}", **SHORT_INTERVALS, recover_stale_jobs=False) as m:
        jobs = await m.enqueue_many([{"name": "report"} for _ in range(4)])
        now = now_ms()
        for job, (owner, beat, interval) in zip(
            jobs, [("w1", "x", 30_000), ("w1", now, "often"), ("", now, None), (None, now, None)], strict=True
        ):
            _edit(
                path,
                "UPDATE monque_jobs SET status = 'processing', claimed_by = ?, locked_at = ?, last_heartbeat = ?, "
                "heartbeat_interval = ? WHERE id = ?",
                (owner, now, beat, interval, job.id),
            )
        await m.repair_counts()  # the statuses were moved by hand
        owners = {info.id: info for info in await m.instances()}
        assert set(owners) == {"w1"}
        records = await m.store.owner_records("w1")  # what check_owner and release-dead read
        assert len(records.jobs) == 2 and records.interval_ms == 30_000
        assert [health.name for health in await m.queue_health()] == ["report"]


async def test_stale_recovery_takes_jobs_with_no_instant_or_no_owner_and_repairs_text_instants(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}", **SHORT_INTERVALS, recover_stale_jobs=False) as m:
        jobs = await m.enqueue_many([{"name": "report"} for _ in range(6)])
        old = now_ms() - HOUR
        claims = [
            ("gone", old, old),  # genuinely stale
            ("gone", None, None),  # no instant at all (an import, a hand edit)
            ("", old, now_ms() + HOUR),  # no owner: nobody can complete or beat it
            (None, old, now_ms() + HOUR),
            ("gone", "soon", old),  # text lock, stale heartbeat: repaired, then recovered
            ("alive", old, "just now"),  # text heartbeat: repaired to now, kept for a lock timeout
        ]
        for job, (owner, locked, beat) in zip(jobs, claims, strict=True):
            _edit(
                path,
                "UPDATE monque_jobs SET status = 'processing', claimed_by = ?, locked_at = ?, last_heartbeat = ? "
                "WHERE id = ?",
                (owner, locked, beat, job.id),
            )
        await m.repair_counts()
        caplog.set_level(logging.WARNING, logger="monque_engine.sqlite")
        now = now_ms()
        assert await m.store.recover_stale(now - 60_000, now) == 5
        statuses = [_row(path, job.id)[0] for job in jobs]
        assert statuses == ["pending"] * 5 + ["processing"]
        kept = _row(path, jobs[5].id)
        assert kept[1] == now and kept[2] == old  # the heartbeat restarted at the repair
        assert [a.outcome for a in (await m.get_job(jobs[4].id)).attempts] == ["stale"]  # a readable record
        repaired = [r.getMessage() for r in caplog.records if "stale recovery cannot use" in r.getMessage()]
        assert len(repaired) == 2 and jobs[4].id in repaired[0] + repaired[1]
        assert await m.store.recover_stale(now - 60_000, now) == 0  # nothing left to repair or recover
        later = now + 60_001
        assert await m.store.recover_stale(later - 60_000, later) == 1
        assert _row(path, jobs[5].id)[0] == "pending"


async def test_due_times_and_error_groups_read_past_text_instants(tmp_path: Path) -> None:
    """SQLite sorts text after every number, so a ``min`` / ``max`` of instants over a
    hand-edited row answered 'soon': the worker's next due time, the metrics' and queue
    view's earliest and latest run times, an error group's first and last failure (where
    ``error_groups()`` raised TypeError)."""
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}", **SHORT_INTERVALS, recover_stale_jobs=False) as m:
        lone = await m.enqueue("lone")
        flaky = await m.enqueue_many([{"name": "flaky"}, {"name": "flaky"}])
        _edit(path, "UPDATE monque_jobs SET next_run_at = 'soon' WHERE id = ?", (lone.id,))
        for job, updated in zip(flaky, ["soon", 1_700_000_000_000], strict=True):
            _edit(
                path,
                "UPDATE monque_jobs SET status = 'failed', fail_count = 1, error_type = 'KeyError', "
                "error_group = 'g1', updated_at = ? WHERE id = ?",
                (updated, job.id),
            )
        await m.repair_counts()
        assert await m.store.next_due_ms(["lone"]) is None
        [split] = await m.store.pending_split(now_ms(), ["lone"], 1000)
        assert (split.earliest_ms, split.latest_ms) == (None, None)
        [group] = await m.error_groups()
        assert group.count == 2 and group.first_seen_ms == group.last_seen_ms == 1_700_000_000_000


async def test_a_due_job_with_a_text_created_at_is_failed_at_claim_and_the_queue_goes_on(tmp_path: Path) -> None:
    """The claim checks the columns it does not write itself (``CLAIM_STATUS``), so the job
    is failed with the column named instead of reaching a handler and a completion that
    computes its duration from 'soon'."""
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}", **SHORT_INTERVALS) as m:
        jobs = await m.enqueue_many([{"name": "report", "data": {"n": n}} for n in range(4)])
        bad = jobs[1]
        _edit(path, "UPDATE monque_jobs SET created_at = 'soon' WHERE id = ?", (bad.id,))
        rec = EventRecorder().attach(m, "job:complete", "job:error")
        ran: list[str] = []
        m.register("report", lambda job: ran.append(job.id))
        await m.start()
        await rec.wait_for("job:complete", count=3)
        await poll_until(lambda: _row(path, bad.id)[0] == "failed", message="damaged job failed")
        assert bad.id not in ran and len(ran) == 3
        assert rec.of("job:error") == []
    conn = sqlite3.connect(path)
    try:
        (reason,) = conn.execute("SELECT fail_reason FROM monque_jobs WHERE id = ?", (bad.id,)).fetchone()
    finally:
        conn.close()
    assert "column created_at is 'soon', not an integer" in reason

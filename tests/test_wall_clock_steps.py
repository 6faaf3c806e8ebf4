"""The wall clock stepped back or forward while a worker runs (ADR 0012) neither re-runs a
cron slot nor takes a live job as stale; instants Python calls naive are refused, and dates
beyond year 9999 read back (found by acceptance probe round 5).

The engine reads the wall clock through ``now_ms`` (imported by each scheduler module); the
tests move it by patching those names, as NTP stepping the clock or a resumed VM would.
"""

from __future__ import annotations

import asyncio
import importlib
import io
import json
import sqlite3
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

import bson
import pytest

from monque_engine import InvalidJobQueryError, Job, JobListFilter, JobSelector, JobSort, JobStatus, Monque
from monque_engine.export import export_document, export_jobs
from monque_engine.timeutil import now_ms as real_now_ms
from tests.conftest import SHORT_INTERVALS, poll_until

_CLOCK_USERS = ("intake", "lifecycle", "manager", "monque", "processor", "query", "fleet")


class SteppedClock:
    """The real clock plus an offset a test can step, patched into every scheduler module."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.offset_ms = 0
        for name in _CLOCK_USERS:
            module = importlib.import_module(f"monque_engine.scheduler.{name}")
            if hasattr(module, "now_ms"):
                monkeypatch.setattr(module, "now_ms", self.now_ms)

    def now_ms(self) -> int:
        return real_now_ms() + self.offset_ms


async def test_a_cron_slot_is_not_run_again_when_the_clock_is_set_back_during_its_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = SteppedClock(monkeypatch)
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **SHORT_INTERVALS)
    await m.initialize()
    slots: list[int] = []

    async def tick(job: Any) -> None:
        slots.append(job.next_run_at_ms)
        if len(slots) == 1:
            clock.offset_ms -= 1500  # stepped back 1.5 s while the first run runs

    m.register("tick", tick)
    await m.start()
    try:
        await m.schedule("* * * * * *", "tick", None)  # every second
        await poll_until(lambda: len(slots) >= 3, 20, "three runs of the schedule")
    finally:
        await m.close()
    # Each run is a later slot than the one before: none repeated, none earlier.
    assert slots[:3] == sorted(set(slots[:3])), [datetime.fromtimestamp(s / 1000, UTC).time() for s in slots]


async def test_a_running_job_is_not_taken_as_stale_when_the_clock_is_set_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = SteppedClock(monkeypatch)
    options = {**SHORT_INTERVALS, "lock_timeout": 1.0, "heartbeat_interval": 0.1, "stale_recovery_interval": 0.1}
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **options)
    await m.initialize()
    runs: list[str] = []
    release = asyncio.Event()
    recovered: list[int] = []
    m.on("stale:recovered", lambda event: recovered.append(event.count))

    async def long(job: Any) -> None:
        runs.append(job.id)
        clock.offset_ms -= 3_600_000  # an hour back: heartbeats now carry earlier times
        await release.wait()

    rounds: list[int] = []
    recover = m.store.recover_stale

    async def counted_recover(stale_before_ms: int, now_ms: int) -> int:
        rounds.append(now_ms)
        return await recover(stale_before_ms, now_ms)

    monkeypatch.setattr(m.store, "recover_stale", counted_recover)
    m.register("long", long)
    await m.start()
    try:
        job = await m.enqueue("long", None)
        await poll_until(lambda: runs, 10, "the job started")
        # Recovery rounds spanning more than lock_timeout after the step (counted, not slept on).
        seen = len(rounds)
        await poll_until(lambda: len(rounds) >= seen + 15, 20, "15 recovery rounds after the step")
        release.set()
        done = await _eventually_status(m, job.id, JobStatus.COMPLETED)
    finally:
        await m.close()
    assert runs == [job.id]
    assert recovered == []
    assert [a.outcome for a in done.attempts] == ["completed"]


async def _eventually_status(m: Monque, job_id: str, status: JobStatus) -> Any:
    async def check() -> Any:
        job = await m.get_job(job_id)
        return job if job is not None and job.status is status else None

    found: list[Any] = []

    async def poll() -> None:
        while not found:
            job = await check()
            if job is not None:
                found.append(job)
                return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), 10)
    return found[0]


class _NoOffset(tzinfo):
    """A tzinfo whose utcoffset is None: Python counts such a datetime as naive."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None

    def tzname(self, dt: datetime | None) -> str:
        return "floating"


async def test_a_datetime_whose_tzinfo_has_no_offset_is_refused_as_naive(tmp_path: Path) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        floating = datetime(2030, 1, 1, tzinfo=_NoOffset())
        job = await m.enqueue("t", 1)
        calls = [
            m.enqueue("t", 1, run_at=floating),
            m.enqueue_many([{"name": "t", "data": 1, "run_at": floating}]),
            m.reschedule_job(job.id, floating),
            m.get_jobs_with_cursor(filter=JobListFilter(created_at_from=floating)),
            m.cancel_jobs(JobSelector(older_than=floating)),
        ]
        for call in calls:
            with pytest.raises(InvalidJobQueryError, match="timezone-aware"):
                await call
        assert [j.id for j in await m.get_jobs()] == [job.id]
        stored = await m.get_job(job.id)
        assert stored is not None and stored.next_run_at == job.next_run_at and stored.status is JobStatus.PENDING
    finally:
        await m.close()


#: JavaScript's Date range ends at ±8.64e15 ms (the years -271821 to 275760): a Node producer
#: can store `runAt: new Date(8.64e15)` as "never", which no Python datetime holds.
JS_MAX_DATE_MS = 8_640_000_000_000_000


async def test_a_job_holding_an_instant_beyond_year_9999_reads_lists_and_exports(tmp_path: Path) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        far = await m.enqueue("t", 1)
        near = await m.enqueue("t", 2)
        store: Any = m.store
        await store.execute_write(
            lambda conn: conn.execute(
                "UPDATE monque_jobs SET next_run_at = ?, created_at = ? WHERE id = ?",
                (JS_MAX_DATE_MS, -JS_MAX_DATE_MS, far.id),
            )
        )
        job = await m.get_job(far.id)
        assert job is not None
        assert job.next_run_at_ms == JS_MAX_DATE_MS and job.created_at_ms == -JS_MAX_DATE_MS
        assert job.next_run_at == datetime.max.replace(tzinfo=UTC)
        assert job.created_at == datetime.min.replace(tzinfo=UTC)
        page = await m.get_jobs_with_cursor(sort=JobSort("next_run_at", "desc"))
        assert [j.id for j in page.jobs] == [far.id, near.id]
        out = io.StringIO()
        assert await export_jobs(m, out) == 2
    finally:
        await m.close()
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["nextRunAt"] == {"$date": {"$numberLong": str(JS_MAX_DATE_MS)}}
    assert lines[0]["createdAt"] == {"$date": {"$numberLong": str(-JS_MAX_DATE_MS)}}
    assert lines[1]["nextRunAt"] == near.next_run_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_a_mongodb_document_with_a_date_beyond_year_9999_round_trips() -> None:
    """The MongoDB mapping (no server here): PyMongo decodes such a date as DatetimeMS (the
    store's codec uses DATETIME_AUTO); the job must survive being turned back into a document."""
    options = bson.CodecOptions(tz_aware=True, datetime_conversion=bson.DatetimeConversion.DATETIME_AUTO)
    stored = {
        "_id": bson.ObjectId(),
        "name": "t",
        "data": None,
        "status": "pending",
        "nextRunAt": bson.DatetimeMS(JS_MAX_DATE_MS),
        "failCount": 0,
        "createdAt": datetime(2026, 1, 1, tzinfo=UTC),
        "updatedAt": datetime(2026, 1, 1, tzinfo=UTC),
    }
    job = Job.from_document(bson.decode(bson.encode(stored), codec_options=options))
    assert job.next_run_at_ms == JS_MAX_DATE_MS
    again = Job.from_document(bson.decode(bson.encode(job.to_document()), codec_options=options))
    assert again == job
    assert export_document(job)["nextRunAt"] == {"$date": {"$numberLong": str(JS_MAX_DATE_MS)}}


def _watch_recovery(
    m: Monque, monkeypatch: pytest.MonkeyPatch, before_round: Any = None
) -> tuple[list[int], list[int]]:
    """What stale recovery does: the counts it recovered, and the ``now`` of each round (each
    round counted as it starts, after ``before_round()`` if given)."""
    recovered: list[int] = []
    m.on("stale:recovered", lambda event: recovered.append(event.count))
    rounds: list[int] = []
    recover = m.store.recover_stale

    async def counted(stale_before_ms: int, now_ms: int) -> int:
        rounds.append(now_ms)
        if before_round is not None:
            before_round()
        return await recover(stale_before_ms, now_ms)

    monkeypatch.setattr(m.store, "recover_stale", counted)
    return recovered, rounds


async def test_a_running_job_is_not_taken_as_stale_when_the_clock_jumps_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when a laptop wakes from sleep: the wall clock is an hour ahead of the time the
    process saw pass, every heartbeat looks an hour old, and the recovery round may run
    before the owner's next heartbeat. It must wait for that heartbeat instead."""
    clock = SteppedClock(monkeypatch)
    options = {**SHORT_INTERVALS, "lock_timeout": 5.0, "heartbeat_interval": 1.0, "stale_recovery_interval": 0.05}
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **options)
    await m.initialize()
    runs: list[str] = []
    release = asyncio.Event()
    recovered, rounds = _watch_recovery(m, monkeypatch)
    beats: list[int] = []
    heartbeat = m.store.heartbeat

    async def counted_heartbeat(owner: str, now_ms: int, job_ids: Any = None) -> int:
        beats.append(now_ms)
        return await heartbeat(owner, now_ms, job_ids)

    monkeypatch.setattr(m.store, "heartbeat", counted_heartbeat)

    async def long(job: Any) -> None:
        runs.append(job.id)
        await release.wait()

    m.register("long", long)
    await m.start()
    try:
        job = await m.enqueue("long", None)
        await poll_until(lambda: runs, 10, "the job started")
        clock.offset_ms += 3_600_000  # an hour ahead, at once
        jumped_at = clock.now_ms()
        # Recovery rounds after the jump, until the job has heartbeated on the new clock and a
        # round has run after that heartbeat (counted, not slept on).
        await poll_until(
            lambda: (
                [b for b in beats if b >= jumped_at]
                and [r for r in rounds if r > min(b for b in beats if b >= jumped_at)]
            ),
            20,
            "a heartbeat after the jump, then a recovery round",
        )
        release.set()
        done = await _eventually_status(m, job.id, JobStatus.COMPLETED)
    finally:
        await m.close()
    assert recovered == []
    assert runs == [job.id]
    assert [a.outcome for a in done.attempts] == ["completed"]


def test_after_a_jump_heartbeats_are_judged_by_the_clock_they_were_written_on() -> None:
    from monque_engine.scheduler.clockjump import WallClockJumps

    mono = [0.0]
    jumps = WallClockJumps(tolerance_ms=1000, settle_seconds=30.0, monotonic=lambda: mono[0])
    assert jumps.judging_now(0) == 0
    mono[0] += 10.0
    assert jumps.judging_now(10_900) == 10_900  # 10.9 s of wall time in 10 s: drift, not a jump
    mono[0] += 1.0
    assert jumps.judging_now(11_900 + 3_600_000) == 11_900  # an hour ahead in one second: the old clock
    mono[0] += 2.0
    assert jumps.judging_now(13_900 + 3_600_000) == 13_900  # and it goes on with the time that passes
    mono[0] += 1.0
    assert jumps.judging_now(14_900 + 7_200_000) == 14_900  # a second jump while the first settles
    mono[0] += 1.0
    assert jumps.judging_now(15_900 + 3_600_000) == 15_900  # set back part of the way
    mono[0] += 30.0
    assert jumps.judging_now(45_900 + 3_600_000) == 45_900 + 3_600_000  # settled: the wall clock again


def _dead_owners_claim(path: Path, job_id: str, heartbeat_ms: int) -> None:
    """Mark ``job_id`` processing by another instance that last beat at ``heartbeat_ms``."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(
            "UPDATE monque_jobs SET status = 'processing', claimed_by = 'other-host:1:dead', "
            "locked_at = ?, last_heartbeat = ?, heartbeat_interval = 60000 WHERE id = ?",
            (heartbeat_ms, heartbeat_ms, job_id),
        )
        conn.commit()
    finally:
        conn.close()


async def test_a_dead_owners_job_is_recovered_on_time_while_the_clock_keeps_jumping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding: skipping recovery after every jump meant a clock that jumped before each
    round (a VM suspended often) never recovered a dead owner's jobs. Judged by the clock the
    heartbeats were written on, the dead owner's job is as stale as it really is."""
    clock = SteppedClock(monkeypatch)
    options = {**SHORT_INTERVALS, "lock_timeout": 3.0, "heartbeat_interval": 1.0, "stale_recovery_interval": 0.05}
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **options)
    await m.initialize()
    job = await m.enqueue("orphan", None)
    # Its owner beat 1 s ago and then died: stale 2 s from now, by the time that really passes.
    _dead_owners_claim(tmp_path / "jobs.db", job.id, clock.now_ms() - 1_000)

    def jump() -> None:
        clock.offset_ms += 5_000  # five seconds ahead before every round

    recovered, rounds = _watch_recovery(m, monkeypatch, before_round=jump)
    try:
        await m.start()
        await poll_until(lambda: recovered, 20, "the dead owner's job recovered")
    finally:
        await m.close()
    assert recovered == [1] and len(rounds) >= 10  # recovered while the clock jumped, not skipped for ever


async def test_a_slow_beating_owners_live_job_is_kept_across_a_jump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding: the settle time came from this instance's heartbeat interval (0.2 s), so
    another owner beating every 10 s (Node's default is 30 s) lost its live job 1.4 s after a
    jump. Judged by the old clock, its heartbeat is as old as it really is: 5 s, not an hour."""
    clock = SteppedClock(monkeypatch)
    options = {**SHORT_INTERVALS, "lock_timeout": 30.0, "heartbeat_interval": 0.2, "stale_recovery_interval": 0.05}
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **options)
    await m.initialize()
    job = await m.enqueue("remote", None)
    _dead_owners_claim(tmp_path / "jobs.db", job.id, clock.now_ms() - 5_000)  # beat 5 s ago: alive
    recovered, rounds = _watch_recovery(m, monkeypatch)
    try:
        await m.start()
        await poll_until(lambda: rounds, 10, "a first recovery round")
        clock.offset_ms += 3_600_000  # an hour ahead, at once
        jumped = len(rounds)
        await poll_until(lambda: len(rounds) >= jumped + 40, 20, "40 recovery rounds after the jump")
    finally:
        await m.close()
    assert recovered == []
    stored = _stored_status(tmp_path / "jobs.db", job.id)
    assert stored == "processing"


def _stored_status(path: Path, job_id: str) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT status FROM monque_jobs WHERE id = ?", (job_id,)).fetchone()[0])
    finally:
        conn.close()

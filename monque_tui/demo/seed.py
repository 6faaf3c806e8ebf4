"""Deterministic jobs for snapshots, screenshots and tests: fixed ids, names and instants."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from monque_engine import Attempt, JobStatus, Monque
from monque_engine.errorgroups import error_group_key
from monque_engine.store.sqlite.journal import Journal
from monque_engine.store.sqlite.schema import Tables

#: The frozen "now" of snapshots: 2026-01-15T12:00:00Z.
SEED_NOW_MS = 1_768_478_400_000
MINUTE = 60_000
COLUMNS = (
    "id",
    "name",
    "data",
    "status",
    "next_run_at",
    "locked_at",
    "claimed_by",
    "last_heartbeat",
    "heartbeat_interval",
    "fail_count",
    "fail_reason",
    "repeat_interval",
    "unique_key",
    "created_at",
    "updated_at",
)


@dataclass(frozen=True, slots=True)
class SeedJob:
    index: int
    name: str
    status: JobStatus
    age_min: int  # created this many minutes before SEED_NOW_MS
    due_min: int = 0  # next run relative to now
    updated_min: int = 0  # updated this many minutes ago
    fail_count: int = 0
    fail_reason: str | None = None
    owner: str | None = None
    repeat: str | None = None
    unique_key: str | None = None
    data: Any = None
    #: The exception's qualified type (``fail_reason`` is then its message, as the engine stores it).
    error_type: str | None = None
    traceback: str | None = None

    @property
    def id(self) -> str:
        return seed_id(self.index)


def seed_id(index: int) -> str:
    return f"678800aa{index:016x}"


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "handlers/email.py", line 42, in send\n    await smtp.send_message(message)\n'
    '  File "aiosmtplib/smtp.py", line 311, in send_message\n    raise SMTPServerDisconnected(...)\n'
    "aiosmtplib.SMTPServerDisconnected: Connection unexpectedly closed"
)

SEED_JOBS: tuple[SeedJob, ...] = (
    SeedJob(
        1,
        "send-email",
        JobStatus.PENDING,
        30,
        due_min=5,
        updated_min=30,
        data={"to": "ada@example.com", "template": "welcome", "locale": "en-GB"},
    ),
    SeedJob(
        2,
        "send-email",
        JobStatus.FAILED,
        55,
        due_min=-50,
        updated_min=12,
        fail_count=10,
        fail_reason="Connection unexpectedly closed",
        error_type="aiosmtplib.SMTPServerDisconnected",
        traceback=TRACEBACK,
        data={"to": "grace@example.com", "template": "receipt", "order": 1042},
    ),
    SeedJob(
        3,
        "send-email",
        JobStatus.COMPLETED,
        50,
        due_min=-49,
        updated_min=48,
        data={"to": "alan@example.com", "template": "reset-password"},
    ),
    SeedJob(
        4,
        "resize-image",
        JobStatus.PROCESSING,
        25,
        due_min=-3,
        updated_min=0,
        owner="web-1:4121:9f3a2c",
        data={"bucket": "uploads", "key": "avatars/ada.png", "sizes": [64, 128, 512]},
    ),
    SeedJob(
        5,
        "resize-image",
        JobStatus.PENDING,
        20,
        due_min=0,
        updated_min=20,
        data={"bucket": "uploads", "key": "avatars/grace.png", "sizes": [64, 128]},
    ),
    SeedJob(
        6,
        "resize-image",
        JobStatus.FAILED,
        45,
        due_min=-40,
        updated_min=9,
        fail_count=3,
        fail_reason="cannot identify image file 'banner.tiff'",
        error_type="PIL.UnidentifiedImageError",
        data={"bucket": "uploads", "key": "banners/banner.tiff"},
    ),
    SeedJob(
        7,
        "nightly-report",
        JobStatus.PENDING,
        600,
        due_min=720,
        updated_min=60,
        repeat="0 0 * * *",
        unique_key="nightly-report",
        data={"report": "revenue", "recipients": ["finance@example.com"]},
    ),
    SeedJob(8, "sync-crm", JobStatus.CANCELLED, 90, due_min=-30, updated_min=25, data={"account": 7731, "full": True}),
    SeedJob(
        9,
        "sync-crm",
        JobStatus.PENDING,
        15,
        due_min=45,
        updated_min=15,
        unique_key="crm-7731",
        data={"account": 7731, "full": False},
    ),
    SeedJob(
        10,
        "send-email",
        JobStatus.PROCESSING,
        8,
        due_min=-1,
        updated_min=0,
        owner="worker-2:881:c01d5e",
        data={"to": "linus@example.com", "template": "digest"},
    ),
    SeedJob(
        11,
        "webhook",
        JobStatus.COMPLETED,
        40,
        due_min=-39,
        updated_min=38,
        data={"url": "https://hooks.example.com/orders", "event": "order.paid"},
    ),
    SeedJob(
        12,
        "webhook",
        JobStatus.FAILED,
        35,
        due_min=-34,
        updated_min=4,
        fail_count=10,
        fail_reason="timed out connecting to hooks.example.com:443",
        error_type="httpx.ConnectTimeout",
        data={"url": "https://hooks.example.com/orders", "event": "order.refunded"},
    ),
    SeedJob(
        13,
        "webhook",
        JobStatus.PENDING,
        5,
        due_min=2,
        updated_min=1,
        fail_count=2,
        fail_reason="read timed out",
        error_type="httpx.ReadTimeout",
        data={"url": "https://hooks.example.com/users"},
    ),
    SeedJob(14, "cleanup-tmp", JobStatus.COMPLETED, 70, due_min=-60, updated_min=59, repeat="*/15 * * * *", data={}),
    SeedJob(
        15,
        "send-email",
        JobStatus.CANCELLED,
        65,
        due_min=-20,
        updated_min=22,
        data={"to": "barbara@example.com", "template": "survey"},
    ),
    SeedJob(
        16,
        "send-email",
        JobStatus.PENDING,
        3,
        due_min=10,
        updated_min=3,
        data={"to": "edsger@example.com", "template": "welcome"},
    ),
)


def seed_row(job: SeedJob, now_ms: int = SEED_NOW_MS) -> tuple[Any, ...]:
    created = now_ms - job.age_min * MINUTE
    processing = job.status is JobStatus.PROCESSING
    return (
        job.id,
        job.name,
        json.dumps(job.data),
        job.status.value,
        now_ms + job.due_min * MINUTE,
        now_ms - 2 * MINUTE if processing else None,
        job.owner if processing else None,
        now_ms - 20_000 if processing else None,
        30_000 if processing else None,
        job.fail_count,
        job.fail_reason,
        job.repeat,
        job.unique_key,
        created,
        now_ms - job.updated_min * MINUTE,
    )


def seed_attempts(job: SeedJob, now_ms: int = SEED_NOW_MS) -> str:
    """The last attempts of a failing seed job (at most 3 shown), each a minute apart, ending at its update."""
    ended = now_ms - job.updated_min * MINUTE
    shown = min(job.fail_count, 3)
    records = []
    for back in range(shown - 1, -1, -1):
        number = job.fail_count - back
        last = back == 0
        outcome = "failed" if last and job.status is JobStatus.FAILED else "retrying"
        end = ended - back * MINUTE
        records.append(
            Attempt(
                number,
                outcome,
                f"worker-{1 + number % 2}:881:c01d5e",
                end - 1_250 - 40 * number,
                end,
                job.error_type,
                job.fail_reason,
                job.traceback,
            ).to_fields(duration=False)
        )
    return json.dumps(records)


def failure_rows(jobs: tuple[SeedJob, ...], now_ms: int) -> list[tuple[Any, ...]]:
    """``(attempts, error_type, error_group, id)`` for the seed jobs with a typed failure."""
    return [
        (seed_attempts(job, now_ms), job.error_type, error_group_key(job.name, job.error_type, job.fail_reason), job.id)
        for job in jobs
        if job.error_type is not None
    ]


def insert_rows(
    conn: sqlite3.Connection,
    rows: list[tuple[Any, ...]],
    table: str = "monque_jobs",
    failures: Sequence[tuple[Any, ...]] = (),
) -> None:
    """Insert finished rows (with ``failures``' history and error group, ``failure_rows``),
    then have the store's journal adopt them as its own writes do: stamped in commit order,
    fed as inserts (watchers see them) and counted, error groups included."""
    marks = ",".join("?" * len(COLUMNS))
    conn.executemany(f"INSERT INTO {table} ({','.join(COLUMNS)}) VALUES ({marks})", rows)
    if failures:
        conn.executemany(f"UPDATE {table} SET attempts = ?, error_type = ?, error_group = ? WHERE id = ?", failures)
    ids = json.dumps([row[COLUMNS.index("id")] for row in rows])
    Journal(Tables(table)).adopt(conn, "id IN (SELECT value FROM json_each(?))", (ids,))


async def seed_store(url: str, jobs: tuple[SeedJob, ...] = SEED_JOBS, now_ms: int = SEED_NOW_MS) -> None:
    """Create the store at ``url`` and insert ``jobs`` (fixed ids and instants)."""
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        rows = [seed_row(job, now_ms) for job in jobs]
        failures = failure_rows(jobs, now_ms)

        await monque.store.execute_write(lambda conn: insert_rows(conn, rows, failures=failures))  # type: ignore[attr-defined]
    finally:
        await monque.close()

"""Import: complete jobs written as they are, in any status (``JobStore.import_jobs``).

Intake only makes pending jobs; a demo's seed, and a restore of an export, need failed jobs
with their history and processing ones with an owner. They are written as plain rows stamped
in commit order, then handed to the journal as the store's own writes are
(``Journal.inserted_rows``): fed as inserts (watchers see them) and counted. One
transaction: all or none.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ...errors import ConnectionError
from ...job import Job, JobStatus
from ...validation import encode_payload
from .journal import Journal
from .runner import Operation
from .schema import JOB_COLUMNS, Tables

_BY_ID = "id IN (SELECT value FROM json_each(?))"


def job_row(job: Job) -> tuple[Any, ...]:
    """``job`` as a row in JOB_COLUMNS order, as the store would have written it.

    A completed row keeps no claim: one that names its claim is how the store records a
    one-off completion's attempt (``queries.row_to_job``), which this job's history already
    holds."""
    completed = job.status is JobStatus.COMPLETED
    attempts = job.attempts
    return (
        job.id,
        job.name,
        encode_payload(job.data, None),
        job.status.value,
        job.next_run_at_ms,
        None if completed else job.locked_at_ms,
        None if completed else job.claimed_by,
        job.last_heartbeat_ms,
        job.heartbeat_interval_ms,
        job.fail_count,
        job.fail_reason,
        job.repeat_interval,
        job.unique_key,
        job.created_at_ms,
        job.updated_at_ms,
        "[" + ",".join(attempt.to_json() for attempt in attempts) + "]" if attempts else None,
        job.error_type,
        job.error_group,
        job.timeout_ms,
        job.over_limit_at_ms,
        job.stop_requested_at_ms,
        None if job.progress is None else job.progress.to_json(),
        None if job.result is None else json.dumps(job.result, separators=(",", ":")),
    )


def imported(tables: Tables, journal: Journal, jobs: Sequence[Job]) -> Operation[int]:
    """The write that stores ``jobs`` (rows built now, on the caller's thread: a payload
    that cannot be stored raises before anything is written)."""
    rows = [job_row(job) for job in jobs]
    ids = json.dumps([job.id for job in jobs])
    # Stamped in the INSERT as every job-row write is (ADR 0015).
    insert = (
        f"INSERT INTO {tables.jobs} ({', '.join(JOB_COLUMNS)}, change_seq) "
        f"VALUES ({', '.join('?' * len(JOB_COLUMNS))}, {tables.change_stamp})"
    )
    stored = f"SELECT id FROM {tables.jobs} WHERE {_BY_ID} LIMIT 1"

    def op(conn: sqlite3.Connection) -> int:
        clash = conn.execute(stored, (ids,)).fetchone()
        if clash is not None:
            (clash_id,) = clash
            raise ConnectionError(f"Job id {clash_id} is already stored; nothing was imported")
        conn.executemany(insert, rows)
        journal.inserted_rows(conn, _BY_ID, (ids,))
        return len(rows)

    return op

"""Claims, and the updates an owner makes under its claim (guarded: still processing,
still the owner's). The batched one-off completions are in ``completions.py``.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable
from typing import Any

from ...errors import InvalidJobDocumentError
from ...job import Job
from . import jobrow as col
from . import statements
from .journal import Changes, Journal, completed_duration, membership
from .queries import claim_row_to_job, row_to_job
from .runner import Operation
from .schema import CLAIM_COLUMNS, JOB_COLUMNS, Tables
from .unreadable import UnreadableWarnings

#: The order a claim hands its jobs out in: earliest due first, then oldest (ids ascend).
CLAIM_ORDER = operator.attrgetter("next_run_at_ms", "id")

#: The job columns a claim's row leaves out (``CLAIM_COLUMNS``), as a claimed Job has them.
_UNCLAIMED = (None,) * (len(JOB_COLUMNS) - len(CLAIM_COLUMNS))

#: A claim as an operation: ``(conn, batch)``, where a caller's ``batch`` of changes (the
#: completions it carries) is written by the caller, with the claim's rows after its own.
ClaimOp = Callable[..., list[Job]]


def claim(
    sql: str,
    t: Tables,
    journal: Journal,
    unreadable: UnreadableWarnings,
    name: str,
    owner: str,
    now_ms: int,
    limit: int,
    heartbeat_interval_ms: int,
) -> ClaimOp:
    """Claim up to ``limit`` of ``name``'s due jobs for ``owner`` (``sql``: ``statements.claim``)."""
    params = (owner, now_ms, now_ms, heartbeat_interval_ms, now_ms, name, now_ms, limit)

    def op(conn: sqlite3.Connection, batch: Changes | None = None) -> list[Job]:
        rows = conn.execute(sql, params).fetchall()
        try:
            jobs = [claim_row_to_job(row) for row in rows]
        except InvalidJobDocumentError:
            jobs, rows = fail_unreadable(conn, t, journal, unreadable, rows, owner, now_ms)
        changes = Changes() if batch is None else batch  # a caller's batch: written with its own rows
        if rows:
            changes.entries.extend([("update", r[col.ID], r[col.NAME], "processing", r[col.NEXT_RUN_AT]) for r in rows])
            changes.move(name, "pending", "processing", jobs=len(rows))
            for r in rows:
                group = r[col.ERROR_GROUP]
                if group is not None:  # a retrying job (claims leave fail_count and the group as they were)
                    changes.member(
                        group, r[col.NAME], r[col.ERROR_TYPE], membership("pending", r[col.FAIL_COUNT], group), None
                    )
        if batch is None:
            journal.write(conn, changes)
        jobs.sort(key=CLAIM_ORDER)
        return jobs

    return op


def fail_unreadable(
    conn: sqlite3.Connection,
    t: Tables,
    journal: Journal,
    unreadable: UnreadableWarnings,
    rows: list[tuple[Any, ...]],
    owner: str,
    now_ms: int,
) -> tuple[list[Job], list[tuple[Any, ...]]]:
    """The claim's readable rows as jobs (and their rows, for the feed); each unreadable
    one is marked failed in this transaction, with why, and gets its own feed row.

    It is ours once claimed: left processing, our heartbeats would keep it alive for
    ever, and released it would be claimed again at once (every claim of its name failed
    when it raised). Guarded like every owned write (still processing, still ours).
    """
    fail_sql = statements.fail_unreadable(t)
    jobs: list[Job] = []
    kept: list[tuple[Any, ...]] = []
    for row in rows:
        try:
            jobs.append(row_to_job(row + _UNCLAIMED))  # a claim's row, with the fields it leaves out
        except InvalidJobDocumentError as error:
            unreadable.warn(error, "marked failed")
            failed = conn.execute(fail_sql, (str(error), now_ms, row[col.ID], owner)).fetchone()
            if failed is not None:
                failed_id, failed_name, failed_next_run_at = failed  # its RETURNING
                changes = Changes()
                # pending -> processing (the claim) -> failed, in one transaction: net from pending
                changes.add("update", failed_id, failed_name, "failed", failed_next_run_at, "pending")
                group, fail_count = row[col.ERROR_GROUP], row[col.FAIL_COUNT]
                if group is not None:  # its fail_count and group stay: a retrying job fails for good
                    changes.member(
                        group,
                        row[col.NAME],
                        row[col.ERROR_TYPE],
                        membership("pending", fail_count, group),
                        membership("failed", fail_count, group),
                    )
                journal.write(conn, changes)
            continue
        kept.append(row)
    return jobs, kept


def owned_update(
    t: Tables, journal: Journal, assignments: str, params: tuple[Any, ...], job_id: str, owner: str
) -> Operation[Job | None]:
    """``assignments`` on one job, only while it is still processing and still ``owner``'s; journaled."""
    sql = statements.owned_update(t, assignments)
    full = (*params, job_id, owner)

    def op(conn: sqlite3.Connection) -> Job | None:
        row = conn.execute(sql, full).fetchone()
        if row is None:
            return None
        changes = Changes()
        status, group = row[col.STATUS], row[col.ERROR_GROUP]
        changes.add(
            "update", row[col.ID], row[col.NAME], status, row[col.NEXT_RUN_AT], "processing", completed_duration(row)
        )
        if group is not None:  # a failure (or a schedule's run that kept its group): processing was no member
            changes.member(
                group, row[col.NAME], row[col.ERROR_TYPE], None, membership(status, row[col.FAIL_COUNT], group)
            )
        journal.write(conn, changes)
        return row_to_job(row)

    return op


def released(t: Tables, journal: Journal, ids: list[str], owner: str, now_ms: int) -> Operation[int]:
    """Give ``owner``'s jobs among ``ids`` back to the queue; how many."""
    sql = statements.release(t, len(ids))
    return lambda conn: journal.updated_rows(conn, conn.execute(sql, (now_ms, *ids, owner)).fetchall(), "processing")

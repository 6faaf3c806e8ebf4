"""Writes about a running job (issue 37 parts 2 and 3, ADR 0019): an operator's stop request,
the owner ending a stopped run ``cancelled``, and the handler's progress report.

Each is one guarded statement. A stop request is guarded by the claim the operator saw
(``status = 'processing'``, ``claimed_by`` and ``locked_at``), so it can never reach a later
run of the job; it is stamped no earlier than that claim (``max(now, locked_at)``), which is
how every reader tells it belongs to the running attempt (``stop_requested_at >= locked_at``)
whatever the clocks of the two processes say. Its feed row has the operation ``stop``: the
only processing-state row a worker's status-filtered feed passes (``feed._wanted``), so the
owner hears of it within the feed's latency while claims and completions stay unheard.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ...job import Job
from . import jobrow as col
from . import statements
from .journal import Changes, Journal
from .queries import append_attempt, row_to_job
from .readkind import Settled
from .runner import Operation
from .schema import Tables

#: The feed operation of a stop request (a worker's filtered feed passes it; readers map it
#: to an ``update`` with ``ChangeEvent.stop_requested``).
STOP_OP = "stop"


def stop_requested(
    t: Tables, journal: Journal, job_id: str, owner: str, locked_at_ms: int, now_ms: int
) -> Operation[Job | None]:
    """Stamp a stop request on the attempt ``owner`` claimed at ``locked_at_ms``; the job, or
    None when that attempt is not running any more."""
    sql = (
        f"UPDATE {t.jobs} SET stop_requested_at = max(?, locked_at), updated_at = ?, change_seq = {t.change_stamp} "
        "WHERE id = ? AND status = 'processing' AND claimed_by = ? AND locked_at = ? "
        f"RETURNING {t.columns}"
    )

    def op(conn: sqlite3.Connection) -> Job | None:
        row = conn.execute(sql, (now_ms, now_ms, job_id, owner, locked_at_ms)).fetchone()
        if row is None:
            return None
        changes = Changes()
        changes.add(STOP_OP, row[col.ID], row[col.NAME], "processing", row[col.NEXT_RUN_AT], "processing")
        journal.write(conn, changes)
        return row_to_job(row)

    return op


def stop_requests(t: Tables, owner: str, job_ids: Sequence[str]) -> Settled[dict[str, tuple[int, int]]]:
    """``owner``'s running jobs among ``job_ids`` that carry a stop request: id → (locked_at,
    stop_requested_at). The heartbeat's look when the feed is down."""
    marks = ",".join("?" * len(job_ids))
    sql = (
        f"SELECT id, locked_at, stop_requested_at FROM {t.jobs} WHERE id IN ({marks}) AND status = 'processing' "
        "AND claimed_by = ? AND stop_requested_at IS NOT NULL"
    )

    def op(conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
        return {
            job_id: (locked_at, stop_at)
            for job_id, locked_at, stop_at in conn.execute(sql, (*job_ids, owner))
            if type(locked_at) is int and type(stop_at) is int
        }

    return Settled(op)  # processing jobs only: never an inbox row


def cancelled_owned(
    t: Tables, journal: Journal, job_id: str, owner: str, now_ms: int, attempt_json: str
) -> Operation[Job | None]:
    """The owner ends a stopped run: ``cancelled``, the claim released, the attempt recorded."""
    record, params = append_attempt("?", (attempt_json,))
    assignments = f"status = 'cancelled', updated_at = ?, attempts = {record}, {statements.CLAIM_RELEASE}"
    sql = statements.owned_update(t, assignments)
    full: tuple[Any, ...] = (now_ms, *params, job_id, owner)

    def op(conn: sqlite3.Connection) -> Job | None:
        row = conn.execute(sql, full).fetchone()
        if row is None:
            return None
        changes = Changes()
        changes.add("update", row[col.ID], row[col.NAME], "cancelled", row[col.NEXT_RUN_AT], "processing")
        journal.write(conn, changes)
        return row_to_job(row)

    return op


def progress_reported(
    t: Tables, journal: Journal, job_id: str, owner: str, now_ms: int, progress_json: str
) -> Operation[bool]:
    """The owner's progress report on its running job (journaled: consoles follow it live)."""
    sql = statements.owned_update(t, "progress = ?, updated_at = ?")
    full = (progress_json, now_ms, job_id, owner)

    def op(conn: sqlite3.Connection) -> bool:
        row = conn.execute(sql, full).fetchone()
        if row is None:
            return False
        changes = Changes()
        changes.add("update", row[col.ID], row[col.NAME], "processing", row[col.NEXT_RUN_AT], "processing")
        journal.write(conn, changes)
        return True

    return op

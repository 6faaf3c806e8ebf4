"""Rows that cannot be read as jobs (written by hand or by another program).

One such row must never block its queue or fail a listing: ``row_to_job`` raises
InvalidJobDocumentError for it (naming the column), listings skip it with one warning per
id, a claim marks it failed (see ``SqliteStore.claim``), and reading it by id raises. The
MongoDB store treats unreadable documents the same way (``mongo/store.py``).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ...errors import InvalidJobDocumentError
from ...job import STATUS_BY_VALUE, Job
from ..bounds import WARNED_IDS_LIMIT
from . import jobrow

log = logging.getLogger("monque_engine.sqlite")

#: Where InvalidJobDocumentError tells an operator to repair a SQLite row.
SQLITE_FIX = "for example in the sqlite3 shell"
#: The status a claim returns: none when ``fail_count``, ``created_at`` or ``next_run_at`` is
#: not an integer (the claim itself writes the other INTEGER columns), so
#: ``claimed_row_to_job`` refuses the row and the claim fails it (the processor adds 1 to the
#: count when a handler fails; a text count would raise there and leave the job processing
#: for ever). Checked by SQLite while it writes the row, so good rows cost no Python work.
CLAIM_STATUS = (
    "CASE WHEN typeof(fail_count) = 'integer' AND typeof(created_at) = 'integer' "
    "AND typeof(next_run_at) = 'integer' THEN status END"
)
#: (position, column, may be NULL) of the INTEGER columns ``row_to_job`` checks.
_INTEGER_COLUMNS = (
    (jobrow.NEXT_RUN_AT, "next_run_at", False),
    (jobrow.LOCKED_AT, "locked_at", True),
    (jobrow.LAST_HEARTBEAT, "last_heartbeat", True),
    (jobrow.HEARTBEAT_INTERVAL, "heartbeat_interval", True),
    (jobrow.FAIL_COUNT, "fail_count", False),
    (jobrow.CREATED_AT, "created_at", False),
    (jobrow.UPDATED_AT, "updated_at", False),
    (jobrow.TIMEOUT_MS, "timeout_ms", True),
    (jobrow.OVER_LIMIT_AT, "over_limit_at", True),
    (jobrow.STOP_REQUESTED_AT, "stop_requested_at", True),
)


def unreadable_row(row: tuple[Any, ...], error: BaseException) -> InvalidJobDocumentError:
    """Why ``row`` is not a job, naming the column (only runs for a row that failed).

    The INTEGER columns come first: a claim's ``CLAIM_STATUS`` reads as a NULL status when
    one of them is wrong, and that column, not the status, is what to fix."""
    job_id = row[jobrow.ID] if row and isinstance(row[jobrow.ID], str) else None
    reason: str | None = None
    for index, column, nullable in _INTEGER_COLUMNS:
        value = row[index] if len(row) > index else None
        if len(row) > index and type(value) is not int and not (nullable and value is None):
            reason = f"column {column} is {_shown(value)}, not an integer"
            break
    if reason is None and len(row) > jobrow.NAME and type(row[jobrow.NAME]) is not str:
        reason = f"column name is {_shown(row[jobrow.NAME])}, not text"
    if reason is None and len(row) > jobrow.STATUS and row[jobrow.STATUS] not in STATUS_BY_VALUE:
        reason = f"column status is {row[jobrow.STATUS]!r}, not one of {', '.join(STATUS_BY_VALUE)}"
    if reason is None and len(row) > jobrow.DATA and row[jobrow.DATA] is not None:
        try:
            json.loads(row[jobrow.DATA])
        except (ValueError, TypeError, RecursionError) as bad:
            reason = f"column data is not JSON ({_one_line(bad)})"
    if reason is None:
        reason = f"{type(error).__name__}: {_one_line(error)}"
    return InvalidJobDocumentError(job_id, reason, what="row", fix=SQLITE_FIX)


def _shown(value: Any) -> str:
    """A stored value for a one-line reason, cut short (a hand edit may have written a page)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 200 else text[:199] + "…"


class UnreadableWarnings:
    """One warning per unreadable job id, however often it is listed (thread-safe: reads
    run on the store's reader threads)."""

    def __init__(self, where: Callable[[], str]) -> None:
        self._where = where
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def warn(self, error: InvalidJobDocumentError, action: str = "skipped") -> None:
        if error.job_id is not None:
            with self._lock:
                if error.job_id in self._ids:
                    return
                if len(self._ids) >= WARNED_IDS_LIMIT:
                    self._ids.clear()
                self._ids.add(error.job_id)
        log.warning("%s (in %s); %s", error, self._where(), action)

    def readable(self, rows: Iterable[tuple[Any, ...]], to_job: Callable[[tuple[Any, ...]], Job]) -> list[Job]:
        """Rows of a listing as jobs, an unreadable one skipped with its warning."""
        rows = list(rows)
        try:  # the usual case: every row reads, at the cost of the plain comprehension
            return [to_job(row) for row in rows]
        except InvalidJobDocumentError:
            pass
        jobs: list[Job] = []
        for row in rows:
            try:
                jobs.append(to_job(row))
            except InvalidJobDocumentError as error:
                self.warn(error)
        return jobs


__all__ = ["CLAIM_STATUS", "SQLITE_FIX", "UnreadableWarnings", "unreadable_row"]

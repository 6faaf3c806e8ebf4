"""The store's reads as operations: jobs by id, selections and pages, counts, stats, error
groups and queue health. Each builder returns what a reader connection runs, as the kind of
read it is (``readkind``: job rows, an aggregate over jobs with how to add the inbox's part,
or nothing an inbox row can be), so the store's one read path (``SqliteStore._read``) treats
the inbox as that kind needs (inbox.py) and no caller chooses.

Counts and stats whose filter the kept counts can answer read those (``counted.py``, a few
rows per name); the rest read the job table through its indexes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import operator
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ...cursor import CursorAnchor
from ...errorgroups import SPARK_MINUTES, ErrorGroupRow
from ...errors import ConnectionError
from ...job import CursorDirection, Job, JobSort, JobStatus, QueueStats
from ..base import StoreListFilter, StoreSelector
from . import counted, statements
from .queries import filter_where, page_query, row_to_job, selector_where
from .readkind import Jobs, Read, Settled, Tally
from .runner import Operation, ReadRunner
from .schema import Tables
from .unreadable import UnreadableWarnings

if TYPE_CHECKING:
    from ...fleet_records import PendingHealth

T = TypeVar("T")

#: Ids per statement in ``get_many`` (SQLite before 3.32 allows 999 parameters).
GET_MANY_CHUNK = 500

Split = dict[str, tuple[int, int, int | None, int | None]]


def get(t: Tables, job_id: str) -> Jobs[Job | None]:
    sql = statements.by_id(t)

    def op(conn: sqlite3.Connection) -> Job | None:
        row = conn.execute(sql, (job_id,)).fetchone()
        return None if row is None else row_to_job(row)

    return Jobs(op)


def get_many(t: Tables, unreadable: UnreadableWarnings, ids: list[str]) -> Jobs[dict[str, Job]]:
    def op(conn: sqlite3.Connection) -> dict[str, Job]:
        found: dict[str, Job] = {}
        # One snapshot for every chunk; chunks keep under SQLITE_MAX_VARIABLE_NUMBER (999 before 3.32).
        with one_snapshot(conn):
            for start in range(0, len(ids), GET_MANY_CHUNK):
                chunk = ids[start : start + GET_MANY_CHUNK]
                for job in unreadable.readable(conn.execute(statements.by_ids(t, len(chunk)), chunk), row_to_job):
                    found[job.id] = job
        return found

    return Jobs(op)


def find(t: Tables, unreadable: UnreadableWarnings, selector: StoreSelector, limit: int, skip: int) -> Jobs[list[Job]]:
    where, params = selector_where(selector, paging=True)
    sql = statements.found(t, where)
    return Jobs(lambda conn: unreadable.readable(conn.execute(sql, (*params, limit, skip)), row_to_job))


def page(
    t: Tables,
    unreadable: UnreadableWarnings,
    filter: StoreListFilter,
    sort: JobSort,
    direction: CursorDirection,
    anchor: CursorAnchor | None,
    limit: int,
    include_data: bool,
) -> Jobs[list[Job]]:
    columns = t.columns if include_data else t.columns.replace("data,", "NULL AS data,", 1)
    sql, params = page_query(columns, t.jobs, filter, sort, direction, anchor, limit)
    return Jobs(lambda conn: unreadable.readable(conn.execute(sql, params), row_to_job))


def kept_count(t: Tables, filter: StoreListFilter) -> Settled[int]:
    """A count the kept counts answer (``counted.filter_answerable``): another table."""
    kept, kept_params = counted.filter_count_sql(t, filter)
    return Settled(lambda conn: int(scalar(conn.execute(kept, kept_params))))


def count(t: Tables, filter: StoreListFilter) -> Tally[int]:
    """A count over the jobs, the inbox's included."""
    where, params = filter_where(filter)
    sql = statements.count(t, where)
    return Tally(lambda conn: int(scalar(conn.execute(sql, params))), operator.add)


def scalar(cursor: sqlite3.Cursor) -> Any:
    """The one value of a one-row, one-column result (an aggregate's, a PRAGMA's)."""
    (value,) = cursor.fetchone()
    return value


def kept_count_as_of(t: Tables, selector: StoreSelector) -> Settled[tuple[int, int]]:
    """A bulk count from the kept counts, and the store's position, in one statement."""
    kept, kept_params = counted.selector_count_sql(t, selector)
    sql = f"SELECT ({kept}), ({t.bulk_bound})"

    def op(conn: sqlite3.Connection) -> tuple[int, int]:
        found, position = conn.execute(sql, kept_params).fetchone()
        return int(found), int(position)

    return Settled(op)


def count_as_of(t: Tables, selector: StoreSelector) -> Read[tuple[int, int]]:
    """A bulk count over the jobs, the inbox's included, and the position; under a bound
    (``as_of``), the job table alone: no inbox row is inside one.

    Every job row written after the count's snapshot carries a ``change_seq`` above that
    position (its transaction began later and read a larger ``max(seq)``), so ``change_seq <=
    position`` is exactly "seen by this count, unchanged since" (``Tables.change_stamp``).
    Jobs still in the inbox are counted (the read sees them) but fall outside the bound: they
    get their stamp when they are moved, after it (the action reaches fewer, never more).
    """
    where, params = selector_where(selector)
    sql = statements.count_as_of(t, where)

    def op(conn: sqlite3.Connection) -> tuple[int, int]:
        found, position = conn.execute(sql, params).fetchone()
        return int(found), int(position)

    return Settled(op) if selector.as_of is not None else Tally(op, add_counts)


def add_counts(stored: tuple[int, int], queued: tuple[int, int]) -> tuple[int, int]:
    """``(count, position)`` of the job table plus the inbox view's count (same snapshot)."""
    stored_count, position = stored
    queued_count, _ = queued
    return stored_count + queued_count, position


def rows(sql: str, params: Sequence[Any] = ()) -> Operation[list[Any]]:
    return lambda conn: conn.execute(sql, params).fetchall()


def kept(sql: str, params: Sequence[Any] = ()) -> Settled[list[Any]]:
    """The rows of a read of the kept counts (``counted``'s SQL): another table."""
    return Settled(rows(sql, params))


def stats(rows: list[tuple[str, str, int, int | None]]) -> QueueStats:
    """One QueueStats from the kept counts' rows ``(name, status, jobs, duration)``."""
    totals: dict[str, tuple[int, int]] = {}
    for _, status, found, duration in rows:
        jobs, summed = totals.get(status, (0, 0))
        totals[status] = (jobs + found, summed + (duration or 0))
    return _stats_from_rows([(status, c, d) for status, (c, d) in totals.items()])


def stats_by_name(rows: list[tuple[str, str, int, int | None]]) -> dict[str, QueueStats]:
    grouped: dict[str, list[tuple[str, int, int | None]]] = {}
    for name, status, found, duration in rows:
        grouped.setdefault(name, []).append((status, found, duration))
    return {name: _stats_from_rows(group) for name, group in sorted(grouped.items())}


def _stats_from_rows(rows: list[tuple[str, int, int | None]]) -> QueueStats:
    counts = {status.value: 0 for status in JobStatus}
    completed_ms = 0
    for status, found, duration_sum in rows:  # a status may come twice (job table, inbox)
        counts[status] += found
        if status == "completed" and duration_sum is not None:
            completed_ms += duration_sum
    completed = counts["completed"]
    # Whole ms, half up, as upstream's Math.round (and our MongoDB store).
    avg = float(math.floor(completed_ms / completed + 0.5)) if completed else None
    return QueueStats(**counts, total=sum(counts.values()), avg_processing_duration_ms=avg)


def error_groups(t: Tables, name: str | None, since_ms: int | None, hour_start: int) -> Settled[list[ErrorGroupRow]]:
    """The kept error counts (schema version 6), with each group's first and last seen and
    its last hour read by seeks into the errors index: two statements in one snapshot,
    O(groups) (``statements.error_group_totals``). Reading every member cost 328 ms for 800k
    failures at 10M jobs."""
    totals_sql = statements.error_group_totals(t, name is not None, since_ms is not None)
    minutes_sql = statements.error_group_minutes(t, name is not None, since_ms is not None)
    params = {"name": name, "since": since_ms, "hour": hour_start}

    def op(conn: sqlite3.Connection) -> list[ErrorGroupRow]:
        with one_snapshot(conn):
            totals = conn.execute(totals_sql, params).fetchall()
            minutes = conn.execute(minutes_sql, params).fetchall()
        return group_rows(totals, minutes)

    return Settled(op)


def group_rows(totals: list[Any], minutes: list[Any]) -> list[ErrorGroupRow]:
    """One ``ErrorGroupRow`` per group from ``error_group_totals``' and ``error_group_minutes``'
    rows (a group is one kept row unless rows were written by hand with another name or type:
    those add up). A kept count whose seeks find no member (counts that drifted: see
    ``repair_counts``) is left out rather than shown without instants."""
    series: dict[str, list[int]] = {}
    for key, bucket, members, _ in minutes:
        if 0 <= bucket < SPARK_MINUTES:
            series.setdefault(key, [0] * SPARK_MINUTES)[bucket] += members
    found: dict[str, ErrorGroupRow] = {}
    for key, name, error_type, failed, retrying, *instants in totals:
        seen = [value for value in instants if value is not None]
        if failed + retrying <= 0 or not seen:
            continue
        row = ErrorGroupRow(key, name, error_type, failed + retrying, retrying, min(seen), max(seen), ())
        other = found.get(key)
        if other is not None:
            row = ErrorGroupRow(
                key,
                other.name,
                other.error_type or error_type,
                other.count + row.count,
                other.retrying + retrying,
                min(other.first_seen_ms, row.first_seen_ms),
                max(other.last_seen_ms, row.last_seen_ms),
                (),
            )
        found[key] = row
    per_minute = tuple([0] * SPARK_MINUTES)
    return [dataclasses.replace(row, per_minute=tuple(series.get(key, per_minute))) for key, row in found.items()]


def error_group_sample(t: Tables, key: str) -> Settled[str | None]:
    """A member's error (failed, or retrying: never an inbox row)."""
    sql = statements.error_group_sample(t)

    def op(conn: sqlite3.Connection) -> str | None:
        row = conn.execute(sql, (key,)).fetchone()
        if row is None:
            return None
        sample: str | None
        (sample,) = row
        return sample

    return Settled(op)


def next_due(t: Tables, names: Sequence[str]) -> Tally[int | None]:
    """The earliest due pending job among ``names``, the inbox's included."""
    sql = statements.next_due(t, len(names))
    params = tuple(names)
    return Tally(lambda conn: scalar(conn.execute(sql, params)), earliest)


def pending_health(t: Tables, now_ms: int) -> Tally[list[Any]]:
    """Rows for ``health_from_rows``, the inbox's jobs included (a name may come twice)."""
    return Tally(rows(statements.pending_health(t), (now_ms, now_ms, now_ms)), operator.add)


def health_from_rows(rows: list[Any]) -> list[PendingHealth]:
    from ...fleet_records import PendingHealth  # here: no launch reads the health (issue 40)

    merged: dict[str, tuple[int, int, Any, int]] = {}
    for name, due, later, oldest, processing in rows:  # a name may come twice (job table, inbox)
        was_due, was_later, was_oldest, was_processing = merged.get(name, (0, 0, None, 0))
        if was_oldest is not None and oldest is not None:
            oldest = min(was_oldest, oldest)
        elif oldest is None:
            oldest = was_oldest
        merged[name] = (was_due + (due or 0), was_later + (later or 0), oldest, was_processing + processing)
    return [
        PendingHealth(name, due, later, oldest, processing)
        for name, (due, later, oldest, processing) in sorted(merged.items())
    ]


def pending_split(t: Tables, now_ms: int, wanted: list[str], cap: int) -> Tally[Split]:
    """Per name: due and later pending jobs (each counted up to ``cap``), the first and last
    due times, the inbox's jobs included."""
    sql = counted.pending_split_sql(t)

    def op(conn: sqlite3.Connection) -> Split:
        found: Split = {}
        for name in wanted:
            row = conn.execute(sql, (name, now_ms, cap, name, now_ms, cap, name, name)).fetchone()
            due, later, first_due, last_due = row
            found[name] = (due, later, first_due, last_due)
        return found

    return Tally(op, add_splits)


def add_splits(stored: Split, queued: Split) -> Split:
    merged = {}
    for name, (due, later, first, last) in stored.items():
        q_due, q_later, q_first, q_last = queued.get(name, (0, 0, None, None))
        merged[name] = (
            due + q_due,
            later + q_later,
            earliest(first, q_first),
            last if q_last is None else q_last if last is None else max(last, q_last),
        )
    return merged


def earliest(stored: int | None, queued: int | None) -> int | None:
    """The earlier of two ``min(next_run_at)`` answers, either of which may be NULL."""
    if stored is None or queued is None:
        return queued if stored is None else stored
    return min(stored, queued)


@contextlib.contextmanager
def one_snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """A read transaction around the block (or the caller's, when one is already open)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")  # a read transaction: ending it writes nothing


# -- text that is not UTF-8 -------------------------------------------------------------------


def is_text_decode_error(error: BaseException) -> bool:
    cause = error.__cause__
    return isinstance(cause, sqlite3.OperationalError) and "Could not decode to UTF-8" in str(cause)


def _replace_invalid_utf8(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def lenient_text(op: Callable[[sqlite3.Connection], T]) -> Callable[[sqlite3.Connection], T]:
    """``op`` run with invalid UTF-8 in text columns replaced instead of raising."""

    def run(conn: sqlite3.Connection) -> T:
        previous = conn.text_factory
        conn.text_factory = _replace_invalid_utf8
        try:
            return op(conn)
        finally:
            conn.text_factory = previous

    return run


async def run(runner: ReadRunner, op: Operation[T]) -> T:
    """Run ``op`` on a reader; once more with invalid UTF-8 replaced if a text value made
    sqlite3 refuse the whole result.

    A text value that is not UTF-8 (written by another program, or a damaged page) made
    sqlite3 refuse the whole result, so one row failed every listing and count. It is read
    again with invalid bytes replaced (U+FFFD), as the MongoDB store decodes: only on this
    rare path, since a Python text_factory would slow every read.
    """
    try:
        return await runner.run(op)
    except ConnectionError as error:
        if not is_text_decode_error(error):
            raise
    return await runner.run(lenient_text(op))

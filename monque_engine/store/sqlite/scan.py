"""Counts and pages of a text filter in bounded steps (ADR 0008).

A substring of a payload has no index (an FTS5 index was rejected: every insert and every
failure would pay for it), so a count reads every row, and so does the page of a string that
few jobs hold. At 10M jobs that is seconds. Here that reading is cut into steps of the
caller's size (``DEFAULT_STEP_JOBS``: 100k rows), each its own short read transaction: find
the step-th key past where the last step ended (keys only, nothing decoded or tested), then
do the step's work between the two keys. The caller sees where the count stands after every step, other reads
interleave, and it stops by not asking for the next step; a stop asked while a step runs
ends its statement at once (``stoppable``), so no thread goes on reading the file.

Counts walk the job table in key order (``id``; ``NOT INDEXED``, so SQLite never swaps the
key range for a status index: walking the finished index and looking every row up was 8x
slower than reading the table at 1M jobs). Pages walk the index of their sort, as one page
statement does. A target without text (or with an error group, or whose name and statuses
the kept counts say leave at most one step of jobs) is answered in one statement, as before.

Not one snapshot: each job is counted as the step that read it found it. A bulk count stays
a bound: every step counts only jobs unchanged since the first step's position (ADR 0015),
so the action that carries that position never reaches more than the count.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncGenerator, Callable
from typing import Any, TypeVar

from ...cursor import CursorAnchor
from ...job import CursorDirection, Job, JobSort, JobStatus
from ...progress import DEFAULT_STEP_JOBS as DEFAULT_STEP_JOBS  # the store's callers take it from here
from ..base import StepCount, StepPage, StoreListFilter, StoreSelector
from . import counted
from .inbox import InboxView
from .queries import SORT_COLUMNS, filter_where, page_query, row_to_job, selector_where
from .readkind import Jobs, Reads, Settled, Tally
from .reads import one_snapshot, scalar
from .runner import Operation
from .schema import Tables
from .unreadable import UnreadableWarnings

T = TypeVar("T")

#: SQLite VM instructions between two looks at the stop flag inside a step (~1-2 ms of work
#: at 10M jobs here; each look takes the GIL, so not much more often than that).
STOP_CHECK_EVERY = 100_000

Target = StoreListFilter | StoreSelector
ByStatus = dict[JobStatus, int]


def stoppable(op: Operation[T], stop: threading.Event) -> Operation[T]:
    """``op``, cut short as soon as ``stop`` is set: not run when it is set already, and
    interrupted inside a statement (SQLite's progress handler, checked every
    ``STOP_CHECK_EVERY`` instructions) when it is set meanwhile. The caller no longer wants
    the answer, so the error it then raises goes nowhere."""

    def run(conn: sqlite3.Connection) -> T:
        if stop.is_set():
            raise sqlite3.OperationalError("interrupted")
        conn.set_progress_handler(stop.is_set, STOP_CHECK_EVERY)
        try:
            return op(conn)
        finally:
            conn.set_progress_handler(None, 0)

    return run


# -- which way a target is counted --------------------------------------------------------------


def _text(target: Target) -> bool:
    """A filter no index serves: "contains" text, or payload terms (``payload_filter``)."""
    if target.text or (isinstance(target, StoreListFilter) and target.data):
        return True
    listing = target.listing if isinstance(target, StoreSelector) else None
    return listing is not None and bool(listing.text or listing.data)


def _group(target: Target) -> bool:
    if target.error_group is not None:
        return True
    return isinstance(target, StoreSelector) and target.listing is not None and target.listing.error_group is not None


def _kept_answers(target: Target) -> bool:
    if isinstance(target, StoreSelector):
        return counted.selector_answerable(target)
    return counted.filter_answerable(target)


def _narrowable(target: Target) -> bool:
    """Whether a name and statuses (or only ``processing``) lead SQLite to an index that holds
    only those jobs (the finished index by name and status, the pending one by name, the
    processing one): then the kept counts say how many rows one statement would read."""
    names, statuses = counted.target_names_statuses(target)
    if statuses is None:
        return False
    if set(statuses) <= {JobStatus.PROCESSING}:
        return True
    return any(name is not None for name, _ in names)


def walks_a_status_index(target: Target) -> bool:
    """Whether one statement for this text target would walk a status index with a lookup per
    row (statuses without a name: the finished index holds most jobs, in an order unrelated to
    the table's, so that read was 8x slower than the table's at 1M jobs): read it in steps."""
    return _text(target) and not _group(target) and _statuses_of(target) is not None


def _statuses_of(target: Target) -> tuple[JobStatus, ...] | None:
    _, statuses = counted.target_names_statuses(target)
    return statuses


def _where(target: Target) -> tuple[str, list[Any]]:
    return selector_where(target) if isinstance(target, StoreSelector) else filter_where(target)


def _by_status(rows: list[tuple[str, int]], into: ByStatus | None = None) -> ByStatus:
    found: ByStatus = {} if into is None else into
    for status, count in rows:
        if status in _STATUS:  # a status written by hand is no Monque status: not counted
            key = _STATUS[status]
            found[key] = found.get(key, 0) + int(count)
    return found


_STATUS = {status.value: status for status in JobStatus}


def _add(stored: tuple[ByStatus, int], queued: tuple[ByStatus, int]) -> tuple[ByStatus, int]:
    stored_counts, position = stored
    queued_counts, _ = queued
    merged = dict(stored_counts)
    for status, count in queued_counts.items():
        merged[status] = merged.get(status, 0) + count
    return merged, position


# -- counts -------------------------------------------------------------------------------------


async def count_in_steps(
    read: Reads, t: Tables, view: InboxView | None, target: Target, step: int
) -> AsyncGenerator[StepCount, None]:
    """``JobStore.count_in_steps`` on SQLite (see the module docstring)."""
    step = max(1, int(step))
    stop = threading.Event()
    selector = isinstance(target, StoreSelector)
    queued = not (isinstance(target, StoreSelector) and target.as_of is not None)
    try:
        if _kept_answers(target):
            by_status, position = await read(Settled(_kept_op(t, target)))
            total = sum(by_status.values())
            yield StepCount(by_status, total, total, True, position if selector else None)
            return
        total, narrow = await read(Settled(_sizes_op(t, target)))
        if not _text(target) or _group(target) or (narrow is not None and narrow <= step):
            where, params = _where(target)
            op = _grouped_op(t, where, params, selector)
            # A count under a bound reads the job table alone: no inbox row is inside one.
            grouped = stoppable(op, stop)
            by_status, position = await read(Tally(grouped, _add) if queued else Settled(grouped))
            size = total if narrow is None else narrow  # about what the statement read
            yield StepCount(by_status, size, size, True, position if selector else None)
            return
        async for progress in _walk_counts(read, t, view, target, step, total, stop, queued):
            yield progress
    finally:
        stop.set()  # a step still running (the caller stopped or was cancelled) ends now


async def _walk_counts(
    read: Reads,
    t: Tables,
    view: InboxView | None,
    target: Target,
    step: int,
    total: int,
    stop: threading.Event,
    queued: bool,
) -> AsyncGenerator[StepCount, None]:
    selector = isinstance(target, StoreSelector)
    bound_by: int | None = target.as_of if isinstance(target, StoreSelector) else None
    unbounded = target._replace(as_of=None) if isinstance(target, StoreSelector) else target
    where, params = _where(unbounded)
    by_status: ByStatus = {}
    read_rows = 0
    after: str | None = None
    while True:
        op = _count_step_op(t, view if queued else None, where, params, after, step, bound_by, selector)
        found, rows, after, position = await read(Settled(stoppable(op, stop)))  # it looks at the inbox itself
        if bound_by is None and selector:
            bound_by = position  # every later step counts only jobs unchanged since the first
        _by_status(found, by_status)
        read_rows += rows
        done = after is None
        yield StepCount(dict(by_status), read_rows, max(total, read_rows) if done else total, done, bound_by)
        if done:
            return


def _count_step_op(
    t: Tables,
    view: InboxView | None,
    where: str,
    params: list[Any],
    after: str | None,
    step: int,
    bound_by: int | None,
    selector: bool,
) -> Callable[[sqlite3.Connection], tuple[list[tuple[str, int]], int, str | None, int | None]]:
    """One step of a count: the matches by status among the ``step`` keys past ``after``
    (None: from the first), how many rows that read, the last key read (None: the end was
    reached, and then the inbox's queued jobs are counted too) and the store's position.

    A selector's step counts only jobs written at or before ``bound_by`` (its first step:
    the position it reads itself), as the bulk action that carries the position acts."""
    jobs = t.jobs
    lower, lower_params = ("id > ?", [after]) if after is not None else ("1", [])
    bound_sql = f"SELECT id FROM {jobs} NOT INDEXED WHERE {lower} ORDER BY id LIMIT 1 OFFSET ?"
    part_sql = f"SELECT status, count(*) FROM {jobs} NOT INDEXED WHERE {lower} AND id <= ? AND ({where})"
    rest_sql = f"SELECT status, count(*) FROM {jobs} NOT INDEXED WHERE {lower} AND ({where})"
    rest_rows_sql = f"SELECT count(*) FROM {jobs} NOT INDEXED WHERE {lower}"
    inbox_sql = f"SELECT status, count(*) FROM {jobs} WHERE ({where}) GROUP BY status"

    def op(conn: sqlite3.Connection) -> tuple[list[tuple[str, int]], int, str | None, int | None]:
        with one_snapshot(conn):
            position = int(scalar(conn.execute(t.bulk_bound))) if selector else None
            bound = bound_by if bound_by is not None else position
            guard, guard_params = ("", []) if bound is None else (" AND change_seq <= ?", [bound])
            row = conn.execute(bound_sql, (*lower_params, step - 1)).fetchone()
            if row is not None:
                (upper,) = row
                sql = f"{part_sql}{guard} GROUP BY status"
                found = conn.execute(sql, (*lower_params, upper, *params, *guard_params)).fetchall()
                return found, step, upper, position
            sql = f"{rest_sql}{guard} GROUP BY status"
            found = conn.execute(sql, (*lower_params, *params, *guard_params)).fetchall()
            rows = int(scalar(conn.execute(rest_rows_sql, lower_params)))
            if view is not None:
                # Jobs whose enqueue returned but that wait in the inbox (inbox.py), counted
                # as a one-statement count counts them (their stamp comes when they move).
                found += view.queued(lambda c: c.execute(inbox_sql, params).fetchall(), conn) or []
            return found, rows, None, position

    return op


def _sizes_op(t: Tables, target: Target) -> Callable[[sqlite3.Connection], tuple[int, int | None]]:
    """Every job in the store (what a walk reads), and, when the target's name and statuses
    lead to an index holding only their jobs, how many jobs that index holds for it."""
    total_sql, total_params = counted.count_sql(t, [(None, None)], None)
    narrow: tuple[str, list[Any]] | None = None
    if _narrowable(target):
        names, statuses = counted.target_names_statuses(target)
        narrow = counted.count_sql(t, names, statuses)

    def op(conn: sqlite3.Connection) -> tuple[int, int | None]:
        with one_snapshot(conn):
            total = int(scalar(conn.execute(total_sql, total_params)))
            if narrow is None:
                return total, None
            narrow_sql, narrow_params = narrow
            return total, int(scalar(conn.execute(narrow_sql, narrow_params)))

    return op


def _kept_op(t: Tables, target: Target) -> Callable[[sqlite3.Connection], tuple[ByStatus, int]]:
    names, statuses = counted.target_names_statuses(target)
    sql, params = counted.status_counts_sql(t, names, statuses)

    def op(conn: sqlite3.Connection) -> tuple[ByStatus, int]:
        with one_snapshot(conn):
            found = _by_status(conn.execute(sql, params).fetchall())
            position = int(scalar(conn.execute(t.bulk_bound)))
        return found, position

    return op


def _grouped_op(
    t: Tables, where: str, params: list[Any], selector: bool
) -> Callable[[sqlite3.Connection], tuple[ByStatus, int]]:
    """One statement, SQLite's plan (combine with ``_add`` for the inbox's rows)."""
    sql = f"SELECT status, count(*) FROM {t.jobs} WHERE {where} GROUP BY status"

    def op(conn: sqlite3.Connection) -> tuple[ByStatus, int]:
        with one_snapshot(conn):
            found = _by_status(conn.execute(sql, params).fetchall())
            position = int(scalar(conn.execute(t.bulk_bound))) if selector else 0
        return found, position

    return op


async def count_of(steps: AsyncGenerator[StepCount, None]) -> tuple[int, int]:
    """A count in steps run to its end, for the callers that want only the answer: the
    count and (for a selector) the position it is bounded by (else 0)."""
    last: StepCount | None = None
    async for last in steps:  # noqa: B007 - the last one is the answer
        pass
    assert last is not None, "a count in steps yields at least once"
    return last.matched, last.position or 0


async def selected_ids(read: Reads, t: Tables, selector: StoreSelector, step: int) -> tuple[list[str], int]:
    """A bulk action's candidates for a text selector, read in steps over the key: the ids
    in key order and the first step's position (each chunk of the action re-checks the
    selector and that position, as for a one-statement read: ``management.in_chunks``)."""
    where, params = selector_where(selector)
    stop = threading.Event()
    ids: list[str] = []
    position: int | None = None
    after: str | None = None
    try:
        while True:
            found, after, at = await read(Settled(stoppable(_ids_step_op(t, where, params, after, step), stop)))
            ids.extend(found)
            position = at if position is None else position
            if after is None:
                return ids, position
    finally:
        stop.set()


def _ids_step_op(
    t: Tables, where: str, params: list[Any], after: str | None, step: int
) -> Callable[[sqlite3.Connection], tuple[list[str], str | None, int]]:
    jobs = t.jobs
    lower, lower_params = ("id > ?", [after]) if after is not None else ("1", [])
    bound_sql = f"SELECT id FROM {jobs} NOT INDEXED WHERE {lower} ORDER BY id LIMIT 1 OFFSET ?"

    def op(conn: sqlite3.Connection) -> tuple[list[str], str | None, int]:
        with one_snapshot(conn):
            position = int(scalar(conn.execute(t.bulk_bound)))
            row = conn.execute(bound_sql, (*lower_params, step - 1)).fetchone()
            (last_id,) = (None,) if row is None else row
            upper, upper_params = ("", []) if last_id is None else (" AND id <= ?", [last_id])
            sql = f"SELECT id FROM {jobs} NOT INDEXED WHERE {lower}{upper} AND ({where}) ORDER BY id"
            found = [job_id for (job_id,) in conn.execute(sql, (*lower_params, *upper_params, *params))]
            return found, last_id, position

    return op


# -- pages --------------------------------------------------------------------------------------

#: The index each sort walks (its key is the sort column, then ``id``).
_SORT_INDEX = {"created_at": "created", "updated_at": "updated", "next_run_at": "next_run"}


async def page_in_steps(
    read: Reads,
    t: Tables,
    view: InboxView | None,
    unreadable: UnreadableWarnings,
    filter: StoreListFilter,
    sort: JobSort,
    direction: CursorDirection,
    anchor: CursorAnchor | None,
    limit: int,
    step: int,
    include_data: bool,
) -> AsyncGenerator[StepPage, None]:
    """``JobStore.page_in_steps`` on SQLite: the sort's index walked ``step`` entries at a
    time from the anchor, each step's matching rows added until the page is full."""
    step = max(1, int(step))
    stop = threading.Event()
    columns = t.columns if include_data else t.columns.replace("data,", "NULL AS data,", 1)
    try:
        total, narrow = await read(Settled(_sizes_op(t, filter)))
        if (
            not (filter.text or filter.data)
            or filter.error_group is not None
            or filter.recurring
            or (narrow is not None and narrow <= step)
        ):
            sql, params = page_query(columns, t.jobs, filter, sort, direction, anchor, limit)
            rows = await read(
                Jobs(stoppable(lambda conn: unreadable.readable(conn.execute(sql, params), row_to_job), stop))
            )
            size = len(rows) if narrow is None else narrow
            yield StepPage(rows, size, size, True)
            return
        walk = _PageWalk(t, filter, sort, direction, columns)
        queued: list[Job] = []
        if view is not None:
            sql, params = page_query(columns, t.jobs, filter, sort, direction, anchor, limit)
            queued = await read(
                Settled(  # the inbox rows alone, looked at by the op itself
                    stoppable(
                        lambda conn: (
                            view.queued(lambda c: unreadable.readable(c.execute(sql, params), row_to_job), conn) or []
                        ),
                        stop,
                    )
                )
            )
        found: list[Job] = []
        position = None if anchor is None else walk.anchor_key(anchor)
        read_rows = 0
        while True:
            op = walk.step_op(unreadable, position, step, limit - len(found))
            rows, read_now, upper = await read(Settled(stoppable(op, stop)))  # the inbox's: ``queued`` above
            read_rows += read_now
            mine = [job for job in queued if walk.between(walk.key(job), position, upper)]
            if mine:
                rows = sorted(rows + mine, key=walk.order)
            found.extend(rows[: limit - len(found)])
            done = upper is None or len(found) >= limit
            yield StepPage(list(found), read_rows, max(total, read_rows) if done else total, done)
            if done:
                return
            position = upper
    finally:
        stop.set()


class _PageWalk:
    """The statements of a page walk over its sort's index, and its keys in Python."""

    def __init__(
        self, t: Tables, filter: StoreListFilter, sort: JobSort, direction: CursorDirection, columns: str
    ) -> None:
        self.by_id = sort.by == "id"
        self.ascending = (sort.direction == "asc") == (direction == "forward")
        order = "ASC" if self.ascending else "DESC"
        self.after_op, self.upto_op = (">", "<=") if self.ascending else ("<", ">=")
        jobs = t.jobs
        column = SORT_COLUMNS[sort.by]
        self.field = f"{sort.by}_ms"
        if self.by_id:
            self.source = f"{jobs} NOT INDEXED"
            self.key_sql = "id"
            self.order_by = f"id {order}"
        else:
            index = _SORT_INDEX.get(sort.by)  # locked_at: processing jobs only, few; no index of its own
            self.source = f"{jobs} INDEXED BY {jobs}_{index}" if index is not None else jobs
            self.key_sql = f"({column}, id)"
            self.order_by = f"{column} {order}, id {order}"
        self.key_columns = "id" if self.by_id else f"{column}, id"
        self.where, self.params = filter_where(filter, paging=True)
        self.columns = columns

    def anchor_key(self, anchor: CursorAnchor) -> tuple[Any, ...]:
        return (anchor.job_id,) if self.by_id else (anchor.value_ms, anchor.job_id)

    def key(self, job: Job) -> tuple[Any, ...]:
        return (job.id,) if self.by_id else (getattr(job, self.field), job.id)

    def order(self, job: Job) -> tuple[Any, ...]:
        """A sort key that puts jobs in traversal order (Python's ``str`` order is SQLite's
        BINARY order: code points, as UTF-8 bytes compare)."""
        key = self.key(job)
        return key if self.ascending else tuple(_Reversed(part) for part in key)

    def between(self, key: tuple[Any, ...], after: tuple[Any, ...] | None, upto: tuple[Any, ...] | None) -> bool:
        if self.ascending:
            return (after is None or key > after) and (upto is None or key <= upto)
        return (after is None or key < after) and (upto is None or key >= upto)

    def _placeholders(self, key: tuple[Any, ...]) -> str:
        return "?" if len(key) == 1 else "(?, ?)"

    def step_op(
        self, unreadable: UnreadableWarnings, after: tuple[Any, ...] | None, step: int, wanted: int
    ) -> Callable[[sqlite3.Connection], tuple[list[Job], int, tuple[Any, ...] | None]]:
        lower, lower_params = (
            ("1", []) if after is None else (f"{self.key_sql} {self.after_op} {self._placeholders(after)}", list(after))
        )
        bound_sql = (
            f"SELECT {self.key_columns} FROM {self.source} WHERE {lower} ORDER BY {self.order_by} LIMIT 1 OFFSET ?"
        )
        base = f"SELECT {self.columns} FROM {self.source} WHERE {lower} AND ({self.where})"

        def op(conn: sqlite3.Connection) -> tuple[list[Job], int, tuple[Any, ...] | None]:
            with one_snapshot(conn):
                row = conn.execute(bound_sql, (*lower_params, step - 1)).fetchone()
                if row is None:
                    sql = f"{base} ORDER BY {self.order_by} LIMIT ?"
                    rows = unreadable.readable(conn.execute(sql, (*lower_params, *self.params, wanted)), row_to_job)
                    count_sql = f"SELECT count(*) FROM {self.source} WHERE {lower}"
                    return rows, int(scalar(conn.execute(count_sql, lower_params))), None
                upper = tuple(row)
                sql = f"{base} AND {self.key_sql} {self.upto_op} {self._placeholders(upper)} ORDER BY {self.order_by} LIMIT ?"
                rows = unreadable.readable(conn.execute(sql, (*lower_params, *self.params, *upper, wanted)), row_to_job)
                return rows, step, upper

        return op


class _Reversed:
    """Orders its value backwards (for a descending merge of mixed ints and strings)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return bool(self.value > other.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and bool(self.value == other.value)

    def __hash__(self) -> int:
        return hash(self.value)

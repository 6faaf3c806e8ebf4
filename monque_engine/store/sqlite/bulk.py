"""Multi-row inserts of new jobs and their feed rows, with as little bound per row as possible.

Why this shape (ADR 0001, addendum 3b): the write thread holds the GIL while it binds a
statement's parameters and gives it up while SQLite steps. The loop that validates the next
chunk holds the GIL the rest of the time, so every bound value is time the two threads do
not overlap. A batch from ``enqueue_many`` shares most of its values (one clock reading for
``created_at``/``updated_at``, usually one name and one due time, no schedule), so those are
bound once per statement as numbered parameters (``?N`` may be used by many rows) and only
the id and the payload are bound per row; a column whose values differ within the chunk is
bound per row as before. Parameters are laid out in blocks (all ids, then all payloads, ...)
so the list is assembled by C-level ``map`` and list concatenation rather than a Python
loop per job.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

from ...job import NewJob
from .journal import Changes, Journal
from .schema import Tables

#: Per-row or shared, in this order after the id and payload blocks: name, next_run_at,
#: repeat_interval, created_at (which is also updated_at).
_OPTIONAL: tuple[Callable[[NewJob], Any], ...] = (
    attrgetter("name"),
    attrgetter("next_run_at_ms"),
    attrgetter("repeat_interval"),
    attrgetter("created_at_ms"),
)
_ID = attrgetter("id")
_NAME = attrgetter("name")
_DATA = attrgetter("data_json")

#: A statement's shape: its row count and, per optional column, whether it is bound per row.
Shape = tuple[int, tuple[bool, ...]]


class BulkInserter:
    """Builds (and caches, per shape) the two statements for a run of plain new jobs."""

    def __init__(self, tables: Tables, journal: Journal) -> None:
        self._jobs = tables.jobs
        self._journal = journal
        # Read before the feed rows go in, so the jobs' stamp is at or below this commit's
        # last sequence number (schema.Tables.change_stamp).
        self._stamp_sql = f"SELECT coalesce(max(seq), 0) + 1 FROM {tables.changes}"
        self._sql: dict[Shape, tuple[str, str]] = {}

    def insert(self, conn: sqlite3.Connection, part: Sequence[NewJob], ready: Callable[[], None] | None = None) -> None:
        """Insert ``part`` (no unique keys; the caller holds the transaction) and its feed rows.

        The feed rows go first and ``ready`` is called between the two statements: the jobs'
        statement is the long one, and its step is what may overlap with the loop (see
        ``SqliteStore.insert_chunks``)."""
        n = len(part)
        if not n:
            return
        ids = list(map(_ID, part))
        params = ids + list(map(_DATA, part))
        feed = ids.copy()
        per_row: list[bool] = []
        for column, get in enumerate(_OPTIONAL):
            values = list(map(get, part))
            first = values[0]
            varies = values.count(first) != n
            per_row.append(varies)
            if varies:
                params += values
            else:
                params.append(first)
            if column < 2:  # the feed row carries the name and the due time
                if varies:
                    feed += values
                else:
                    feed.append(first)
        jobs_sql, feed_sql = self._statements((n, tuple(per_row)))
        (stamp,) = conn.execute(self._stamp_sql).fetchone()
        params.append(stamp)
        counts = Changes()
        names_vary, *_ = per_row  # _OPTIONAL starts with the name
        if names_vary:
            for name in map(_NAME, part):
                counts.move(name, None, "pending")
        else:
            counts.move(part[0].name, None, "pending", jobs=n)
        self._journal.inserted(conn, feed_sql, feed, counts)
        if ready is not None:
            ready()
        conn.execute(jobs_sql, params)

    def _statements(self, shape: Shape) -> tuple[str, str]:
        cached = self._sql.get(shape)
        if cached is None:
            cached = self._sql[shape] = self._build(*shape)
        return cached

    def _build(self, n: int, per_row: tuple[bool, ...]) -> tuple[str, str]:
        def refs(start: int, varies: bool) -> tuple[list[str], int]:
            """``?N`` for each row of a block starting after parameter ``start``."""
            if varies:
                return [f"?{start + k + 1}" for k in range(n)], start + n
            return [f"?{start + 1}"] * n, start + 1

        ids, at = refs(0, True)
        data, at = refs(at, True)
        names_vary, dues_vary, repeats_vary, created_vary = per_row  # _OPTIONAL's order
        name, at = refs(at, names_vary)
        due, at = refs(at, dues_vary)
        repeat, at = refs(at, repeats_vary)
        created, at = refs(at, created_vary)
        stamp = f"?{at + 1}"  # the last parameter: the commit-order stamp, shared by every row
        jobs_sql = (
            f"INSERT INTO {self._jobs} (id, name, data, status, next_run_at, fail_count, repeat_interval, "
            "unique_key, created_at, updated_at, change_seq) VALUES "
            + ",".join(
                f"({ids[k]}, {name[k]}, {data[k]}, 'pending', {due[k]}, 0, {repeat[k]}, NULL, {created[k]}, "
                f"{created[k]}, {stamp})"
                for k in range(n)
            )
        )
        feed_name, at = refs(n, names_vary)
        feed_due, at = refs(at, dues_vary)
        feed_sql = self._journal.inserts_feed_sql(ids, feed_name, feed_due)
        return jobs_sql, feed_sql

"""The journal: what every change of a job's state writes beside the job row, in its transaction.

Two things must change with a job row, or not at all:

* the **feed** (the change table): every insert, status or ``next_run_at`` change and
  delete, in commit order; its sequence numbers are the cross-process wake-up and the
  resume token (feed.py);
* the **counts** (schema version 5): jobs per ``(name, status)`` and, for completed jobs, the
  sum of their durations, so that counts, stats, the console's tabs and the Queues view read
  a few rows per name instead of the job table (a count of 5M jobs read them all);
* the **error counts** (schema version 6): the failed and retrying members of each error
  group (``schema.ERROR_MEMBER``), so that the errors view reads a row per group instead of
  every failure (800k of them at 10M jobs).

Write paths describe what they changed as a ``Changes`` batch (one entry per job: its feed
row and the status it left) or, for a set selected in SQL, hand the journal their WHERE; the
journal writes the feed rows and applies the count deltas, in the caller's transaction. It
is the only code that writes these tables (``tests/test_sqlite_counts_exact.py`` keeps it so).
A row changed outside the store (the ``sqlite3`` shell) is the one way the counts drift;
``rebuild_counts`` (``monque-tui repair-counts``) recounts them from the job table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import jobrow as col
from .schema import ERROR_MEMBER, NO_ERROR_TYPE, NO_ERROR_TYPE_VALUE, Tables

#: Feed rows per multi-row INSERT (5 bound values each); longer lists use executemany.
FEED_MULTI_ROW = 128

#: ``(op, job_id, name, status, next_run_at)``: one row of the change table.
FeedEntry = tuple[str, str, str, str | None, int | None]

#: A member's kind, as an index into an error count's ``[failed, retrying]``.
FAILED, RETRYING = 0, 1


def membership(status: Any, fail_count: Any, error_group: Any) -> int | None:
    """``schema.ERROR_MEMBER`` in Python: FAILED, RETRYING, or None (not a member).

    ``fail_count > 0`` as SQLite compares it: text (a value written by hand) is greater than
    any number, NULL is not."""
    if error_group is None:
        return None
    if status == "failed":
        return FAILED
    if status == "pending" and fail_count is not None and (not isinstance(fail_count, (int, float)) or fail_count > 0):
        return RETRYING
    return None


@dataclass(slots=True)
class Changes:
    """One write's changes: feed rows in order, and count deltas per ``(name, status)``.

    Kept lean: a drain adds one per job on the event loop's thread (``add`` is two dict
    updates), and ``Journal.write`` turns the deltas into one multi-row upsert."""

    entries: list[FeedEntry] = field(default_factory=list)
    #: ``(name, status) -> jobs in minus jobs out``
    jobs: dict[tuple[str, str], int] = field(default_factory=dict)
    #: ``name -> completed duration ms in minus out``
    durations: dict[str, int] = field(default_factory=dict)
    #: ``(error group, name, error type) -> [failed, retrying]`` members in minus out; None
    #: until a member moves (most writes move none: a drain's never do).
    groups: dict[tuple[Any, Any, Any], list[int]] | None = None

    def add(
        self,
        op: str,
        job_id: str,
        name: str,
        status: str | None,
        next_run_at: int | None,
        was: str | None,
        duration_ms: int = 0,
    ) -> None:
        """A job went from status ``was`` (None: it is new) to ``status`` (None: deleted).

        ``duration_ms`` is the job's ``updatedAt - createdAt`` when it is (or was, on a
        delete) a completed job: what the average processing time is made of."""
        self.entries.append((op, job_id, name, status, next_run_at))
        if was != status:
            self.move(name, was, status, duration_ms)

    def move(self, name: str, was: str | None, status: str | None, duration_ms: int = 0, jobs: int = 1) -> None:
        """Count ``jobs`` jobs of ``name`` out of ``was`` and into ``status`` (no feed row)."""
        if was == status:
            return
        counts = self.jobs
        if was is not None:
            key = (name, was)
            counts[key] = counts.get(key, 0) - jobs
            if was == "completed" and duration_ms:
                self.durations[name] = self.durations.get(name, 0) - duration_ms
        if status is not None:
            key = (name, status)
            counts[key] = counts.get(key, 0) + jobs
            if status == "completed" and duration_ms:
                self.durations[name] = self.durations.get(name, 0) + duration_ms

    def member(self, error_group: Any, name: Any, error_type: Any, was: int | None, now: int | None) -> None:
        """A job of ``error_group`` went from member kind ``was`` to ``now`` (``membership``:
        FAILED, RETRYING or None). ``error_type`` None is kept as ``NO_ERROR_TYPE``."""
        if was == now:
            return
        groups = self.groups
        if groups is None:
            groups = self.groups = {}
        key = (error_group, name, NO_ERROR_TYPE_VALUE if error_type is None else error_type)
        moved = groups.get(key)
        if moved is None:
            moved = groups[key] = [0, 0]
        if was is not None:
            moved[was] -= 1
        if now is not None:
            moved[now] += 1

    def member_row(self, row: tuple[Any, ...], was: str) -> None:
        """A job row (JOB_COLUMNS order, as ``RETURNING`` gives it) that left status ``was``
        in a statement that changed neither its ``fail_count`` nor its ``error_group``."""
        group = row[col.ERROR_GROUP]
        if group is not None:
            fail_count = row[col.FAIL_COUNT]
            self.member(
                group,
                row[col.NAME],
                row[col.ERROR_TYPE],
                membership(was, fail_count, group),
                membership(row[col.STATUS], fail_count, group),
            )

    def rows(self) -> list[tuple[str, str, int, int]]:
        """``(name, status, jobs, duration ms)`` for every count that moves."""
        durations = self.durations
        keys = set(self.jobs)
        keys.update((name, "completed") for name in durations)
        rows = []
        for key in keys:
            name, status = key
            jobs = self.jobs.get(key, 0)
            duration = durations.get(name, 0) if status == "completed" else 0
            if jobs or duration:
                rows.append((name, status, jobs, duration))
        return rows


#: A completed row's duration counts only when both instants are integers: a hand edit that
#: wrote text (or a real) there must neither fail the write that moves the row (``int('soon')``)
#: nor add what SQLite's arithmetic makes of it. The same test in SQL and in Python keeps the
#: kept sums equal to a recount.
DURATION_READABLE = "typeof(created_at) = 'integer' AND typeof(updated_at) = 'integer'"


def completed_duration(row: tuple[Any, ...]) -> int:
    """A completed job row's ``updatedAt - createdAt`` (JOB_COLUMNS order): what the average
    processing time is made of; 0 for any other status, and for unreadable instants
    (``DURATION_READABLE``)."""
    created_at, updated_at = row[col.CREATED_AT], row[col.UPDATED_AT]
    if row[col.STATUS] != "completed" or type(created_at) is not int or type(updated_at) is not int:
        return 0
    return int(updated_at - created_at)


class Journal:
    """The statements for one collection's feed and counts, built once per open."""

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        changes, counts, jobs = tables.changes, tables.counts, tables.jobs
        self.feed_sql = f"INSERT INTO {changes} (op, job_id, name, status, next_run_at) VALUES (?, ?, ?, ?, ?)"
        self._feed_multi: dict[int, str] = {}
        self._count_multi: dict[int, str] = {}
        self._count_sql = (
            f"INSERT INTO {counts} (name, status, jobs, duration_ms) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (name, status) DO UPDATE SET jobs = jobs + excluded.jobs, "
            "duration_ms = duration_ms + excluded.duration_ms"
        )
        # ``WHERE true``: SQLite's parser needs it between ``SELECT … FROM`` and ``ON CONFLICT``.
        self._tally = (
            f"INSERT INTO {counts} (name, status, jobs, duration_ms) "
            "SELECT name, status, {sign} count(*), "
            "{sign} coalesce(sum(CASE WHEN status = 'completed' AND "
            + DURATION_READABLE
            + " THEN updated_at - created_at END), 0) "
            f"FROM {jobs} WHERE {{where}} GROUP BY name, status "
            "ON CONFLICT (name, status) DO UPDATE SET jobs = jobs + excluded.jobs, "
            "duration_ms = duration_ms + excluded.duration_ms"
        )
        self._feed_select = (
            f"INSERT INTO {changes} (op, job_id, name, status, next_run_at) "
            f"SELECT ?, id, name, status, next_run_at FROM {jobs} WHERE {{where}}"
        )
        errors = tables.error_counts
        self._group_multi: dict[int, str] = {}
        self._group_upsert = (
            "ON CONFLICT (group_key, name, error_type) DO UPDATE SET failed = failed + excluded.failed, "
            "retrying = retrying + excluded.retrying"
        )
        self._group_sql = (
            f"INSERT INTO {errors} (group_key, name, error_type, failed, retrying) VALUES {{values}} "
            + self._group_upsert
        )
        # Grouped in the errors index's order (group, name, type): NULL and X'' types, if a
        # hand-written row has both, meet in the upsert.
        self._group_tally = (
            f"INSERT INTO {errors} (group_key, name, error_type, failed, retrying) "
            f"SELECT error_group, name, ifnull(error_type, {NO_ERROR_TYPE}), "
            "{sign} sum(status = 'failed'), {sign} sum(status = 'pending') "
            f"FROM {jobs} WHERE ({{where}}) AND {ERROR_MEMBER} GROUP BY error_group, name, error_type "
            + self._group_upsert
        )

    # -- one write's changes, described in Python ------------------------------------------------
    def write(self, conn: sqlite3.Connection, changes: Changes) -> None:
        """Append ``changes``' feed rows (in order) and apply its count deltas (one statement,
        and one more when error groups' members moved)."""
        self.append_feed(conn, changes.entries)
        if changes.groups:
            self._write_groups(conn, changes.groups)
        rows = changes.rows()
        if not rows:
            return
        sql = self._count_multi.get(len(rows))
        if sql is None:
            sql = self._count_multi[len(rows)] = self._count_sql.replace(
                "VALUES (?, ?, ?, ?)", "VALUES " + ",".join(["(?, ?, ?, ?)"] * len(rows))
            )
        conn.execute(sql, [value for row in rows for value in row])

    def _write_groups(self, conn: sqlite3.Connection, groups: dict[tuple[Any, Any, Any], list[int]]) -> None:
        rows = [(*key, failed, retrying) for key, (failed, retrying) in groups.items() if failed or retrying]
        if not rows:
            return
        sql = self._group_multi.get(len(rows))
        if sql is None:
            sql = self._group_multi[len(rows)] = self._group_sql.format(
                values=",".join(["(?, ?, ?, ?, ?)"] * len(rows))
            )
        conn.execute(sql, [value for row in rows for value in row])

    def updated_rows(self, conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]], was: str) -> int:
        """Journal job rows (JOB_COLUMNS order, as ``RETURNING`` gives them) that all left
        status ``was`` in a statement that changed neither ``fail_count`` nor ``error_group``
        (their error group membership is read from the row); how many."""
        if rows:
            changes = Changes()
            for row in rows:
                changes.add(
                    "update",
                    row[col.ID],
                    row[col.NAME],
                    row[col.STATUS],
                    row[col.NEXT_RUN_AT],
                    was,
                    completed_duration(row),
                )
                if row[col.ERROR_GROUP] is not None:
                    changes.member_row(row, was)
            self.write(conn, changes)
        return len(rows)

    def append_feed(self, conn: sqlite3.Connection, entries: Sequence[FeedEntry]) -> None:
        """Feed rows only, for a change that moves no count (a job rescheduled, an attempt
        recorded) or whose counts were applied by ``tally``.

        Up to FEED_MULTI_ROW rows go in one multi-row INSERT (cached per row count): a
        drain round's claims and completions are ~10 rows, and ``executemany`` steps,
        resets and re-binds a statement per row from Python.
        """
        count = len(entries)
        if count == 0:
            return
        if count == 1:
            (entry,) = entries
            conn.execute(self.feed_sql, entry)
            return
        if count > FEED_MULTI_ROW:
            conn.executemany(self.feed_sql, entries)
            return
        sql = self._feed_multi.get(count)
        if sql is None:
            sql = self._feed_multi[count] = (
                f"INSERT INTO {self._tables.changes} (op, job_id, name, status, next_run_at) VALUES "
                + ",".join(["(?, ?, ?, ?, ?)"] * count)
            )
        conn.execute(sql, [value for entry in entries for value in entry])

    def inserted(self, conn: sqlite3.Connection, feed_sql: str, feed_params: Sequence[Any], per_name: Changes) -> None:
        """A multi-row insert's feed statement (built by ``bulk.BulkInserter`` for its shape)
        and its counts (``per_name``: pending per name, no feed entries)."""
        conn.execute(feed_sql, feed_params)
        self.write(conn, per_name)

    def inserts_feed_sql(self, ids: Sequence[str], names: Sequence[str], dues: Sequence[str]) -> str:
        """A multi-row feed statement for new jobs, its values given as parameter references
        (``?N``) by the caller (``bulk.BulkInserter`` shares them between rows)."""
        return f"INSERT INTO {self._tables.changes} (op, job_id, name, status, next_run_at) VALUES " + ",".join(
            f"('insert', {i}, {n}, 'pending', {d})" for i, n, d in zip(ids, names, dues, strict=True)
        )

    def moved_feed_sql(self, source: str) -> str:
        """The feed statement for jobs moved in from ``source`` (the inbox), in its order."""
        return (
            f"INSERT INTO {self._tables.changes} (op, job_id, name, status, next_run_at) "
            f"SELECT 'insert', id, name, 'pending', next_run_at FROM {source} ORDER BY seq"
        )

    def adopt(self, conn: sqlite3.Connection, where: str, params: Sequence[Any]) -> None:
        """Journal job rows that were written as plain rows (the demo's seed, which writes
        finished jobs with their history): stamp them, feed them as inserts, count them."""
        t = self._tables
        conn.execute(f"UPDATE {t.jobs} SET change_seq = {t.change_stamp} WHERE {where}", params)
        self.inserted_rows(conn, where, params)

    def inserted_rows(self, conn: sqlite3.Connection, where: str, params: Sequence[Any]) -> None:
        """Feed as inserts and count the job rows ``where`` selects, which their INSERT
        already stamped in commit order (``imports.py``)."""
        conn.execute(self._feed_select.format(where=where), ("insert", *params))
        self.tally(conn, where, params, 1)

    def feed_trim_target(self, conn: sqlite3.Connection, keep: int) -> int | None:
        """The last sequence number a trim to the last ``keep`` rows removes, or None while
        fewer than a tenth of ``keep`` rows are past the window (the feed is a window, not a
        history). Fixed when a trim starts, so the trim ends while writers keep adding rows."""
        t = self._tables
        keep = max(keep, 1)
        (last,) = conn.execute(f"SELECT coalesce(max(seq), 0) FROM {t.changes}").fetchone()
        (pruned,) = conn.execute(f"SELECT value FROM {t.meta} WHERE key='feed_pruned_through'").fetchone()
        cutoff = last - keep
        return None if cutoff <= pruned + keep // 10 else int(cutoff)

    def trim_feed_chunk(self, conn: sqlite3.Connection, through: int, limit: int) -> int:
        """Delete at most ``limit`` of the oldest change rows, none past ``through`` (a
        ``feed_trim_target``), and move ``feed_pruned_through`` to what went, so resume tokens
        are judged right between chunks; how many rows went (0: the trim is done). One
        statement over the whole excess held the write lock for seconds after a big purge
        (issue 34). Never empties the table: ``through`` leaves ``keep`` rows, and SQLite
        would otherwise reuse sequence numbers, which are resume tokens and the bulk bound's
        positions."""
        t = self._tables
        (first,) = conn.execute(f"SELECT min(seq) FROM {t.changes}").fetchone()
        if first is None or first > through:
            return 0
        upto = min(through, first + max(limit, 1) - 1)  # seq is unique: at most ``limit`` rows
        removed: int = conn.execute(f"DELETE FROM {t.changes} WHERE seq <= ?", (upto,)).rowcount
        conn.execute(f"UPDATE {t.meta} SET value=? WHERE key='feed_pruned_through'", (upto,))
        return removed

    # -- a set of jobs selected in SQL ------------------------------------------------------------
    def tally(self, conn: sqlite3.Connection, where: str, params: Sequence[Any], sign: int) -> None:
        """Add (``sign`` = 1) or take out (-1) the counts and error counts of the jobs ``where``
        selects, as they are now: before an update or delete of them with -1, after an update
        with 1. (So a WHERE clears ``error_group`` safely: ``RETURNING`` would give the values
        after it.)"""
        text = "" if sign > 0 else "-"
        conn.execute(self._tally.format(sign=text, where=where), params)
        conn.execute(self._group_tally.format(sign=text, where=where), params)

    def delete_where(self, conn: sqlite3.Connection, where: str, params: Sequence[Any]) -> int:
        """Delete the jobs ``where`` selects, with their feed rows and counts (the caller holds
        the write lock, so the three statements see the same rows)."""
        conn.execute(self._feed_select.format(where=where), ("delete", *params))
        self.tally(conn, where, params, -1)
        return conn.execute(f"DELETE FROM {self._tables.jobs} WHERE {where}", params).rowcount

    def update_where(self, conn: sqlite3.Connection, assignments: str, params: Sequence[Any], where: str) -> None:
        """``UPDATE … SET assignments`` the jobs ``where`` selects (no parameters: an id set),
        with their feed rows and count moves."""
        t = self._tables
        self.tally(conn, where, (), -1)
        conn.execute(f"UPDATE {t.jobs} SET {assignments}, change_seq = {t.change_stamp} WHERE {where}", params)
        self.tally(conn, where, (), 1)
        conn.execute(self._feed_select.format(where=where), ("update",))

    # -- the counts as a whole --------------------------------------------------------------------
    def rebuild_counts(self, conn: sqlite3.Connection) -> list[tuple[str, str, int, int]]:
        """Recount every ``(name, status)`` and every error group's members from the job table;
        returns what differed, as ``(name, status, counted before, counted now)`` (an error
        group's as ``(name, "failed in error group KEY", …)``)."""
        return self.rebuild_status_counts(conn) + self.rebuild_error_counts(conn)

    def rebuild_status_counts(self, conn: sqlite3.Connection) -> list[tuple[str, str, int, int]]:
        """Recount every ``(name, status)`` (what the v5 migration builds). Each status is read
        from its own partial index where one exists, so the job rows themselves are not read.
        Names are compared as stored bytes (a hand-written name may not be UTF-8) and shown
        with any invalid bytes replaced, as reads show them."""
        t = self._tables
        kept = f"SELECT CAST(name AS BLOB), status, jobs FROM {t.counts} WHERE jobs != 0"
        before = {(name, status): jobs for name, status, jobs in conn.execute(kept)}
        conn.execute(f"DELETE FROM {t.counts}")
        conn.execute(
            f"INSERT INTO {t.counts} (name, status, jobs, duration_ms) "
            f"SELECT name, 'pending', count(*), 0 FROM {t.jobs} WHERE status = 'pending' GROUP BY name "
            f"UNION ALL SELECT name, 'processing', count(*), 0 FROM {t.jobs} WHERE status = 'processing' GROUP BY name "
            "UNION ALL SELECT name, status, count(*), "
            "coalesce(sum(CASE WHEN status = 'completed' AND "
            + DURATION_READABLE
            + " THEN updated_at - created_at END), 0) "
            f"FROM {t.jobs} WHERE status IN ('completed','failed','cancelled') GROUP BY name, status"
        )
        after = {(name, status): jobs for name, status, jobs in conn.execute(kept)}
        return [
            (_shown(name), status, before.get((name, status), 0), after.get((name, status), 0))
            for name, status in sorted(set(before) | set(after))
            if before.get((name, status), 0) != after.get((name, status), 0)
        ]

    def rebuild_error_counts(self, conn: sqlite3.Connection) -> list[tuple[str, str, int, int]]:
        """Recount every error group's members from the errors index (covering, in the order
        of the grouping: no job row is read, nothing is sorted; what the v6 migration builds);
        what differed, as ``rebuild_counts`` reports it."""
        t = self._tables
        kept = (
            f"SELECT CAST(group_key AS BLOB), CAST(name AS BLOB), CAST(error_type AS BLOB), failed, retrying "
            f"FROM {t.error_counts} WHERE failed != 0 OR retrying != 0"
        )
        before = {row[:3]: row[3:] for row in conn.execute(kept)}
        conn.execute(f"DELETE FROM {t.error_counts}")
        conn.execute(self._group_tally.format(sign="", where="1"))
        after = {row[:3]: row[3:] for row in conn.execute(kept)}
        differed = []
        for key in sorted(set(before) | set(after)):
            was, now = before.get(key, (0, 0)), after.get(key, (0, 0))
            group_key, name_key, _error_type = key
            group, name = _shown(group_key), _shown(name_key)
            for kind, index in (("failed", FAILED), ("retrying", RETRYING)):
                if was[index] != now[index]:
                    differed.append((name, f"{kind} in error group {group}", was[index], now[index]))
        return differed

    def prune_error_counts(self, conn: sqlite3.Connection, limit: int) -> int:
        """Drop the error counts of at most ``limit`` groups with no member left (their rows
        stay at zero until then: a write that empties a group does not look); how many went
        (fewer than ``limit``: none are left). Bounded like the feed trim: a purge of failed
        jobs can empty many groups at once."""
        t = self._tables.error_counts
        return int(
            conn.execute(
                f"DELETE FROM {t} WHERE (group_key, name, error_type) IN "
                f"(SELECT group_key, name, error_type FROM {t} WHERE failed = 0 AND retrying = 0 LIMIT ?)",
                (limit,),
            ).rowcount
        )


def _shown(value: Any) -> str:
    """A stored name or key, as reads show it (invalid UTF-8 replaced)."""
    return bytes(value).decode("utf-8", "replace")

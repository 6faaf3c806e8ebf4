"""SQLite schema: Monque's job document as columns, plus the change table and the kept counts.

Columns mirror the MongoDB fields one to one (instants as epoch ms, payload as JSON text),
so a job moves between stores without translation. The change table is what makes the
feed cross-process: every insert, status / nextRunAt change and delete the store makes
appends a row in the same transaction (journal.py writes it, not triggers), so its sequence
number is commit order and a resume token. (Edits made outside the store, e.g. in the
sqlite3 shell, are not in it.)
"""

from __future__ import annotations

import re

from ..base import InvalidCollectionNameError

SCHEMA_VERSION = 9
JOB_COLUMNS = (
    "id", "name", "data", "status", "next_run_at", "locked_at", "claimed_by", "last_heartbeat",
    "heartbeat_interval", "fail_count", "fail_reason", "repeat_interval", "unique_key",
    "created_at", "updated_at", "attempts", "error_type", "error_group", "timeout_ms", "over_limit_at",
    "stop_requested_at", "progress", "result",
)  # fmt: skip
#: The columns a claim returns (``statements.claim``): what a run needs. The later fields of
#: ours (``over_limit_at``, ``stop_requested_at``, ``progress``, ``result``) speak only for the
#: attempt they were written in (ADR 0019), never for the one a claim starts, so a claimed Job
#: has none of them and the drain's claims do not carry them (issue 37: the drain within 3 %).
CLAIM_COLUMNS = JOB_COLUMNS[: JOB_COLUMNS.index("timeout_ms") + 1]
#: The job columns declared INTEGER in ``Tables.ddl``; the others are TEXT.
INTEGER_COLUMNS = frozenset({
    "next_run_at", "locked_at", "last_heartbeat", "heartbeat_interval", "fail_count", "created_at", "updated_at",
    "timeout_ms", "over_limit_at", "stop_requested_at",
})  # fmt: skip
#: A bound that keeps text out of a ``min`` / ``max`` of an instant (SQLite sorts text after
#: every number, so one hand-edited row would become "the latest", or the only, answer and
#: fail the caller's arithmetic), as a range the index seek still serves.
INTEGERS_ONLY = f"<= {2**63 - 1}"
#: Failed jobs and retrying ones (pending after a failure): the members of error groups.
#: Written identically in the index and in every query that must use it (SQLite matches a
#: partial index's WHERE term by term).
ERROR_MEMBER = "error_group IS NOT NULL AND (status = 'failed' OR (status = 'pending' AND fail_count > 0))"
#: The finished statuses, as the finished index's WHERE says them: a query that repeats this
#: term verbatim can use that index (SQLite matches a partial index's WHERE term by term).
FINISHED = "status IN ('completed','failed','cancelled')"
#: The kept error counts' ``error_type`` for a job without one (``Tables.error_counts_ddl``),
#: as SQL and as the value Python binds.
NO_ERROR_TYPE = "X''"
NO_ERROR_TYPE_VALUE = b""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def check_collection_name(name: str) -> str:
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise InvalidCollectionNameError(
            f"Collection name {name!r} cannot be a SQLite table name; use letters, digits and "
            "underscores, starting with a letter (e.g. monque_jobs)"
        )
    return name


def pending_index(table: str) -> str:
    """Claims, wake-up timers and every count of pending jobs (stats, health, the console's tabs).

    ``status`` is a column, though the partial index's WHERE already fixes it: SQLite 3.40
    does not count a column the WHERE implies as covered, so without it each count of
    pending jobs looked up every row in the table (1.4 s for 1M pending jobs against 52 ms
    from the index alone; per-name stats 1.7 s against 138 ms). Files made before it get
    the index rebuilt once on a writable open (``migrations.upgrade_pending_index``).
    """
    return f"CREATE INDEX IF NOT EXISTS {table}_pending ON {table}(name, next_run_at, status) WHERE status = 'pending'"


def error_index(table: str) -> str:
    """Error groups (schema v2): one covering, partial index over the failed and retrying
    jobs only, so grouping 100k failures reads index pages alone, a group's page in any
    sort order is picked from the index (see ``queries.page_query``), and inserts, claims
    and completions of healthy jobs never touch it."""
    return (
        f"CREATE INDEX IF NOT EXISTS {table}_errors "
        f"ON {table}(error_group, name, error_type, status, updated_at, fail_count, created_at, next_run_at) "
        f"WHERE {ERROR_MEMBER}"
    )


def change_seq_column() -> str:
    """Schema version 5: the column that orders job rows by the commit that last wrote them.

    Not a job field (it is never read into a ``Job`` and never exported): it is what lets a
    bulk action take only the jobs its count saw (``Tables.change_stamp``).
    """
    return "change_seq INTEGER NOT NULL DEFAULT 0"


class Tables:
    """Table and statement names for one collection."""

    def __init__(self, collection: str) -> None:
        self.jobs = check_collection_name(collection)
        self.changes = f"{collection}_changes"
        self.meta = f"{collection}_meta"
        # Fleet and queue control (schema version 3): never inside job rows.
        self.instances = f"{collection}_instances"
        self.control = f"{collection}_control"
        self.counters = f"{collection}_counters"
        # Jobs per (name, status), kept by the journal (schema version 5, journal.py).
        self.counts = f"{collection}_counts"
        # Failed and retrying jobs per error group, kept by the journal (schema version 6).
        self.error_counts = f"{collection}_error_counts"
        # Single enqueues waiting to be absorbed (schema version 4, inbox.py).
        self.inbox = f"{collection}_inbox"
        self.columns = ", ".join(JOB_COLUMNS)
        #: The value every write of a job row stores in ``change_seq``: one past the change
        #: table's last sequence number, read inside the writing transaction. Writers hold the
        #: write lock one at a time, so a row written after a reader's snapshot always gets a
        #: value above that snapshot's ``max(seq)`` (``bulk_bound``), and a row written before
        #: it a value at or below (its own feed rows, if any, are at least as high), or one
        #: above when the write appended no feed row (a heartbeat): a bulk action bounded by
        #: the count's position therefore never reaches a job written after the count, and
        #: passes over a job heartbeated just before it (fewer, never more).
        #: Non-correlated, so SQLite evaluates it once per statement (a seek to the last row).
        self.change_stamp = f"(SELECT coalesce(max(seq), 0) + 1 FROM {self.changes})"
        #: Where a count stands in commit order: read in the count's own snapshot.
        self.bulk_bound = f"SELECT coalesce(max(seq), 0) FROM {self.changes}"

    def ddl(self, retention_index: bool) -> list[str]:
        """Tables and indexes (no triggers: journal.py writes the feed). Every index costs a page write on each commit that
        touches it (~10 µs here), so indexes that only matter for one status are partial:
        an insert touches the table, the pending index, the sort indexes and the feed."""
        j, c, m = self.jobs, self.changes, self.meta
        statements = [
            f"""CREATE TABLE IF NOT EXISTS {j} (
                id TEXT PRIMARY KEY NOT NULL,
                name TEXT NOT NULL,
                data TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('pending','processing','completed','failed','cancelled')),
                next_run_at INTEGER NOT NULL,
                locked_at INTEGER,
                claimed_by TEXT,
                last_heartbeat INTEGER,
                heartbeat_interval INTEGER,
                fail_count INTEGER NOT NULL DEFAULT 0,
                fail_reason TEXT,
                repeat_interval TEXT,
                unique_key TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                attempts TEXT,
                error_type TEXT,
                error_group TEXT,
                timeout_ms INTEGER,
                over_limit_at INTEGER,
                stop_requested_at INTEGER,
                progress TEXT,
                result TEXT,
                {change_seq_column()}
            ) WITHOUT ROWID""",
            error_index(j),
            # Claims and wake-up timers: due pending jobs of a name, earliest first.
            pending_index(j),
            # Heartbeats, releases and stale recovery: the (few) jobs being processed.
            f"CREATE INDEX IF NOT EXISTS {j}_processing ON {j}(claimed_by, locked_at) WHERE status = 'processing'",
            f"""CREATE UNIQUE INDEX IF NOT EXISTS {j}_unique_key ON {j}(name, unique_key)
                WHERE unique_key IS NOT NULL AND status IN ('pending','processing')""",
            # Statistics: pending and processing counts come from the two indexes above;
            # finished jobs (and their durations) from this one, so inserts and claims,
            # the hot path, never touch it.
            f"DROP INDEX IF EXISTS {j}_name_status",
            f"""CREATE INDEX IF NOT EXISTS {j}_finished ON {j}(name, status, updated_at, created_at)
                WHERE {FINISHED}""",
            # Keyset listings (the console) sorted by creation or last change.
            f"CREATE INDEX IF NOT EXISTS {j}_created ON {j}(created_at, id)",
            f"CREATE INDEX IF NOT EXISTS {j}_updated ON {j}(updated_at, id)",
            # Recurring jobs are few: a partial index finds every schedule without a scan,
            # and inserts of one-off jobs never touch it.
            f"CREATE INDEX IF NOT EXISTS {j}_recurring ON {j}(name, id) WHERE repeat_interval IS NOT NULL",
            # Claims and one-off completions never change next_run_at, so this one costs
            # only on insert, retry and reschedule.
            f"CREATE INDEX IF NOT EXISTS {j}_next_run ON {j}(next_run_at, id)",
            f"""CREATE TABLE IF NOT EXISTS {c} (
                seq INTEGER PRIMARY KEY,
                op TEXT NOT NULL,
                job_id TEXT NOT NULL,
                name TEXT,
                status TEXT,
                next_run_at INTEGER
            )""",
            f"CREATE TABLE IF NOT EXISTS {m} (key TEXT PRIMARY KEY, value)",
            # Feed rows are written by the store's own statements, not by triggers: a trigger
            # costs ~11 µs per row here, an executemany of the same rows next to nothing.
            f"DROP TRIGGER IF EXISTS {j}_feed_insert",
            f"DROP TRIGGER IF EXISTS {j}_feed_update",
            f"DROP TRIGGER IF EXISTS {j}_feed_delete",
            *self.fleet_ddl(),
            self.inbox_ddl(),
            self.counts_ddl(),
            self.error_counts_ddl(),
            f"INSERT OR IGNORE INTO {m}(key, value) VALUES ('schema_version', {SCHEMA_VERSION})",
            f"INSERT OR IGNORE INTO {m}(key, value) VALUES ('feed_pruned_through', 0)",
        ]
        # ``retention_index`` is kept for the call's shape: the purge seeks the finished index
        # by (name, status, updated_at) a name at a time, so no index is built when retention is
        # switched on (building one held the write lock 11.3 s on a file of 5M jobs). A file
        # that has one from before keeps it.
        del retention_index
        return statements

    def counts_ddl(self) -> str:
        """Schema version 5: jobs per ``(name, status)`` and, for completed jobs, the sum of
        their durations (``updatedAt - createdAt``), written by the journal in the same
        transaction as every change; what counts, stats and the console's tabs read."""
        return f"""CREATE TABLE IF NOT EXISTS {self.counts} (
                name TEXT NOT NULL,
                status TEXT NOT NULL,
                jobs INTEGER NOT NULL DEFAULT 0,
                duration_ms INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (name, status)
            ) WITHOUT ROWID"""

    def error_counts_ddl(self) -> str:
        """Schema version 6: the members of each error group (``ERROR_MEMBER``), failed and
        retrying, per ``(group, name, error type)``, written by the journal in the same
        transaction as every change; what the errors view's totals read (one row per group,
        not one per failure). Within a group the name and type are constant (the key hashes
        them), so a group is one row unless a row was written by hand.

        ``group_key``, not ``error_group``: the errors view joins this table to the job table,
        whose ``ERROR_MEMBER`` terms must name the job's columns alone. ``error_type`` is the
        job's, or a zero-length BLOB (``NO_ERROR_TYPE``) for none: a key column cannot be NULL,
        and ``''`` is a type a row could hold."""
        return f"""CREATE TABLE IF NOT EXISTS {self.error_counts} (
                group_key TEXT NOT NULL,
                name TEXT NOT NULL,
                error_type TEXT NOT NULL,
                failed INTEGER NOT NULL DEFAULT 0,
                retrying INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (group_key, name, error_type)
            ) WITHOUT ROWID"""

    def inbox_ddl(self) -> str:
        """Schema version 4: where a lone producer's single enqueues land first (inbox.py).

        A rowid table with no index, so appending a job writes one B-tree, not the job
        table's six; the rows are moved into the job table in bulk soon after.
        """
        return f"""CREATE TABLE IF NOT EXISTS {self.inbox} (
                seq INTEGER PRIMARY KEY,
                id TEXT NOT NULL,
                name TEXT NOT NULL,
                data TEXT NOT NULL,
                next_run_at INTEGER NOT NULL,
                created_at INTEGER NOT NULL
            )"""

    def fleet_ddl(self) -> list[str]:
        """Schema version 3: the instance registry, paused names and per-minute outcome counters.

        Small tables next to the jobs, each written at most once per heartbeat tick per
        process (counters) or by an operator (control), so they cost the hot path nothing.
        """
        return [
            f"""CREATE TABLE IF NOT EXISTS {self.instances} (
                id TEXT PRIMARY KEY NOT NULL,
                host TEXT NOT NULL,
                pid INTEGER NOT NULL,
                version TEXT NOT NULL,
                started_at INTEGER NOT NULL,
                heartbeat_interval INTEGER NOT NULL,
                workers TEXT NOT NULL,
                running INTEGER NOT NULL,
                processed INTEGER NOT NULL,
                failed INTEGER NOT NULL,
                last_heartbeat INTEGER NOT NULL,
                supervisor TEXT
            ) WITHOUT ROWID""",
            f"""CREATE TABLE IF NOT EXISTS {self.control} (
                name TEXT PRIMARY KEY NOT NULL,
                paused_at INTEGER NOT NULL
            ) WITHOUT ROWID""",
            f"""CREATE TABLE IF NOT EXISTS {self.counters} (
                name TEXT NOT NULL,
                minute INTEGER NOT NULL,
                completed INTEGER NOT NULL DEFAULT 0,
                failed INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (name, minute)
            ) WITHOUT ROWID""",
            f"CREATE INDEX IF NOT EXISTS {self.counters}_minute ON {self.counters}(minute)",
        ]

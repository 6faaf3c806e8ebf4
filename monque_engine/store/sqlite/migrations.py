"""Schema versions of a SQLite file: recognise ours, refuse the rest, upgrade old ones in order.

Why this exists: a store that silently adds its tables to whatever file the URL names
takes over another application's database (and switches it to WAL), and a file written by
an older layout used to be half-modified before a "no such column" error. So before any
change, the file is *inspected*:

* no tables at all: a new file, the store creates the current schema;
* our collection, ``schema_version`` = this code's: opened as it is;
* an older version: upgraded by ``MIGRATIONS``, in order, inside the caller's transaction
  (the write thread's ``BEGIN IMMEDIATE``), so an upgrade applies completely or not at all;
* a newer version: refused (upgrade monque_engine);
* tables but no Monque meta table, or a table with our collection's name that has no meta
  table next to it: refused (it belongs to someone else).

Adding a migration (see docs/adr/0006-schema-migrations.md): bump ``SCHEMA_VERSION`` in
``schema.py``, make ``Tables.ddl`` create the new layout for new files, and append
``(new_version, step)`` here, where ``step(conn, tables)`` turns a file of the previous
version into the new one using plain SQL. Never edit or reorder a released step.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ...errors import ConnectionError
from .journal import Journal
from .schema import SCHEMA_VERSION, Tables, change_seq_column, error_index, pending_index

Migration = Callable[[sqlite3.Connection, Tables], None]
log = logging.getLogger("monque_engine.store.sqlite")


def to_v2_attempts(conn: sqlite3.Connection, tables: Tables) -> None:
    """Version 2: attempt history and error groups (issue 12).

    Three nullable columns, so existing rows need no rewrite (ADD COLUMN only edits the
    table's definition): ``attempts`` (JSON array, see attempts.py), ``error_type`` and
    ``error_group`` (see errorgroups.py), and the partial index that groups failures.
    Failures recorded before the upgrade carry no group and are not in the errors view
    until they fail again.
    """
    j = tables.jobs
    for column in ("attempts", "error_type", "error_group"):
        conn.execute(f"ALTER TABLE {j} ADD COLUMN {column} TEXT")
    conn.execute(error_index(j))


def _v3_fleet(conn: sqlite3.Connection, tables: Tables) -> None:
    """Version 3 (issue 13): the instance registry, paused names and outcome counters.

    New tables only; job rows are untouched, so the step is cheap on any file size.
    """
    for statement in tables.fleet_ddl():
        conn.execute(statement)


def _v2_columns_if_missing(conn: sqlite3.Connection, tables: Tables) -> None:
    """Files at version 3 made by the development line between 2e3d907 and 179062e (never
    released), on which version 2 was an empty placeholder, lack version 2's columns: every
    open failed with "no such column: error_group" after a long count (a migration probe).
    They are added here, as version 2 adds them; a file that has them is untouched."""
    have = {str(name) for _, name, *_ in conn.execute(f"PRAGMA table_info({tables.jobs})")}
    missing = [column for column in ("attempts", "error_type", "error_group") if column not in have]
    if not missing:
        return
    log.warning("%s lacks version 2's columns (%s): adding them", tables.jobs, ", ".join(missing))
    for column in missing:
        conn.execute(f"ALTER TABLE {tables.jobs} ADD COLUMN {column} TEXT")
    conn.execute(error_index(tables.jobs))


def _v4_inbox(conn: sqlite3.Connection, tables: Tables) -> None:
    """Version 4 (issue 14): the inbox table that single enqueues append to (inbox.py).

    A new, empty table; job rows are untouched. Older builds refuse the file from here on,
    which they must: they would not see jobs waiting in the inbox.
    """
    _v2_columns_if_missing(conn, tables)
    conn.execute(tables.inbox_ddl())


def _v5_change_seq(conn: sqlite3.Connection, tables: Tables) -> None:
    """Version 5 (issues 25, 26): ``change_seq``, each job row's place in commit order, and
    the counts table (jobs per name and status, journal.py), built here from the job table.

    ADD COLUMN with a constant default only edits the table's definition, so the step costs
    the same on any file size. Existing rows read 0: written before any count taken from now
    on, which is what a bulk action's bound needs of them (``Tables.change_stamp``). Older
    builds refuse the file from here on, which they must: their writes would not stamp it
    nor keep the counts. Counting reads each status from its partial index (about 1 s per
    million jobs); the open logs when it starts and how long it took.
    """
    columns = {column for _cid, column, *_ in conn.execute(f"PRAGMA table_info({tables.jobs})")}
    if "change_seq" not in columns:  # a file whose version was set back by hand may have it
        conn.execute(f"ALTER TABLE {tables.jobs} ADD COLUMN {change_seq_column()}")
    conn.execute(tables.counts_ddl())
    _timed_count(conn, tables, "jobs", "schema version 5: kept counts", Journal(tables).rebuild_status_counts)


def _v6_error_counts(conn: sqlite3.Connection, tables: Tables) -> None:
    """Version 6 (issue 26): the error counts table (each error group's failed and retrying
    jobs, journal.py), built here from the errors index.

    The index already holds exactly the members, in (group, name, type) order, so the build
    reads it once without sorting (about 0.3 s per 800k failures; the job rows are not read)
    and builds no index. Older builds refuse the file from here on, which they must: their
    failures and retries would not keep the counts. The open logs when it starts and how
    long it took.
    """
    conn.execute(tables.error_counts_ddl())
    _timed_count(
        conn, tables, "error groups", "schema version 6: kept error counts", Journal(tables).rebuild_error_counts
    )


def _v7_time_limits(conn: sqlite3.Connection, tables: Tables) -> None:
    """Version 7 (issue 37, ADR 0019): ``timeout_ms``, a job's own time limit, and
    ``over_limit_at``, when its running attempt passed its limit while a sync handler went on.

    Two nullable columns: ADD COLUMN only edits the table's definition, so the step costs the
    same on any file size, and every existing job reads as having no limit of its own. Older
    builds refuse the file from here on, which they must: they would run a job past the
    limit its producer gave it.
    """
    for column in ("timeout_ms", "over_limit_at"):
        conn.execute(f"ALTER TABLE {tables.jobs} ADD COLUMN {column} INTEGER")


def _v8_running_jobs(conn: sqlite3.Connection, tables: Tables) -> None:
    """Version 8 (issues 37 and 38, ADR 0019): ``stop_requested_at`` (an operator asked to
    stop the running attempt), ``progress`` (its handler's last report, JSON) and ``result``
    (what a handler returned, JSON).

    Nullable columns added by ``ADD COLUMN``, which only edits the table's definition: the
    step costs the same on any file size, and every existing job reads as having none.
    """
    conn.execute(f"ALTER TABLE {tables.jobs} ADD COLUMN stop_requested_at INTEGER")
    for column in ("progress", "result"):
        conn.execute(f"ALTER TABLE {tables.jobs} ADD COLUMN {column} TEXT")


def _v9_supervisor(conn: sqlite3.Connection, tables: Tables) -> None:
    """Version 9 (issue 38, ADR 0019): ``supervisor`` on the instance registry, the id of the
    supervisor that started the instance (``monque-tui --worker --processes N``).

    A nullable column on the small registry table; job rows are untouched. A file that took
    version 3's tables from this code already has it (``fleet_ddl`` creates the current layout).
    """
    columns = {name for _, name, *_ in conn.execute(f"PRAGMA table_info({tables.instances})")}
    if "supervisor" not in columns:
        conn.execute(f"ALTER TABLE {tables.instances} ADD COLUMN supervisor TEXT")


def _timed_count(
    conn: sqlite3.Connection, tables: Tables, what: str, why: str, count: Callable[[sqlite3.Connection], object]
) -> None:
    """Run a migration's one-off count, logging when it starts and how long it took (seconds
    on a big file, inside the opening transaction: the operator should know why)."""
    started = time.monotonic()
    log.info("monque: counting the %s of %s once (%s) ...", what, tables.jobs, why)
    count(conn)
    log.info("monque: counted the %s of %s in %.1f s", what, tables.jobs, time.monotonic() - started)


def upgrade_pending_index(conn: sqlite3.Connection, tables: Tables) -> bool:
    """Rebuild the pending index of a file made before it covered its counts (``pending_index``).

    Not a schema version: the index keeps its name and every query works with either
    definition, so builds before and after it open each other's files (a version bump would
    have older builds refuse the file for an index). Rebuilding reads every pending job once
    (about 1.5 s for a million), on the first writable open only. True when it was rebuilt.
    """
    name = f"{tables.jobs}_pending"
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)).fetchone()
    (sql,) = row if row is not None else (None,)
    if sql is None or "next_run_at, status)" in sql:
        return False
    conn.execute(f"DROP INDEX {name}")
    conn.execute(pending_index(tables.jobs))
    return True


#: ``(version it produces, step)``, ascending and contiguous from 2. Version 1 is the
#: first released layout.
MIGRATIONS: tuple[tuple[int, Migration], ...] = (
    (2, to_v2_attempts),
    (3, _v3_fleet),
    (4, _v4_inbox),
    (5, _v5_change_seq),
    (6, _v6_error_counts),
    (7, _v7_time_limits),
    (8, _v8_running_jobs),
    (9, _v9_supervisor),
)


class ForeignDatabaseError(ConnectionError):
    """The file holds tables of another application: it is not adopted."""


class SchemaVersionError(ConnectionError):
    """The file's Monque schema is newer than this code (or older, on a read-only open)."""


def _user_tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'")
    return {str(name) for (name,) in rows}


def _meta_version(conn: sqlite3.Connection, meta_table: str) -> int | None:
    try:
        quoted = meta_table.replace('"', '""')
        row = conn.execute(f"SELECT value FROM \"{quoted}\" WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # not a key/value table: not ours
        return None
    if row is None:
        return None
    try:
        (value,) = row
        return int(value)
    except (TypeError, ValueError):
        return None


def inspect(conn: sqlite3.Connection, tables: Tables, where: str) -> int | None:
    """The collection's schema version, or None when the file may receive a new collection.

    Raises ``ForeignDatabaseError`` when the file is not a Monque database (or the
    collection's table name is taken by a table that is not Monque's). Reads only.
    """
    names = _user_tables(conn)
    if tables.meta in names:
        version = _meta_version(conn, tables.meta)
        if version is None or tables.jobs not in names:
            raise ForeignDatabaseError(
                f"{where} has a table {tables.meta} that is not Monque's (no schema_version, or no "
                f"{tables.jobs} table next to it); point the URL at another file or use another collection_name"
            )
        return version
    taken = sorted(name for name in (tables.jobs, tables.changes) if name in names)
    if taken:
        raise ForeignDatabaseError(
            f"{where} already has a table named {min(taken)} that Monque did not create (no {tables.meta} table); "
            "point the URL at another file or pick another collection_name"
        )
    ours = [name for name in names if name.endswith("_meta") and _meta_version(conn, name) is not None]
    if names and not ours:
        shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        raise ForeignDatabaseError(
            f"{where} is another application's SQLite database (tables: {shown}); Monque will not add its "
            "tables to it; point the URL at a new file or at a Monque database"
        )
    return None


def check_version(version: int, where: str, *, newest: int = SCHEMA_VERSION) -> None:
    """Refuse a file from a newer Monque: this code cannot know what its layout means."""
    if version > newest:
        raise SchemaVersionError(
            f"{where} has Monque schema version {version}, newer than the {newest} this monque_engine knows; "
            "upgrade monque_engine (pip install -U monque-tui) to open it"
        )


def _check_steps(steps: Sequence[tuple[int, Migration]], target: int) -> None:
    expected = list(range(2, target + 1))
    versions = [version for version, _ in steps]
    if versions != expected:
        raise RuntimeError(f"migration steps {versions} must be exactly {expected} (ascending, one per version)")


def migrate(
    conn: sqlite3.Connection,
    tables: Tables,
    current: int,
    *,
    steps: Sequence[tuple[int, Migration]] = MIGRATIONS,
    target: int = SCHEMA_VERSION,
) -> list[int]:
    """Apply every step after ``current`` up to ``target``, in order; return the versions applied.

    Runs inside the caller's transaction and records each version as it goes, so a
    failing step rolls back with everything before it: the file stays at ``current``.
    """
    _check_steps(steps, target)
    applied: list[int] = []
    for version, step in steps:
        if current < version <= target:
            step(conn, tables)
            conn.execute(f"UPDATE {tables.meta} SET value = ? WHERE key = 'schema_version'", (version,))
            applied.append(version)
    return applied


class Prepared(NamedTuple):
    store_id: str | None
    upgraded_from: int | None


def prepare(
    conn: sqlite3.Connection,
    tables: Tables,
    where: str,
    *,
    create_indexes: bool,
    retention_index: bool,
) -> Prepared:
    """Inside a write transaction: inspect, refuse, upgrade, then create what is missing;
    returns the collection's ``store_id`` (``read_store_id``), given one if it has none, and
    the version it was upgraded from (None: it was current, or new)."""
    version = inspect(conn, tables, where)
    upgraded_from = None
    if version is not None:
        check_version(version, where)
        if version < COUNTS_KEPT_SINCE:
            refuse_while_older_workers_run(conn, tables, version, where)
        if version < SCHEMA_VERSION:
            upgraded_from = version
        migrate(conn, tables, version)
        if create_indexes:
            upgrade_pending_index(conn, tables)
    if version is None or create_indexes:
        for statement in tables.ddl(retention_index):
            conn.execute(statement)
    # Not a schema change: a key older code never reads. Collections made before it get one
    # at their next writable open.
    conn.execute(f"INSERT OR IGNORE INTO {tables.meta}(key, value) VALUES ('store_id', lower(hex(randomblob(16))))")
    return Prepared(read_store_id(conn, tables), upgraded_from)


#: From this version on, every writer keeps the counts (5: per name and status; 6: per error
#: group): a worker of an older version still running after an upgrade leaves them wrong. A
#: writer of version 6 to 8 only misses later features (time limits, stop requests, the
#: supervisor column), so a rolling upgrade from those is not refused (a review).
COUNTS_KEPT_SINCE = 6
#: A claim's heartbeat interval when its row names none (upstream's default, 30 s).
_DEFAULT_BEAT_MS = 30_000


def refuse_while_older_workers_run(conn: sqlite3.Connection, tables: Tables, version: int, where: str) -> None:
    """Refuse to upgrade a file whose jobs other workers are running right now.

    Those workers opened the file at its old version, so they run an older monque_engine,
    and they check the version only when they open it: after the upgrade they went on
    claiming and completing jobs without keeping the counts, which then read wrong
    (completed 35,716 for 41,236) with nothing to say so (a migration probe). Only a worker
    holding jobs is seen here (its heartbeats in the last two of its intervals); an idle one
    is not, so the docs say to stop every older worker first.
    """
    now = int(time.time() * 1000)
    rows = conn.execute(
        f"SELECT claimed_by, MAX(last_heartbeat) FROM {tables.jobs} "
        "WHERE status = 'processing' AND claimed_by IS NOT NULL AND last_heartbeat IS NOT NULL "
        f"AND last_heartbeat + 2 * COALESCE(heartbeat_interval, {_DEFAULT_BEAT_MS}) >= ? "
        "GROUP BY claimed_by ORDER BY 2 DESC LIMIT 4",
        (now,),
    ).fetchall()
    if not rows:
        return
    owners = ", ".join(str(owner) for owner, _ in rows[:3]) + (", ..." if len(rows) > 3 else "")
    _, latest_beat = rows[0]
    ago = max(0, now - int(latest_beat)) // 1000
    raise SchemaVersionError(
        f"{where} is at schema version {version} and workers of that older version are running jobs on it "
        f"(owners {owners}; a heartbeat {ago} s ago): stop them before this version upgrades the file to "
        f"{SCHEMA_VERSION}, or they go on writing without keeping its counts (a worker that died counts as "
        "running for two heartbeat intervals)"
    )


def read_store_id(conn: sqlite3.Connection, tables: Tables) -> str | None:
    """The collection's random id, made once when a writable open first finds it missing:
    what a bulk count's position is bound to (``JobStore.position_scope``). A file recreated
    at the same path gets another, so a count taken on the old one bounds nothing here."""
    row = conn.execute(f"SELECT value FROM {tables.meta} WHERE key = 'store_id'").fetchone()
    if row is None:
        return None
    (value,) = row
    return str(value)


def check_readable(conn: sqlite3.Connection, tables: Tables, where: str) -> str | None:
    """For a read-only open: the collection must exist at exactly this code's version; its
    ``store_id`` (None until a writable open of this code gave it one)."""
    version = inspect(conn, tables, where)
    if version is None:
        raise SchemaVersionError(
            f"{where} has no Monque collection {tables.jobs!r} yet, and a read-only open never creates one; "
            "check the URL and collection_name, or open it read-write once (e.g. start a worker)"
        )
    check_version(version, where)
    if version < SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{where} has Monque schema version {version}, older than this code's {SCHEMA_VERSION}, and a "
            "read-only open cannot upgrade it; open it read-write once (e.g. start a worker) to upgrade"
        )
    return read_store_id(conn, tables)

"""Fleet and queue control: the instance registry, paused names, per-minute outcome
counters, and the owner records a dead owner's release compares. Their own tables, never
inside job rows (schema version 3).

Each function returns the operation the store runs on its write or read runner (a function
of a connection), so the store's methods are one line each and these read on their own.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...errorgroups import ERROR_COUNTER_PREFIX, error_counter_name
from . import statements
from .journal import Journal
from .readkind import Settled
from .reads import one_snapshot
from .schema import Tables

if TYPE_CHECKING:
    from ...fleet_records import InstanceRecord, OwnerHolding, OwnerRecords


def upsert_instance(t: Tables, record: InstanceRecord) -> Callable[[sqlite3.Connection], None]:
    sql = statements.upsert_instance(t)
    params = (
        record.id,
        record.host,
        record.pid,
        record.version,
        record.started_at_ms,
        record.heartbeat_interval_ms,
        json.dumps(record.workers, sort_keys=True),
        record.running,
        record.processed,
        record.failed,
        record.last_heartbeat_ms,
        record.supervisor,
    )
    return lambda conn: _run(conn, sql, params)


def remove_instance(t: Tables, instance_id: str) -> Callable[[sqlite3.Connection], None]:
    sql = statements.remove_instance(t)
    return lambda conn: _run(conn, sql, (instance_id,))


def list_instances(t: Tables) -> Settled[list[InstanceRecord]]:
    sql = statements.instances(t)
    return Settled(lambda conn: [_instance(row) for row in conn.execute(sql)])


def purge_instances(t: Tables, heartbeat_before_ms: int) -> Callable[[sqlite3.Connection], int]:
    sql = statements.purge_instances(t)
    return lambda conn: int(conn.execute(sql, (heartbeat_before_ms,)).rowcount)


def owner_holdings(t: Tables) -> Settled[list[OwnerHolding]]:
    """Processing jobs only: never an inbox row."""
    from ...fleet_records import OwnerHolding  # here, as below: no launch reads the fleet (issue 40)

    sql = statements.owner_holdings(t)
    return Settled(
        lambda conn: [
            OwnerHolding(owner if owner is not None else "", jobs, liveness, heartbeat_interval, longest, since)
            for owner, jobs, liveness, heartbeat_interval, longest, since in conn.execute(sql)
        ]
    )


def owner_records(t: Tables, owner: str) -> Settled[OwnerRecords]:
    """One owner's processing jobs and registry record, read together (served by the partial
    processing index (claimed_by, locked_at) and the registry's key)."""
    jobs_sql, record_sql = statements.owner_jobs(t), statements.instance(t)

    def op(conn: sqlite3.Connection) -> OwnerRecords:
        from ...fleet_records import OwnerJobStamp, OwnerRecords

        jobs = tuple(OwnerJobStamp(*row) for row in conn.execute(jobs_sql, (owner,)))
        row = conn.execute(record_sql, (owner,)).fetchone()
        return OwnerRecords(owner, None if row is None else _instance(row), jobs)

    return Settled(op)


def release_unmoved_owner(
    t: Tables, journal: Journal, owner: str, expected: OwnerRecords, now_ms: int
) -> Callable[[sqlite3.Connection], int | None]:
    """Release a dead owner's jobs unless its records moved since ``expected`` was read.

    Look and write in one write transaction (BEGIN IMMEDIATE): no beat can commit between
    the comparison and the UPDATE, so a beat that committed first keeps every job."""
    read = owner_records(t, owner).op
    sql = statements.release_owner(t)

    def op(conn: sqlite3.Connection) -> int | None:
        current = read(conn)
        if current.moved_since(expected):
            return None
        if not current.jobs:
            return 0
        return journal.updated_rows(conn, conn.execute(sql, (now_ms, owner)).fetchall(), "processing")

    return op


def set_paused(t: Tables, name: str, paused: bool, now_ms: int) -> Callable[[sqlite3.Connection], bool]:
    """Pause (or resume) a name; whether that changed anything."""
    params: tuple[Any, ...]
    if paused:
        sql, params = statements.pause(t), (name, now_ms)
    else:
        sql, params = statements.unpause(t), (name,)
    return lambda conn: conn.execute(sql, params).rowcount > 0


def paused_names(t: Tables) -> Settled[dict[str, int]]:
    sql = statements.paused_names(t)
    return Settled(lambda conn: dict(conn.execute(sql).fetchall()))


def add_outcome_counts(
    t: Tables, counts: dict[tuple[str, int], tuple[int, int]]
) -> Callable[[sqlite3.Connection], None]:
    sql = statements.add_outcomes(t)
    rows = [(name, minute, done, failed) for (name, minute), (done, failed) in counts.items()]
    return lambda conn: _run_many(conn, sql, rows)


def outcome_counts(t: Tables, since_minute: int, name: str | None) -> Settled[list[tuple[str, int, int, int]]]:
    sql = statements.outcomes(t, by_name=name is not None)
    params: tuple[Any, ...] = (since_minute,) if name is None else (since_minute, name)
    return Settled(lambda conn: conn.execute(sql, params).fetchall())


def error_attempt_counts(
    t: Tables, keys: Sequence[str], since_minute: int
) -> Settled[tuple[dict[str, int], list[tuple[str, int, int]]]]:
    """``ports.Fleet.error_attempt_counts``: two seeks per key, in one snapshot."""
    names = [error_counter_name(key) for key in keys]
    first_sql = statements.error_attempts_first(t)
    since_sql = statements.error_attempts_since(t, len(names))

    def op(conn: sqlite3.Connection) -> tuple[dict[str, int], list[tuple[str, int, int]]]:
        if not names:
            return {}, []
        with one_snapshot(conn):
            first = conn.execute(first_sql, (json.dumps(names),)).fetchall()
            rows = conn.execute(since_sql, (*names, since_minute)).fetchall()
        skip = len(ERROR_COUNTER_PREFIX)
        return (
            {name[skip:]: int(minute) for name, minute in first if minute is not None},
            [(name[skip:], int(minute), int(failed)) for name, minute, failed in rows],
        )

    return Settled(op)


def purge_outcome_counts(t: Tables, before_minute: int) -> Callable[[sqlite3.Connection], int]:
    sql = statements.purge_outcomes(t)
    return lambda conn: int(conn.execute(sql, (before_minute,)).rowcount)


def _run(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> None:
    conn.execute(sql, params)


def _run_many(conn: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> None:
    conn.executemany(sql, rows)


def _instance(row: tuple[Any, ...]) -> InstanceRecord:
    """An instance row, in ``statements._INSTANCE_COLUMNS`` order."""
    from ...fleet_records import InstanceRecord

    (
        id_,
        host,
        pid,
        version,
        started_at,
        heartbeat_interval,
        workers,
        running,
        processed,
        failed,
        last_heartbeat,
        supervisor,
    ) = row
    return InstanceRecord(
        id_,
        host,
        pid,
        version,
        started_at,
        heartbeat_interval,
        _workers(workers),
        running,
        processed,
        failed,
        last_heartbeat,
        supervisor if isinstance(supervisor, str) and supervisor else None,
    )


def _workers(text: str) -> dict[str, int]:
    """The registry's ``workers`` column (JSON of name -> concurrency); lenient on bad text."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int)}

"""Management writes: single jobs guarded by their status, and bulk actions in bounded
transactions (ADR 0017). Retention's purge, which writes in the same chunks, is in
``retention.py``.

A bulk action writes BULK_CHUNK jobs per write transaction with a pause between chunks, so
other processes' completions and heartbeats wait for one chunk at most, never for the whole
action (a retry of 95k jobs held the lock 12.8 s). The candidates are read on a reader
connection first, with their commit-order position (ADR 0015); each chunk re-checks the
selector and that position, so across chunks an action still reaches no job its count (or
its own read) did not see.

The async parts take the store's ``write`` and ``read`` (looked up per call, so a test that
wraps the store's own ``_write`` sees every chunk); the rest returns operations to run.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from ...errors import UniqueKeyConflictError
from ...job import Job, JobStatus
from ..base import StoreSelector
from . import jobrow as col
from . import scan, statements
from .journal import Changes, Journal, membership
from .queries import row_to_job, selector_where
from .readkind import Reads, Settled
from .reads import one_snapshot
from .runner import Operation
from .schema import Tables

T = TypeVar("T")

#: Jobs per write transaction of a bulk action or a retention purge (about 50-100 ms of
#: B-tree work here): what another process's completion or heartbeat waits for at most.
BULK_CHUNK = 1000
#: The pause between two chunks: as long as the last chunk took, within these bounds, so the
#: other processes' writers (whose busy handlers sleep between tries) get the lock in between.
BULK_PAUSE_MIN = 0.005
BULK_PAUSE_MAX = 0.1

#: One chunk's write: ``(conn, where, params) -> jobs written``.
ChunkWrite = Callable[[sqlite3.Connection, str, Sequence[Any]], int]


class Writes(Protocol):
    def __call__(self, op: Operation[T], inline: bool = ..., coalesce: bool = ...) -> Awaitable[T]: ...


# -- single jobs ------------------------------------------------------------------------------


def guarded_single(
    t: Tables, journal: Journal, assignments: str, params: tuple[Any, ...], job_id: str, statuses: tuple[str, ...]
) -> Callable[..., Job | None]:
    """``assignments`` on one job while its status is one of ``statuses``, journaled."""
    sql = statements.guarded_single(t, assignments, len(statuses))
    full = (*params, job_id, *statuses)

    def op(conn: sqlite3.Connection, before: tuple[Any, ...] | None = None) -> Job | None:
        """``before``: the job's ``(status, fail_count, error_group, error_type)`` as the caller
        read them in this transaction, when ``statuses`` allow several or ``assignments`` clear
        the error fields (``RETURNING`` gives the values after); else its status was
        ``statuses[0]`` and the rest are the row's."""
        row = conn.execute(sql, full).fetchone()
        if row is None:
            return None
        changes = Changes()
        row_id, name, status, next_run_at = row[col.ID], row[col.NAME], row[col.STATUS], row[col.NEXT_RUN_AT]
        if before is None:
            changes.add("update", row_id, name, status, next_run_at, statuses[0])
            changes.member_row(row, statuses[0])
        else:
            was, fail_count, group, error_type = before
            changes.add("update", row_id, name, status, next_run_at, was)
            now_group = row[col.ERROR_GROUP]
            if group is not None or now_group is not None:
                changes.member(group, name, error_type, membership(was, fail_count, group), None)
                changes.member(
                    now_group, name, row[col.ERROR_TYPE], None, membership(status, row[col.FAIL_COUNT], now_group)
                )
        journal.write(conn, changes)
        return row_to_job(row)

    return op


def retry_one(
    t: Tables, journal: Journal, job_id: str, now_ms: int
) -> Callable[[sqlite3.Connection], tuple[Job, JobStatus] | None]:
    """Retry a failed or cancelled job, unless a live job holds its unique key (raises)."""
    before_sql, holder_sql = statements.retry_before(t), statements.live_key_holder(t)
    update = guarded_single(t, journal, statements.RETRY, (now_ms, now_ms), job_id, statements.RETRY_GUARD)

    def op(conn: sqlite3.Connection) -> tuple[Job, JobStatus] | None:
        before = conn.execute(before_sql, (job_id,)).fetchone()
        if before is None:
            return None
        status, name, unique_key, fail_count, group, error_type = before
        if unique_key is not None:
            holder = conn.execute(holder_sql, (name, unique_key)).fetchone()
            if holder is not None:
                (holder_id,) = holder
                raise UniqueKeyConflictError(job_id, name, unique_key, holder_id)
        job = update(conn, (status, fail_count, group, error_type))
        return (job, JobStatus(status)) if job is not None else None

    return op


# -- bulk actions in bounded transactions ---------------------------------------------------------


def bulk_update(
    conn: sqlite3.Connection,
    t: Tables,
    journal: Journal,
    assignments: str,
    params: Sequence[Any],
    where: str,
    where_params: Sequence[Any],
    exclude: Callable[[sqlite3.Connection], int] | None = None,
) -> int:
    """Update every matching job and journal exactly those rows, without pulling ids into Python.

    The ids go through a temp table so a million-row retry costs memory in SQLite's temp
    store, not in this process. ``exclude`` may take ids out of that table first (it returns
    how many it removed).
    """
    affected = statements.affected_table(t)
    conn.execute(statements.create_affected(t))
    conn.execute(f"DELETE FROM {affected}")
    count = conn.execute(statements.collect_affected(t, where), where_params).rowcount
    if count and exclude is not None:
        count -= exclude(conn)
    if count:
        journal.update_where(conn, assignments, params, f"id IN (SELECT id FROM {affected})")
        conn.execute(f"DELETE FROM {affected}")
    return int(count)


def unique_key_clashes(conn: sqlite3.Connection, t: Tables, errors: list[dict[str, str]]) -> int:
    """Take out of a bulk retry's collected ids every job whose unique key another live job
    would hold.

    The holder is a pending or processing job of the same name and key, or, when several
    selected jobs share a key and none is live, the first of them by id (it is retried;
    the rest would be its duplicates). Each one taken out is listed in ``errors``.
    """
    candidates = conn.execute(statements.clash_candidates(t)).fetchall()
    if not candidates:
        return 0
    live_sql = statements.live_key_holder(t)
    holders: dict[tuple[str, str], str] = {}
    clashing: list[tuple[str, str, str, str]] = []
    for job_id, name, key in candidates:
        holder = holders.get((name, key))
        if holder is None:
            row = conn.execute(live_sql, (name, key)).fetchone()
            if row is None:
                holders[(name, key)] = job_id  # nobody holds it: this one is retried
                continue
            (holder,) = row
            holders[(name, key)] = holder
        clashing.append((job_id, name, key, holder))
    for job_id, name, key, holder in clashing:
        errors.append({"jobId": job_id, "error": str(UniqueKeyConflictError(job_id, name, key, holder))})
    conn.executemany(
        f"DELETE FROM {statements.affected_table(t)} WHERE id = ?", [(job_id,) for job_id, _, _, _ in clashing]
    )
    return len(clashing)


def cancel_chunk(t: Tables, journal: Journal, now_ms: int) -> ChunkWrite:
    return lambda conn, where, params: bulk_update(conn, t, journal, statements.CANCEL, (now_ms,), where, params)


def retry_chunk(t: Tables, journal: Journal, now_ms: int, spread_ms: int, errors: list[dict[str, str]]) -> ChunkWrite:
    """A chunk of a bulk retry, spread over ``spread_ms``; unique-key clashes go to ``errors``."""
    values = (now_ms, max(1, spread_ms), now_ms)

    def chunk(conn: sqlite3.Connection, where: str, params: Sequence[Any]) -> int:
        # A clash listed by a chunk that rolled back would be listed again when it re-runs.
        found: list[dict[str, str]] = []
        count = bulk_update(
            conn, t, journal, statements.RETRY_MANY, values, where, params, lambda c: unique_key_clashes(c, t, found)
        )
        errors.extend(found)
        return count

    return chunk


def delete_chunk(journal: Journal) -> ChunkWrite:
    return journal.delete_where  # same rows as selected: the caller holds the write lock


async def bulk_targets(write: Writes, read: Reads, t: Tables, selector: StoreSelector) -> tuple[list[str], int]:
    """The ids a bulk action may reach (sorted) and the store's position, in one snapshot.

    Read on a reader connection, so choosing 100k jobs (an index walk, or a scan for a
    text filter) never holds the write lock; the writes then go a chunk at a time. A write
    absorbs the inbox first, so a plain bulk call still reaches jobs a streak left there.
    """
    if selector.as_of is None:
        await write(_nothing)  # the absorb every write transaction begins with
    if scan.walks_a_status_index(selector):
        # A text selector with a guard's statuses: in steps over the key (scan.py), not one
        # statement down the finished index (16.8 s for a retry's candidates at 10M jobs).
        return await scan.selected_ids(read, t, selector, scan.DEFAULT_STEP_JOBS)
    where, params = selector_where(selector)
    ids_sql = statements.selected_ids(t, where)

    def op(conn: sqlite3.Connection) -> tuple[list[str], int]:
        with one_snapshot(conn):
            ids = [job_id for (job_id,) in conn.execute(ids_sql, params)]
            (position,) = conn.execute(t.bulk_bound).fetchone()
        return ids, int(position)

    # The job table alone: the inbox was just absorbed (above), or its rows are outside the bound.
    return await read(Settled(op))


async def in_chunks(write: Writes, read: Reads, t: Tables, selector: StoreSelector, chunk_write: ChunkWrite) -> int:
    """Run ``chunk_write(conn, where, params)`` over the selector's jobs, BULK_CHUNK at a
    time, each chunk its own write transaction, with a pause between chunks as long as the
    last one took (5-100 ms).

    Each chunk re-checks the selector and the position the ids were read at
    (``change_seq <= position``): a job that changed since is left alone.
    """
    ids, position = await bulk_targets(write, read, t, selector)
    where, params = selector_where(selector)
    chunk_where = statements.chunk_where(where)
    loop = asyncio.get_running_loop()
    total = 0
    for start in range(0, len(ids), BULK_CHUNK):
        chunk = json.dumps(ids[start : start + BULK_CHUNK])
        began = loop.time()
        total += await write(_chunk_op(chunk_write, chunk_where, (chunk, *params, position)))
        if start + BULK_CHUNK < len(ids):
            await asyncio.sleep(min(max(loop.time() - began, BULK_PAUSE_MIN), BULK_PAUSE_MAX))
    return total


def _nothing(conn: sqlite3.Connection) -> None:
    return None


def _chunk_op(write: ChunkWrite, where: str, params: Sequence[Any]) -> Callable[[sqlite3.Connection], int]:
    """One chunk of a bulk action as a write operation."""
    return lambda conn: write(conn, where, params)

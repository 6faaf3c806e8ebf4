"""The raw SQLite ceiling: a plain stdlib ``sqlite3`` loop, no queue library at all.

The table is a minimal jobs table (integer key, name, JSON payload, status, run time, lock
owner/time, updated time) with one partial index on due pending jobs, like a queue needs.
No change feed, no triggers, no Python objects per job: this is what one connection on
this machine can do, and therefore a ceiling for any queue on SQLite.

Measured, each on a fresh file:
  * claim+complete, one job per transaction: ``BEGIN IMMEDIATE``; claim one job with
    ``UPDATE … RETURNING``; mark it completed (guarded by owner and status); ``COMMIT``.
  * claim+complete, 50 jobs per transaction: the same with ``LIMIT 50`` and an
    ``executemany`` of 50 guarded completes in the same transaction.
  * insert, one job per transaction (the ceiling for a single enqueue call).
  * insert, 1000 jobs per transaction with ``executemany`` (the ceiling for enqueue_many).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

from .common import Record, durability_label, fresh_dir

DDL = [
    """CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        status TEXT NOT NULL,
        next_run_at INTEGER NOT NULL,
        locked_at INTEGER,
        claimed_by TEXT,
        updated_at INTEGER NOT NULL
    )""",
    "CREATE INDEX jobs_pending ON jobs(name, next_run_at, status) WHERE status = 'pending'",
]

CLAIM = """UPDATE jobs SET status = 'processing', locked_at = ?1, claimed_by = ?2, updated_at = ?1
    WHERE id IN (SELECT id FROM jobs WHERE name = ?3 AND status = 'pending' AND next_run_at <= ?1
                 ORDER BY next_run_at LIMIT ?4)
    RETURNING id, data"""
COMPLETE = """UPDATE jobs SET status = 'completed', locked_at = NULL, updated_at = ?1
    WHERE id = ?2 AND claimed_by = ?3 AND status = 'processing'"""
INSERT = "INSERT INTO jobs(name, data, status, next_run_at, updated_at) VALUES (?, ?, 'pending', ?, ?)"


def _connect(path: str, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
    return conn


def _fresh(directory: str, tag: str, synchronous: str) -> sqlite3.Connection:
    conn = _connect(os.path.join(directory, f"raw-{tag}.db"), synchronous)
    for stmt in DDL:
        conn.execute(stmt)
    return conn


def _now_ms() -> int:
    return int(time.time() * 1000)


def _fill(conn: sqlite3.Connection, n: int) -> None:
    now = _now_ms() - 1000
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(INSERT, (("noop", json.dumps({"i": i}), now, now) for i in range(n)))
    conn.execute("COMMIT")


def claim_complete(conn: sqlite3.Connection, n: int, batch: int) -> float:
    """Drain ``n`` pending jobs, ``batch`` claims+completes per transaction; returns jobs/s."""
    owner = "raw-bench"
    done = 0
    started = time.perf_counter()
    while done < n:
        conn.execute("BEGIN IMMEDIATE")
        now = _now_ms()
        rows = conn.execute(CLAIM, (now, owner, "noop", batch)).fetchall()
        for _id, data in rows:
            json.loads(data)  # a queue has to decode the payload to run the job
        if batch == 1:
            if rows:
                conn.execute(COMPLETE, (now, rows[0][0], owner))
        else:
            conn.executemany(COMPLETE, ((now, row[0], owner) for row in rows))
        conn.execute("COMMIT")
        if not rows:
            raise RuntimeError(f"raw claim found no pending job after {done} of {n}")
        done += len(rows)
    elapsed = time.perf_counter() - started
    left = conn.execute("SELECT count(*) FROM jobs WHERE status != 'completed'").fetchone()[0]
    if left:
        raise RuntimeError(f"raw drain left {left} jobs not completed")
    return n / elapsed


def insert(conn: sqlite3.Connection, n: int, batch: int) -> float:
    started = time.perf_counter()
    done = 0
    while done < n:
        size = min(batch, n - done)
        now = _now_ms()
        conn.execute("BEGIN IMMEDIATE")
        if batch == 1:
            conn.execute(INSERT, ("noop", json.dumps({"i": done}), now, now))
        else:
            conn.executemany(INSERT, (("noop", json.dumps({"i": done + k}), now, now) for k in range(size)))
        conn.execute("COMMIT")
        done += size
    return n / (time.perf_counter() - started)


def run(synchronous: str, jobs: int, single_jobs: int) -> list[Record]:
    dur = durability_label(synchronous)
    records: list[Record] = []
    with fresh_dir(f"raw-{synchronous}") as d:
        for batch in (1, 50):
            conn = _fresh(d, f"claim{batch}", synchronous)
            _fill(conn, jobs)
            rate = claim_complete(conn, jobs, batch)
            conn.close()
            records.append(
                Record(
                    key=f"raw.claim{batch}.{synchronous}",
                    subject="raw sqlite3",
                    measure=f"claim+complete, {batch} job{'s' if batch > 1 else ''}/transaction",
                    durability=dur,
                    value=rate,
                    unit="jobs/s",
                    settings=f"{jobs} jobs",
                )
            )
        conn = _fresh(d, "insert1", synchronous)
        rate = insert(conn, single_jobs, 1)
        conn.close()
        records.append(
            Record(
                key=f"raw.insert1.{synchronous}",
                subject="raw sqlite3",
                measure="insert, 1 job/transaction",
                durability=dur,
                value=rate,
                unit="jobs/s",
                settings=f"{single_jobs} jobs",
            )
        )
        conn = _fresh(d, "insert1000", synchronous)
        rate = insert(conn, jobs, 1000)
        conn.close()
        records.append(
            Record(
                key=f"raw.insert1000.{synchronous}",
                subject="raw sqlite3",
                measure="insert, 1000 jobs/transaction",
                durability=dur,
                value=rate,
                unit="jobs/s",
                settings=f"{jobs} jobs",
            )
        )
    return records

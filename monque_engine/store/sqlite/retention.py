"""The Retention port on SQLite: deleting finished jobs past their age, one process at a
time per file (a lease in the meta table), a name at a time, in bounded transactions.

Each chunk is a seek on the finished index (name, status, updated_at) and its own write
transaction, ``BULK_CHUNK`` rows at most with a pause between, as the bulk actions in
``management.py`` write theirs (ADR 0017). The SQL text is in ``statements.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import sqlite3

from ...errors import ConnectionError
from ...job import JobStatus
from ...timeutil import now_ms as clock_ms
from . import statements
from .journal import Journal
from .management import BULK_CHUNK, BULK_PAUSE_MAX, BULK_PAUSE_MIN, Writes
from .readkind import Reads, Settled
from .schema import Tables

#: How long a retention lease outlives its last chunk: a purger that died frees it after this.
RETENTION_LEASE_MS = 60_000


class RetentionLease:
    """The lease that lets one process at a time purge a file (a row in the meta table)."""

    def __init__(self) -> None:
        #: Who holds it: one store object, in one process.
        self.token = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(6).hex()}"  # uuid4().hex[:12] was the same, with ``uuid`` imported

    def take(self, conn: sqlite3.Connection, t: Tables, now: int) -> bool:
        """Take (or renew) the lease; False while another process holds a live one."""
        row = conn.execute(statements.lease_read(t)).fetchone()
        (value,) = row if row is not None else (None,)
        if isinstance(value, str) and ":" in value:
            holder, _, expires = value.rpartition(":")
            if holder != self.token and expires.isdigit() and int(expires) > now:
                return False
        conn.execute(statements.lease_write(t), (f"{self.token}:{now + RETENTION_LEASE_MS}",))
        return True

    def end(self, conn: sqlite3.Connection, t: Tables) -> None:
        escaped = self.token.replace("!", "!!").replace("%", "!%").replace("_", "!_")
        conn.execute(statements.lease_end(t), (escaped + ":%",))


async def purge_finished(
    write: Writes,
    read: Reads,
    t: Tables,
    journal: Journal,
    lease: RetentionLease,
    status: JobStatus,
    updated_before_ms: int,
) -> int:
    """Delete ``status`` jobs last updated before the cutoff: one process at a time per file
    (the lease), a name at a time, BULK_CHUNK rows per transaction with a pause between, each
    chunk a seek on the finished index (name, status, updated_at).

    Another process holding a live lease means it is purging now: this round does nothing
    (returns 0) instead of deleting the same rows beside it. The lease lasts
    RETENTION_LEASE_MS from each chunk, so a purger that died frees it soon.
    """
    if not await write(lambda conn: lease.take(conn, t, clock_ms())):
        return 0
    loop = asyncio.get_running_loop()
    total = 0
    try:
        names_sql = statements.retention_names(t)
        names = await read(Settled(lambda conn: [name for (name,) in conn.execute(names_sql, (status.value,))]))
        picked = statements.retention_chunk(t, BULK_CHUNK)

        def chunk(conn: sqlite3.Connection, name: str) -> int:
            lease.take(conn, t, clock_ms())
            return journal.delete_where(conn, picked, (name, status.value, updated_before_ms))

        for name in names:
            while True:
                began = loop.time()
                removed: int = await write(functools.partial(chunk, name=name))
                total += removed
                if removed < BULK_CHUNK:
                    break
                await asyncio.sleep(min(max(loop.time() - began, BULK_PAUSE_MIN), BULK_PAUSE_MAX))
    finally:
        with contextlib.suppress(ConnectionError):
            await write(lambda conn: lease.end(conn, t))
    return total

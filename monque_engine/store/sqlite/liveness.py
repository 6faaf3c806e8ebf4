"""The Liveness port on SQLite: an owner's heartbeat on the jobs it runs, stale recovery
(ADR 0004), and the check that no live instance already works under an owner's name.

A job is stale when its heartbeat (``locked_at`` where it has none) is older than the lock
timeout; recovery gives it back to pending with a ``stale`` attempt record built in SQL
(``statements.stale_attempt``). Hand-edited claim instants that recovery cannot compare
are repaired first (issue 34). The SQL text is in ``statements.py``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from . import statements
from .journal import Journal
from .readkind import Settled
from .runner import Operation
from .schema import Tables
from .unreadable import log


def heartbeat(t: Tables, owner: str, now_ms: int, job_ids: Sequence[str] | None) -> Operation[int]:
    """``owner``'s beat on its processing jobs (on ``job_ids`` only, when given)."""
    sql = statements.heartbeat(t, some=job_ids is not None)
    params: tuple[Any, ...] = (now_ms, now_ms, owner)
    if job_ids is not None:
        params = (*params, json.dumps(list(job_ids)))  # one JSON parameter, however many jobs run
    return lambda conn: int(conn.execute(sql, params).rowcount)


def recovered(t: Tables, journal: Journal, stale_before_ms: int, now_ms: int) -> Operation[int]:
    """Give back every job whose owner stopped beating before the cutoff. Liveness is the
    heartbeat (lockedAt only where a job has none, e.g. a foreign writer's claim): a long
    job whose owner keeps heartbeating is never taken (ADR 0004)."""
    record, record_params = statements.stale_attempt(now_ms)
    sql = statements.recover_stale(t, record)
    params = (now_ms, *record_params, stale_before_ms)
    find_bad, repair = statements.malformed_claims(t), statements.repair_claims(t)

    def op(conn: sqlite3.Connection) -> int:
        bad = conn.execute(find_bad).fetchall()
        if bad:  # hand-edited instants: repaired first, so this round compares them (issue 34)
            conn.execute(repair, (now_ms, now_ms, json.dumps([job_id for job_id, _beat, _locked in bad])))
            for job_id, beat, locked in bad:
                log.warning(
                    "processing job %s had last_heartbeat=%.40r, locked_at=%.40r (a hand edit?), which stale "
                    "recovery cannot use: the bad instant is set to now",
                    job_id,
                    beat,
                    locked,
                )
        return journal.updated_rows(conn, conn.execute(sql, params).fetchall(), "processing")

    return op


def has_live_claim(t: Tables, owner: str, heartbeat_after_ms: int) -> Settled[bool]:
    """Processing jobs only: never an inbox row."""
    sql = statements.has_live_claim(t)
    return Settled(lambda conn: conn.execute(sql, (owner, heartbeat_after_ms)).fetchone() is not None)

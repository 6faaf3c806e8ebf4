"""Review of the SQLite inbox (inbox.py): faults found after ed04f93, one test each.

Real files and real subprocesses, as in test_sqlite_inbox.py.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from monque_engine import Monque
from monque_engine.errors import MonqueError
from monque_engine.store.sqlite.inbox import ABSORB_EVERY, STREAK


async def test_an_enqueue_whose_job_was_appended_does_not_fail_when_the_absorb_after_it_does(
    tmp_path: Path,
) -> None:
    """Every ABSORB_EVERY appends the enqueue that made the last one absorbs, after its own
    append has committed. When that absorb fails (SQLITE_FULL: the absorb writes six B-trees
    where the append wrote one; here a trigger stands in for the full disk), the enqueue
    raised although its job is queued: a caller that retries enqueues it twice."""
    db = tmp_path / "jobs.db"
    m = Monque(f"sqlite:///{db}", recover_stale_jobs=False)
    await m.initialize()
    try:
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute(
            "CREATE TRIGGER review_absorb_fails BEFORE INSERT ON monque_jobs WHEN NEW.name = 'doomed' "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
        for i in range(STREAK):
            await m.enqueue("plain", {"i": i})
        returned, raised = 0, 0
        for i in range(ABSORB_EVERY + 5):
            try:
                await m.enqueue("doomed", {"i": i})
            except (ConnectionError, MonqueError):
                raised += 1
            else:
                returned += 1
        conn.execute("DROP TRIGGER review_absorb_fails")
        conn.close()
        stored = (await m.store.stats("doomed")).pending
        assert stored == returned, f"{raised} enqueue(s) raised, but {stored - returned} of them queued a job"
    finally:
        await m.close()

"""Text that is not UTF-8 in rows another program wrote into the SQLite file fails no read
(found by the acceptance probe).

One such row made sqlite3 refuse the whole result, so every listing, count and export of
the store failed with ``ConnectionError: Could not decode to UTF-8``. The MongoDB store
already decodes such bytes with U+FFFD; the SQLite store now does the same for reads.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from monque_engine import Monque


async def test_invalid_utf8_in_one_row_does_not_fail_every_read(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}") as monque:
        bad_data = await monque.enqueue("report", {"a": "x"})
        bad_name = await monque.enqueue("report", {"b": 1})
        good = await monque.enqueue("email", {"c": 2})
    raw = sqlite3.connect(path)
    raw.execute("UPDATE monque_jobs SET data = CAST(X'7B2261223A22FF227D' AS TEXT) WHERE id = ?", (bad_data.id,))
    raw.execute("UPDATE monque_jobs SET name = CAST(X'7265FF706F7274' AS TEXT) WHERE id = ?", (bad_name.id,))
    raw.commit()
    raw.close()
    async with Monque(f"sqlite:///{path}") as monque:
        # A hand edit bypasses the kept counts (journal.py); repair-counts is the way back.
        assert await monque.repair_counts() == [("report", "pending", 2, 1), ("re\ufffdport", "pending", 0, 1)]
        listed = {job.id: job for job in await monque.get_jobs()}
        assert set(listed) == {bad_data.id, bad_name.id, good.id}
        assert listed[bad_data.id].data == {"a": "\ufffd"}
        assert listed[bad_name.id].name == "re\ufffdport"
        assert listed[good.id].data == {"c": 2}
        page = await monque.get_jobs_with_cursor(limit=10)
        assert len(page.jobs) == 3
        assert (await monque.get_queue_stats()).total == 3
        assert {s.name for s in await monque.get_queue_view_summaries()} == {"report", "re\ufffdport", "email"}
        fetched = await monque.get_job(bad_data.id)
        assert fetched is not None and fetched.data == {"a": "\ufffd"}

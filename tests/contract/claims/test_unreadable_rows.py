"""A stored job that cannot be read (probe finding): it never blocks its queue or a listing.

One SQLite row whose ``data`` was not JSON made every claim of its name fail (``job:error``
twice a second, the name's other jobs never ran) and every listing raise. Both stores now
agree: a claimed unreadable job is marked failed with the reason (so it is never claimed
again) and the rest of the claim runs; listings skip it with one warning per id; counts
still count it; reading it by id raises InvalidJobDocumentError.

SQLite rows are damaged with plain ``sqlite3`` on the real file; on MongoDB (when a
server is configured) a document's ``createdAt`` is made a string. The MongoDB store's
own unit tests with the in-memory evaluator fake are in ``test_mongo_robustness.py``.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

import pytest

from monque_engine import Monque
from monque_engine.errors import InvalidJobDocumentError, MonqueError


async def _damage(m: Monque, raw: Any, job_id: str) -> str:
    """Make one stored job unreadable, as a hand edit would; returns the field named in the reason."""
    store: Any = m.store
    if store.kind == "sqlite":
        conn = sqlite3.connect(store.settings.path)
        try:
            conn.execute(f"UPDATE {m.options.collection_name} SET data = 'not json{{' WHERE id = ?", (job_id,))
            conn.commit()
        finally:
            conn.close()
        return "data"
    await raw(m).set(job_id, createdAt="yesterday-ish")
    return "createdAt"


async def _stored_status_and_reason(m: Monque, job_id: str) -> tuple[str, str | None]:
    """Read the damaged job's status and failReason around the store's readers."""
    store: Any = m.store
    if store.kind == "sqlite":
        conn = sqlite3.connect(store.settings.path)
        try:
            row = conn.execute(
                f"SELECT status, fail_reason FROM {m.options.collection_name} WHERE id = ?", (job_id,)
            ).fetchone()
        finally:
            conn.close()
        return row[0], row[1]
    from bson import ObjectId
    from pymongo import AsyncMongoClient

    client: Any = AsyncMongoClient(m._url)
    try:
        doc = await client.get_default_database()[m.options.collection_name].find_one({"_id": ObjectId(job_id)})
    finally:
        await client.close()
    return doc["status"], doc.get("failReason")


async def test_queue_keeps_draining_with_one_unreadable_job(monque, raw, recorder, wait_until) -> None:
    m = await monque()
    jobs = await m.enqueue_many([{"name": "report", "data": {"n": i}} for i in range(20)])
    bad = jobs[7]
    field = await _damage(m, raw, bad.id)
    rec = recorder(m)
    ran: list[str] = []
    m.register("report", lambda job: ran.append(job.id), concurrency=3)
    await m.start()
    await rec.wait_for("job:complete", count=19)
    assert sorted(ran) == sorted(j.id for j in jobs if j.id != bad.id)

    async def bad_failed() -> bool:
        return (await _stored_status_and_reason(m, bad.id))[0] == "failed"

    await wait_until(bad_failed, message="the unreadable job is marked failed")
    _, reason = await _stored_status_and_reason(m, bad.id)
    assert reason is not None and bad.id in reason and field in reason and "fix or delete it" in reason
    assert rec.of("job:error") == []  # no claim failed
    assert bad.id not in ran


async def test_listings_skip_an_unreadable_job_with_one_warning(monque, raw, caplog) -> None:
    m = await monque()
    jobs = await m.enqueue_many([{"name": "report", "data": {"n": i}} for i in range(5)])
    bad = jobs[2]
    await _damage(m, raw, bad.id)
    good = {j.id for j in jobs} - {bad.id}
    with caplog.at_level(logging.WARNING, logger="monque_engine"):
        assert {j.id for j in await m.get_jobs()} == good
        assert {j.id for j in await m.get_jobs(name="report")} == good
        page = await m.get_jobs_with_cursor(limit=10)
        assert {j.id for j in page.jobs} == good
    mentioning = [r for r in caplog.records if r.levelno == logging.WARNING and bad.id in r.getMessage()]
    assert len(mentioning) == 1  # one per unreadable job, however often it is listed
    assert (await m.get_queue_stats()).total == 5  # counts stay counts


async def test_reading_an_unreadable_job_by_id_raises_a_clear_error(monque, raw) -> None:
    m = await monque()
    job = await m.enqueue("report", {"n": 1})
    field = await _damage(m, raw, job.id)
    with pytest.raises(InvalidJobDocumentError) as info:
        await m.get_job(job.id)
    message = str(info.value)
    assert isinstance(info.value, MonqueError) and "\n" not in message
    assert job.id in message and field in message and "fix or delete it" in message

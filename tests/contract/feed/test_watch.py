"""watch(): committed changes in order with job documents; exact resume; lost history."""

from __future__ import annotations

import asyncio

import pytest

from monque_engine import ChangeFeedHistoryLostError, InvalidCursorError, JobStatus, Monque
from monque_engine.store.sqlite.url import InvalidSqliteUrlError


async def _next(stream, timeout=3.0):
    return await asyncio.wait_for(stream.__anext__(), timeout)


async def _take(stream, count, timeout=3.0):
    return [await _next(stream, timeout) for _ in range(count)]


async def test_watch_sees_insert_update_delete_in_order_with_documents(monque):
    m = await monque()
    stream = await m.open_watch()
    job = await m.enqueue("w", {"v": 1})
    ins = await _next(stream)
    assert (ins.operation, ins.job_id, ins.name, ins.status) == ("insert", job.id, "w", JobStatus.PENDING)
    assert ins.job == job

    cancelled = await m.cancel_job(job.id)
    upd = await _next(stream)
    assert (upd.operation, upd.job_id, upd.status) == ("update", job.id, JobStatus.CANCELLED)
    assert upd.job == cancelled

    moved = await m.retry_job(job.id)
    upd2 = await _next(stream)
    assert upd2.operation == "update" and upd2.job == moved and upd2.next_run_at_ms == moved.next_run_at_ms

    assert await m.delete_job(job.id)
    dele = await _next(stream)
    assert (dele.operation, dele.job_id, dele.job) == ("delete", job.id, None)

    tokens = [e.token for e in (ins, upd, upd2, dele)]
    assert len({repr(t) for t in tokens}) == 4
    if m.store.kind == "sqlite":  # SQLite tokens are the change sequence numbers
        assert tokens == sorted(tokens)


async def test_watch_without_token_starts_at_the_end(monque):
    m = await monque()
    await m.enqueue("before")
    stream = await m.open_watch()
    job = await m.enqueue("after")
    first = await _next(stream)
    assert first.job_id == job.id


async def test_watch_orders_a_burst_and_loads_documents_as_read(monque):
    m = await monque()
    stream = await m.open_watch()
    jobs = await m.enqueue_many([{"name": "burst", "data": i} for i in range(50)])
    await m.cancel_jobs()
    events = await _take(stream, 100)
    assert [e.operation for e in events] == ["insert"] * 50 + ["update"] * 50
    assert [e.job_id for e in events] == [j.id for j in jobs] * 2
    # documents are looked up when read (updateLookup semantics): all cancelled by now
    assert all(e.job is not None and e.job.status is JobStatus.CANCELLED for e in events)
    assert [e.status for e in events[:50]] == [JobStatus.PENDING] * 50  # the status the change wrote


async def test_watch_sees_commits_of_another_instance(monque):
    m1 = await monque()
    m2 = await monque()
    stream = await m1.open_watch()
    job = await m2.enqueue("cross", 1)
    event = await _next(stream)
    assert event.job_id == job.id and event.job == job


async def test_watch_without_full_document(monque):
    m = await monque()
    stream = await m.open_watch(full_document=False)
    job = await m.enqueue("lean")
    event = await _next(stream)
    assert event.job_id == job.id and event.job is None and event.name == "lean"


async def test_watch_iterator_form(monque):
    m = await monque()
    received = []

    async def consume():
        async for change in m.watch():
            received.append(change)
            if len(received) == 2:
                return

    task = asyncio.create_task(consume())

    async def feed_until_seen():
        # watch() opens lazily on first iteration: keep committing until two changes arrived
        while not task.done():
            await m.enqueue("it")
            await asyncio.sleep(0.005)

    await asyncio.wait_for(feed_until_seen(), 3)
    await task
    assert len(received) == 2
    assert all(c.name == "it" and c.operation == "insert" and c.job.name == "it" for c in received)
    assert received[0].job_id != received[1].job_id
    assert repr(received[0].token) != repr(received[1].token)


async def test_resume_yields_exactly_the_following_events(monque):
    m = await monque()
    stream = await m.open_watch()
    job_a = await m.enqueue("r", 1)
    job_b = await m.enqueue("r", 2)
    await m.cancel_job(job_a.id)
    await m.reschedule_job(job_b.id, __import__("datetime").timedelta(hours=1))
    await m.delete_job(job_a.id)
    await m.enqueue("r", 3)
    events = await _take(stream, 6)
    seen = [(e.operation, e.job_id, e.token) for e in events]
    assert [op for op, _, _ in seen] == ["insert", "insert", "update", "update", "delete", "insert"]

    for cut in range(len(events)):
        resumed = await m.open_watch(resume_after=seen[cut][2])
        rest = await _take(resumed, len(seen) - cut - 1)
        assert [(e.operation, e.job_id, e.token) for e in rest] == seen[cut + 1 :]
        # and then nothing is repeated: the next event is the next new change
        newer = await m.enqueue("r", {"after": cut})
        following = await _next(resumed)
        assert (following.operation, following.job_id) == ("insert", newer.id)
        seen.append((following.operation, following.job_id, following.token))


async def test_resume_token_validation(monque):
    m = await monque()
    await m.enqueue("x")
    for bad in ("abc", -1, 1.5, True, object()):
        with pytest.raises(InvalidCursorError):
            await m.open_watch(resume_after=bad)


async def test_resume_token_ahead_of_the_feed_is_refused(tmp_path):
    m = Monque(f"sqlite:///{tmp_path}/ahead.db")
    try:
        await m.initialize()
        await m.enqueue("x")
        with pytest.raises(ChangeFeedHistoryLostError):
            await m.open_watch(resume_after=10_000)
    finally:
        await m.close()


async def test_token_older_than_pruned_history_is_lost(tmp_path):
    m = Monque(f"sqlite:///{tmp_path}/feed.db?feed_retention=1000")
    try:
        await m.initialize()
        stream = await m.open_watch()
        await m.enqueue("old")
        early = await _next(stream)
        await m.enqueue_many([{"name": "filler", "data": i} for i in range(1200)])
        removed = await m.store.prune_feed()
        assert removed > 0
        with pytest.raises(ChangeFeedHistoryLostError, match="older than"):
            await m.open_watch(resume_after=early.token)
        with pytest.raises(ChangeFeedHistoryLostError):  # the iterator form raises on first use
            await m.watch(resume_after=early.token).__anext__()
        # a recent token still resumes exactly
        recent = await m.open_watch(resume_after=early.token + 1100)
        nxt = await _next(recent)
        assert nxt.token == early.token + 1101
    finally:
        await m.close()


def test_feed_retention_minimum(tmp_path):
    with pytest.raises(InvalidSqliteUrlError, match="feed_retention"):
        Monque(f"sqlite:///{tmp_path}/f.db?feed_retention=999")
    Monque(f"sqlite:///{tmp_path}/f.db?feed_retention=1000")


async def test_stream_ends_when_the_store_closes(store_url):
    m = Monque(store_url)
    await m.initialize()
    stream = await m.open_watch()
    waiter = asyncio.create_task(_next(stream, timeout=5))
    await asyncio.sleep(0)
    await m.close()
    with pytest.raises(StopAsyncIteration):
        await waiter


async def test_open_stream_overtaken_by_pruning_raises_instead_of_skipping(tmp_path):
    """ADR 0002: a token older than the kept window raises ChangeFeedHistoryLostError rather
    than silently skipping. That holds for an already-open stream too: one whose position
    falls behind the pruned window must raise, not jump over the pruned changes (the check
    was once made only when a stream was opened)."""
    m = Monque(f"sqlite:///{tmp_path}/feed.db?feed_retention=1000")
    try:
        await m.initialize()
        stream = await m.open_watch()
        await m.enqueue("w", 0)
        first = await _next(stream)
        await m.enqueue_many([{"name": "w", "data": i} for i in range(2500)])
        assert await m.store.prune_feed() > 0
        try:
            second = await _next(stream)
        except ChangeFeedHistoryLostError:
            return
        assert second.token == first.token + 1, (
            f"stream jumped from token {first.token} to {second.token}: "
            f"{second.token - first.token - 1} changes silently lost"
        )
    finally:
        await m.close()

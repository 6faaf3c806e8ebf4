"""What a worker's change stream costs at fleet scale (issue 27 items 1 and 4). FAKES.

The pipelines are evaluated by mongomock (a query-language evaluator); the stream is
PyMongo's real ``AsyncChangeStream`` over a scripted cursor (see test_mongo_watch.py), so
``try_next()`` returns buffered documents exactly as the driver does: without suspending.
A server would be needed to measure the oplog and the lookups themselves.
"""

from __future__ import annotations

import asyncio
from typing import Any

from test_mongo_changes import RECORDED, _evaluate
from test_mongo_watch import BLOCK, DriverStream, ScriptedCursor, _change, _open

from monque_engine.job import JobStatus
from monque_engine.store.mongo.changes import watch_pipeline


def test_a_status_filtered_stream_drops_deletes_but_keeps_invalidate() -> None:
    """A purge of 1M jobs must not send 1M events to each of 20 workers: the worker's
    stream (filtered to pending) lets no delete through, on either $match stage."""
    pipeline = watch_pipeline(False, (JobStatus.PENDING,))
    assert "delete" not in _evaluate(pipeline, RECORDED, stages=1)
    assert "delete" not in _evaluate(pipeline, RECORDED)
    assert "invalidate" in _evaluate(pipeline, RECORDED)
    # A console's unfiltered stream still sees deletes (it drops the rows).
    assert "delete" in _evaluate(watch_pipeline(False, None), RECORDED)


async def test_only_a_caller_that_wants_the_job_gets_a_post_image_lookup() -> None:
    """``updateLookup`` is a primary read per update event. The console re-reads by id; a
    worker needs only a wake-up (issue 36 item 2: a bulk retry of 100k jobs was 100k
    lookups per worker, each document with its attempt history)."""
    _store, _events, console = await _open(DriverStream(ScriptedCursor(BLOCK)), full_document=False)
    assert console[0][1]["full_document"] is None
    _store, _events, worker = await _open(
        DriverStream(ScriptedCursor(BLOCK)), full_document=False, statuses=(JobStatus.PENDING,)
    )
    assert worker[0][1]["full_document"] is None
    _store, _events, wants_jobs = await _open(DriverStream(ScriptedCursor(BLOCK)))
    assert wants_jobs[0][1]["full_document"] == "updateLookup"


async def test_draining_a_buffered_batch_lets_the_loop_run_between_changes() -> None:
    """A batch of buffered changes is returned by try_next() without any await suspending;
    the store must yield so heartbeats and handlers run while it drains."""
    stream = DriverStream(ScriptedCursor(("batch", [_change(n) for n in range(1, 51)], False), BLOCK))
    store, events, _ = await _open(stream)
    order: list[str] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            order.append("tick")
            await asyncio.sleep(0)

    first = await anext(events)  # the getMore itself suspends; start counting after it
    order.append("event")
    task = asyncio.ensure_future(ticker())
    for _ in range(49):
        await anext(events)
        order.append("event")
    stop.set()
    await task
    assert first.token == {"_data": "0001"}
    between = order[order.index("event") : len(order) - order[::-1].index("event")]
    assert between.count("tick") >= 40, between[:20]
    await store.close()


async def test_a_socket_timeout_without_timeout_ms_is_a_dead_connection_not_an_idle_feed() -> None:
    """Item 10: without timeoutMS a timeout is socketTimeoutMS expiring, on a getMore the
    server answers within maxAwaitTimeMS when healthy: a half-open connection. PyMongo
    resumes once by itself; when that resume times out too, the error reaches the store,
    which must report it (the feed reconnects) rather than take it for "no change yet"."""
    from pymongo.errors import NetworkTimeout

    from monque_engine.errors import ConnectionError

    class HalfOpen(DriverStream):
        async def _create_cursor(self) -> Any:  # the resume's aggregate times out too
            self.opened += 1
            if self.opened <= 3:
                raise NetworkTimeout("timed out")
            return ScriptedCursor(("batch", [_change(7)], False), BLOCK)  # old code: "live" again

    stream = HalfOpen(ScriptedCursor(("raise", NetworkTimeout("timed out"))))
    store, events, _ = await _open(stream, timeout_s=None)
    try:
        event = await anext(events)
    except ConnectionError as error:
        assert isinstance(error.__cause__, NetworkTimeout)
    else:
        raise AssertionError(f"a dead connection passed for an idle feed (then delivered {event.job_id})")
    await store.close()


async def test_resume_token_follows_the_driver_past_empty_batches() -> None:
    """Item 9: after a quiet spell the place to resume is the last batch's
    postBatchResumeToken (PyMongo's ``resume_token``), not the last event's ``_id``."""
    cursor = ScriptedCursor(("batch", [_change(1)], False), ("batch", [], False), BLOCK)
    stream = DriverStream(cursor)
    store, events, _ = await _open(stream)
    first = await anext(events)
    assert first.token == {"_data": "0001"}
    cursor._post_batch_resume_token = {"_data": "0099"}  # the server's answer to the empty getMore
    pending = asyncio.ensure_future(anext(events))
    for _ in range(5):
        await asyncio.sleep(0)
    assert events.resume_token == {"_data": "0099"}
    pending.cancel()
    await store.close()


async def test_the_resilient_watch_reopens_from_the_iterators_resume_token() -> None:
    from monque_engine.errors import ConnectionError
    from monque_engine.scheduler.resilient_watch import ResilientWatch

    opened: list[Any] = []

    class Broken:
        resume_token: Any = None

        def __init__(self) -> None:
            self.resume_token = {"_data": "0099"}

        def __aiter__(self) -> Broken:
            return self

        async def __anext__(self) -> Any:
            raise ConnectionError("connection reset")

    class Store:
        async def open_watch(self, token: Any, **_: Any) -> Any:
            opened.append(token)
            return Broken()

    watch = ResilientWatch(Store(), lambda change: None, reconnect_delays=(0.0, 0.0, 0.0))  # type: ignore[arg-type]
    await watch.start()
    while len(opened) < 2:
        await asyncio.sleep(0)
    await watch.stop()
    assert opened[:2] == [None, {"_data": "0099"}]

"""What a worker's change stream costs at fleet scale (issue 27 items 1 and 4). FAKES.

The pipelines are evaluated by mongomock (a query-language evaluator); the stream is
PyMongo's real ``AsyncChangeStream`` over a scripted cursor (see test_mongo_watch.py), so
``try_next()`` returns buffered documents exactly as the driver does: without suspending.
A server would be needed to measure the oplog and the lookups themselves.
"""

from __future__ import annotations

import asyncio

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


async def test_console_stream_has_no_post_image_lookup_but_the_worker_stream_does() -> None:
    """``updateLookup`` is a primary read per update event; the console re-reads by id."""
    _store, _events, console = await _open(DriverStream(ScriptedCursor(BLOCK)), full_document=False)
    assert console[0][1]["full_document"] is None
    _store, _events, worker = await _open(
        DriverStream(ScriptedCursor(BLOCK)), full_document=False, statuses=(JobStatus.PENDING,)
    )
    assert worker[0][1]["full_document"] == "updateLookup"
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

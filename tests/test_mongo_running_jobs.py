"""Stopping running jobs and their progress on MongoDB (issue 37 parts 2 and 3, ADR 0019).
FAKES: the store's own methods over the query evaluator (mongomock; no server), and the
scheduler's processor driving it; the stream path's routing is in
``test_mongo_worker_stream.py`` (the driver's real stream over scripted replies).

- ``stopRequestedAt`` is written only on the attempt the operator saw (owner and
  ``lockedAt``), stamped no earlier than its claim; ``progress`` only by the owner;
- with streams off, the owner finds a request on its heartbeat (``look_for_stops``) and
  cancels the handler; the job ends cancelled with a ``cancelled`` attempt.
"""

from __future__ import annotations

import asyncio
from typing import Any

from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine.attempts import Attempt
from monque_engine.events import EventEmitter
from monque_engine.job import Job, JobStatus
from monque_engine.options import MonqueOptions
from monque_engine.run_progress import Progress
from monque_engine.scheduler.context import SchedulerContext
from monque_engine.scheduler.lifecycle import Lifecycle
from monque_engine.scheduler.processor import JobProcessor
from monque_engine.store.mongo.changes import change_to_event
from monque_engine.store.mongo.documents import STOP_REQUEST_FIELD

CLAIMED_AT = 2_000


async def test_a_stop_request_is_written_only_on_the_attempt_the_operator_saw() -> None:
    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))
    [job] = await store.claim("email", "me", CLAIMED_AT, 1, 30_000)
    assert await store.request_stop(job.id, "someone-else", CLAIMED_AT, 3_000) is None
    assert await store.request_stop(job.id, "me", CLAIMED_AT - 1, 3_000) is None  # an earlier claim
    assert adapter.sync.find_one({}).get(STOP_REQUEST_FIELD) is None
    # This process's clock behind the owner's: stamped at the claim, so it still speaks for it.
    stopped = await store.request_stop(job.id, "me", CLAIMED_AT, CLAIMED_AT - 500)
    assert stopped is not None and stopped.stop_requested_at_ms == CLAIMED_AT and stopped.stop_pending
    assert await store.stop_requests("me", [job.id, oid(9)]) == {job.id: (CLAIMED_AT, CLAIMED_AT)}
    assert await store.stop_requests("someone-else", [job.id]) == {}


async def test_the_owner_ends_a_stopped_job_cancelled_and_progress_is_the_owner_s_alone() -> None:
    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))
    [job] = await store.claim("email", "me", CLAIMED_AT, 1, 30_000)
    report = Progress(0.25, "a quarter", 2_500)
    assert await store.report_progress(job.id, "someone-else", 2_500, report) is False
    assert await store.report_progress(job.id, "me", 2_500, report) is True
    stored = Job.from_document(adapter.sync.find_one({}))
    assert stored.running_progress == report
    attempt = Attempt(1, "cancelled", "me", CLAIMED_AT, 3_000)
    assert await store.cancel_owned(job.id, "someone-else", 3_000, attempt) is None
    ended = await store.cancel_owned(job.id, "me", 3_000, attempt)
    assert ended is not None and ended.status is JobStatus.CANCELLED and ended.claimed_by is None
    assert [a.outcome for a in ended.attempts] == ["cancelled"] and ended.running_progress is None


def test_a_stop_request_event_is_marked_as_one() -> None:
    change = {
        "_id": {"_data": "01"},
        "operationType": "update",
        "documentKey": {"_id": oid(1)},
        "updateDescription": {"updatedFields": {STOP_REQUEST_FIELD: "x"}},
    }
    event = change_to_event(change, include_job=False)
    assert event is not None and event.stop_requested and event.job_id == oid(1)
    plain = change_to_event({**change, "updateDescription": {"updatedFields": {"status": "pending"}}}, False)
    assert plain is not None and not plain.stop_requested


async def test_with_streams_off_the_heartbeat_finds_the_request_and_cancels_the_handler() -> None:
    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))
    ctx = SchedulerContext(MonqueOptions.from_kwargs({"scheduler_instance_id": "me"}), EventEmitter())
    processor = JobProcessor(ctx, store)
    started = asyncio.Event()
    seen: list[str] = []

    async def hang(job: Job) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    cancelled: list[Any] = []
    ctx.events.on("job:cancelled", cancelled.append)
    processor.register("email", hang)
    [job] = await store.claim("email", "me", CLAIMED_AT, 1, 30_000)
    processor.start()
    try:
        processor._launch(processor.workers["email"], job)
        await asyncio.wait_for(started.wait(), 10)
        await processor.look_for_stops()  # nothing asked yet: nothing happens
        assert seen == []
        await store.request_stop(job.id, "me", CLAIMED_AT, 3_000)
        await processor.look_for_stops()
        task = processor.running_jobs()[job.id]
        await asyncio.wait_for(task, 10)
    finally:
        processor.stop_claiming()
    assert seen == ["cancelled"] and [event.job.id for event in cancelled] == [job.id]
    stored = Job.from_document(adapter.sync.find_one({}))
    assert stored.status is JobStatus.CANCELLED and [a.outcome for a in stored.attempts] == ["cancelled"]


async def test_the_heartbeat_looks_for_stop_requests_only_while_the_feed_is_down() -> None:
    looked: list[str] = []

    class Processor:
        def heartbeat_ids(self) -> list[str]:
            return ["j1"]

        async def look_for_stops(self) -> None:
            looked.append("look")

    class Liveness:
        async def heartbeat(self, owner: str, now: int, ids: Any) -> int:
            return 1

    class Fleet:
        async def beat_guarded(self) -> None:
            return None

    lifecycle = Lifecycle.__new__(Lifecycle)
    lifecycle._processor = Processor()  # type: ignore[assignment]
    lifecycle._liveness = Liveness()  # type: ignore[assignment]
    lifecycle._fleet = Fleet()  # type: ignore[assignment]
    lifecycle._ctx = SchedulerContext(MonqueOptions.from_kwargs({"scheduler_instance_id": "me"}), EventEmitter())
    lifecycle._watch = None  # no feed: stopped
    await lifecycle._heartbeat()
    assert looked == ["look"]

    class Live:
        state = "live"

    lifecycle._watch = Live()  # type: ignore[assignment]
    await lifecycle._heartbeat()
    assert looked == ["look"]  # the feed carries requests: no extra read per beat


async def test_each_owner_s_longest_running_job_is_its_earliest_claim() -> None:
    store, _ = evaluator_store()
    for n in (1, 2, 3):
        await store.insert(new_job(oid(n)))
    await store.claim("email", "me", 2_000, 1, 30_000)  # oid(1), claimed first
    await store.claim("email", "me", 3_000, 1, 30_000)
    await store.claim("email", "other", 4_000, 1, 30_000)
    holdings = {holding.owner: holding for holding in await store.owner_holdings()}
    assert (holdings["me"].jobs, holdings["me"].longest_job_id, holdings["me"].longest_since_ms) == (2, oid(1), 2_000)
    assert (holdings["other"].longest_job_id, holdings["other"].longest_since_ms) == (oid(3), 4_000)

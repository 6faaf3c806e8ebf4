"""Stopping a running job on MongoDB, at the driver (issue 37).

DRIVER LEVEL: a real ``Monque`` worker on a real ``MongoStore`` over the scripted wire server
(jobs in a mongomock database behind it) runs an async handler that never returns on its own.
A second ``Monque`` over the same server (another process, as the console or the API would
be) asks for the stop; the worker learns of it in one of its two ways:

- **stream**: its change stream carries the update that set ``stopRequestedAt``. The server
  here does not evaluate change streams, so the test answers the worker's next ``getMore``
  with that event, shaped as the worker's projection leaves it (``WORKER_PROJECTION``);
- **heartbeat**: the server has no change streams (a standalone's answer, code 40573), the
  feed falls back to polling, and the worker's heartbeat reads the stop requests of its jobs.

Either way the handler is cancelled, the attempt recorded ``cancelled`` and the job ends
``cancelled``: checked in the database behind the server, not in the worker's memory.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from bson import ObjectId

from monque_engine import Job, JobStatus, Monque
from monque_engine.store.mongo.documents import STOP_REQUEST_FIELD
from tests.conftest import poll_until
from wire import WireServer
from wire.backend import MongomockBackend
from wire.server import cursor_reply, hello_as
from wire.store import JOBS, script_collection

GUARD_S = 30.0  # a hang guard, not a timing threshold


@pytest.mark.parametrize("path", ["stream", "heartbeat"])
async def test_a_stop_from_another_client_ends_a_running_async_handler(wire_server: WireServer, path: str) -> None:
    backend = MongomockBackend()
    script_collection(wire_server)
    backend.serve(wire_server)
    jobs = backend.client["monque"][JOBS]
    started = asyncio.Event()

    async def hang(job: Job) -> None:
        started.set()
        await asyncio.Event().wait()

    streams = path == "stream"
    with hello_as(wire_server, change_streams=streams):
        worker = Monque(wire_server.url(), heartbeat_interval=0.3, lock_timeout=300.0, shutdown_timeout=2.0)
        worker.register("export.rows", hang)
        await worker.initialize()
        operator = Monque(wire_server.url(), recover_stale_jobs=False)
        await operator.initialize()
        try:
            await worker.start()
            job = await operator.enqueue("export.rows", {"report": 7})
            await asyncio.wait_for(started.wait(), GUARD_S)
            if streams:
                await wire_server.wait_for("getMore")  # the worker's stream is open
            requested = await operator.cancel_job(job.id, running=True)
            assert requested is not None and requested.stop_pending
            stored = jobs.find_one({"_id": ObjectId(job.id)})
            assert stored is not None and stored[STOP_REQUEST_FIELD] is not None
            if streams:
                event: dict[str, Any] = {
                    "_id": {"_data": "01"},
                    "operationType": "update",
                    "documentKey": {"_id": ObjectId(job.id)},
                    "updateDescription": {"updatedFields": {STOP_REQUEST_FIELD: stored[STOP_REQUEST_FIELD]}},
                }
                namespace = f"monque.{JOBS}"
                wire_server.reply(
                    "getMore",
                    cursor_reply(namespace, [event], cursor_id=1, first=False, post_batch_resume_token={"_data": "01"}),
                )
            # Without that event (stream) the job stays processing: checked by hand, the
            # stream case then fails on this wait.
            await poll_until(
                lambda: (jobs.find_one({"_id": ObjectId(job.id)}) or {}).get("status") == "cancelled",
                GUARD_S,
                "the job ended cancelled",
            )
            ended = await operator.get_job(job.id)
            assert ended is not None and ended.status is JobStatus.CANCELLED
            assert ended.last_attempt is not None and ended.last_attempt.outcome == "cancelled"
        finally:
            async with asyncio.timeout(GUARD_S):
                await worker.stop()
                await worker.close()
                await operator.close()
    assert not wire_server.handler_errors

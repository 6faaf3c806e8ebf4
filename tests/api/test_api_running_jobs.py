"""Our routes for issue 37's and issue 40's surface (issue 39: "whichever lands second adds the
routes"): stop a running job (one, and bounded bulk), read a running attempt's progress and
stop state, and select by payload conditions in the bounded bulk routes.

The stop is end to end on a real SQLite file: a worker (a second ``Monque`` on the same file,
as another process would be) runs an async handler that waits for ever; the API's stop ends
it ``cancelled``, learnt by the worker through the store's feed. Payload selections run on
both stores (MongoDB over mongomock's evaluator). Every response is schema-checked by
``ApiClient`` against our OpenAPI document.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from api_support import ApiClient, seeded_monque, snapshot

from monque_engine import Job, JobStatus, Monque
from monque_engine.management import ManagementApi, mapping
from monque_engine.timeutil import now_ms


async def _worker_holding_a_job(db: Path) -> tuple[Monque, Job, asyncio.Event]:
    """A worker on ``db`` running one job whose async handler never returns on its own."""
    worker = Monque(f"sqlite:///{db}", recover_stale_jobs=False, heartbeat_interval=0.5)
    started = asyncio.Event()

    async def hang(job: Job) -> None:
        await job.report_progress(0.4, "rows 400 of 1,000")
        started.set()
        await asyncio.Event().wait()

    worker.register("export.rows", hang)
    await worker.initialize()
    job = await worker.enqueue("export.rows", {"report": 7})
    await worker.start()
    await asyncio.wait_for(started.wait(), 30)
    return worker, job, started


async def _final(monque: Monque, job_id: str) -> Job:
    return await monque.wait(job_id, timeout=30)


async def test_a_running_job_is_stopped_over_http_and_its_run_reads_back(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    worker, job, _ = await _worker_holding_a_job(db)
    api_side = Monque(f"sqlite:///{db}", recover_stale_jobs=False)
    await api_side.initialize()
    client = ApiClient(ManagementApi(api_side))
    try:
        run = await client.ok("GET", f"/api/x/v1/jobs/{job.id}/run")
        assert run["status"] == "processing" and run["claimedBy"] == worker.instance_id
        assert run["progress"]["fraction"] == 0.4 and run["progress"]["message"] == "rows 400 of 1,000"
        assert run["stopRequestedAt"] is None
        stopped = await client.ok("POST", f"/api/x/v1/jobs/{job.id}/actions/stop", body={"claimedAt": run["lockedAt"]})
        assert stopped["id"] == job.id
        ended = await _final(api_side, job.id)
        assert ended.status is JobStatus.CANCELLED and ended.last_attempt is not None
        assert ended.last_attempt.outcome == "cancelled"
        # Already cancelled: a second stop is upstream's idempotent cancel, and changes nothing.
        again = await client.ok("POST", f"/api/x/v1/jobs/{job.id}/actions/stop", body={})
        assert again["status"] == "cancelled" and again["updatedAt"] == mapping.iso(ended.updated_at_ms)
        after = await client.ok("GET", f"/api/x/v1/jobs/{job.id}/run")
        assert after["status"] == "cancelled" and after["progress"] is None and after["stopRequestedAt"] is None
    finally:
        await worker.stop()
        await worker.close()
        await api_side.close()


async def test_a_stop_for_an_attempt_the_caller_did_not_see_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    worker, job, _ = await _worker_holding_a_job(db)
    client = ApiClient(ManagementApi(worker))
    try:
        run = await client.ok("GET", f"/api/x/v1/jobs/{job.id}/run")
        before = await snapshot(worker)
        earlier = "2001-01-01T00:00:00.000Z"  # another attempt's claim time
        answer = await client.call("POST", f"/api/x/v1/jobs/{job.id}/actions/stop", body={"claimedAt": earlier})
        assert answer.status == 409, answer.body
        assert await snapshot(worker) == before
        assert (await client.ok("GET", f"/api/x/v1/jobs/{job.id}/run"))["lockedAt"] == run["lockedAt"]
        await client.ok("POST", f"/api/x/v1/jobs/{job.id}/actions/stop", body={})  # the one it runs now
        assert (await _final(worker, job.id)).status is JobStatus.CANCELLED
    finally:
        await worker.stop()
        await worker.close()


async def test_a_stop_is_refused_read_only_and_for_an_unknown_owner(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{db}", recover_stale_jobs=False) as monque:
        t = now_ms()
        held = Job(
            id="65f0000000000000000000aa",
            name="node.job",
            data={},
            status=JobStatus.PROCESSING,
            next_run_at_ms=t,
            created_at_ms=t,
            updated_at_ms=t,
            locked_at_ms=t,
            claimed_by="node-worker-1",  # not in the instance registry: a Node worker
            last_heartbeat_ms=t,
        )
        await monque.import_jobs([held])
        before = await snapshot(monque)
        read_only = ApiClient(ManagementApi(monque, read_only=True))
        assert (await read_only.call("POST", f"/api/x/v1/jobs/{held.id}/actions/stop", body={})).status == 403
        client = ApiClient(ManagementApi(monque))
        refused = await client.call("POST", f"/api/x/v1/jobs/{held.id}/actions/stop", body={})
        assert refused.status == 409 and "node-worker-1" in refused.body["error"], refused.body
        bad = await client.call("POST", f"/api/x/v1/jobs/{held.id}/actions/stop", body={"claimedAt": "yesterday"})
        assert bad.status == 400
        unknown = await client.call("POST", "/api/x/v1/jobs/65f0000000000000000000ff/actions/stop", body={})
        assert unknown.status == 404
        assert await snapshot(monque) == before


# -- payload conditions in the bounded bulk routes ------------------------------------------------
def _payload_jobs() -> list[Job]:
    t = now_ms() - 60_000
    payloads = [{"customer_id": 1}, {"customer_id": 2}, {"other": True}, {"other": False}, {"customer_id": None}]
    return [
        Job(
            id=f"65f00000000000000000010{n}",
            name="invoice.send",
            data=data,
            status=JobStatus.PENDING,
            next_run_at_ms=t + 3_600_000,
            created_at_ms=t + n,
            updated_at_ms=t + n,
        )
        for n, data in enumerate(payloads)
    ]


@pytest.fixture(params=["sqlite", "mongodb"])
async def payload_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Monque]:
    async with seeded_monque(request.param, tmp_path, _payload_jobs()) as m:
        yield m


async def test_a_payload_condition_counts_and_bounds_a_bulk_cancel(payload_store: Monque) -> None:
    client = ApiClient(ManagementApi(payload_store))
    missing: dict[str, Any] = {"name": "invoice.send", "data": ["data.customer_id missing"]}
    counted = await client.ok("POST", "/api/x/v1/jobs/actions/cancel/count", body=missing)
    assert counted["count"] == 2
    # asOf is bound to the selection, payload conditions included.
    other = {"name": "invoice.send", "data": ["data.customer_id exists"], "asOf": counted["asOf"]}
    assert (await client.call("POST", "/api/x/v1/jobs/actions/cancel", body=other)).status == 400
    done = await client.ok("POST", "/api/x/v1/jobs/actions/cancel", body={**missing, "asOf": counted["asOf"]})
    assert done["count"] == 2
    cancelled = {job.id for job in await payload_store.get_jobs(limit=50) if job.status is JobStatus.CANCELLED}
    assert cancelled == {"65f000000000000000000102", "65f000000000000000000103"}


@pytest.mark.parametrize(
    ("data", "says"),
    [([], "empty list"), (["customer_id missing"], "data filter"), (["data.x ="], "no value")],
)
async def test_a_bad_payload_condition_is_400_and_changes_nothing(payload_store: Monque, data: Any, says: str) -> None:
    client = ApiClient(ManagementApi(payload_store))
    before = await snapshot(payload_store)
    answer = await client.call("POST", "/api/x/v1/jobs/actions/cancel/count", body={"data": data})
    assert answer.status == 400 and says in answer.body["error"], answer.body
    assert await snapshot(payload_store) == before

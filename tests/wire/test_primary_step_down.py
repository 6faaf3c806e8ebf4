"""A primary that steps down in the middle of a claim or a bulk write.

DRIVER LEVEL: a real ``MongoStore`` over the scripted wire server; documents live in a
mongomock database behind it (``MongomockBackend``). A step-down is scripted as the reply
the manual documents for a write sent to a member that is no longer primary: error 10107
``NotWritablePrimary`` (https://www.mongodb.com/docs/manual/reference/error-codes/), with
the ``RetryableWriteError`` label on a retryable write (a server of 4.4 or later labels it,
and the driver retries only what is labelled; https://www.mongodb.com/docs/manual/core/retryable-writes/)
and the ``TransientTransactionError`` label inside a transaction
(https://www.mongodb.com/docs/manual/core/transactions-in-applications/#transienttransactionerror).
This proves what the driver and the store do with those replies (which writes the driver
retries, with which ``txnNumber``; what the store keeps and what it reports), not how an
election goes on a server.
"""

from __future__ import annotations

import pytest
from test_mongo_evaluator import new_job, oid

from monque_engine.errors import ConnectionError
from monque_engine.job import JobStatus
from monque_engine.store.base import StoreSelector
from monque_engine.store.mongo import MongoStore
from monque_engine.store.mongo.intake import new_job_document
from wire import Error, WireServer
from wire.backend import MongomockBackend
from wire.store import JOBS, open_store, script_collection

NOW = 10_000
#: To a retryable write (``txnNumber`` sent): labelled for the retry.
STEPPED_DOWN = Error(10107, "Not primary while writing", "NotWritablePrimary", labels=("RetryableWriteError",))
#: To a write that is not retryable (an updateMany carries no ``txnNumber``): no label.
STEPPED_DOWN_MULTI = Error(10107, "Not primary while writing", "NotWritablePrimary")
IN_TRANSACTION = Error(10107, "Not primary while writing", "NotWritablePrimary", labels=("TransientTransactionError",))


async def _store(server: WireServer, jobs: int = 0) -> tuple[MongoStore, MongomockBackend]:
    backend = MongomockBackend()
    script_collection(server)
    backend.serve(server)
    for n in range(1, jobs + 1):
        backend.client["monque"][JOBS].insert_one(new_job_document(new_job(oid(n), run_at=n)))
    return await open_store(server), backend


def _statuses(backend: MongomockBackend) -> dict[str, str]:
    return {str(doc["_id"]): doc["status"] for doc in backend.client["monque"][JOBS].find()}


async def test_a_claim_refused_by_a_stepped_down_primary_is_retried_once_by_the_driver(
    wire_server: WireServer,
) -> None:
    store, backend = await _store(wire_server, jobs=3)
    answer = backend.handler()
    wire_server.reply("findAndModify", answer, STEPPED_DOWN)  # claim 2 refused, nothing written
    try:
        jobs = await store.claim("email", "w1", NOW, 3, 30_000)
    finally:
        await store.close()
    assert sorted(job.id for job in jobs) == [oid(1), oid(2), oid(3)]  # a wave's claims land in any order
    assert set(_statuses(backend).values()) == {"processing"}
    claims = wire_server.commands("findAndModify")
    assert len(claims) == 4  # three claims, one of them sent twice
    # Claims go out in waves (1, then 2 at once: mongo/claims.py), so the retry of the refused
    # one need not be the very next request: it is the one later request of the same write.
    refused = claims[1]
    retries = [c for c in claims[2:] if (c.get("lsid"), c.get("txnNumber")) == (refused["lsid"], refused["txnNumber"])]
    assert len(retries) == 1  # one retryable write, sent twice


async def test_a_step_down_outlasting_the_retry_keeps_the_jobs_already_claimed(wire_server: WireServer) -> None:
    store, backend = await _store(wire_server, jobs=3)
    # The first claim lands; every claim of the next wave (two at once) and its retry are refused.
    wire_server.reply("findAndModify", backend.handler(), *([STEPPED_DOWN] * 4))
    try:
        jobs = await store.claim("email", "w1", NOW, 3, 30_000)
        assert [job.id for job in jobs] == [oid(1)]  # claimed and returned to run, not orphaned
        assert _statuses(backend) == {oid(1): "processing", oid(2): "pending", oid(3): "pending"}
        with pytest.raises(ConnectionError) as info:  # nothing claimed: the error is raised
            wire_server.reply("findAndModify", STEPPED_DOWN, STEPPED_DOWN)
            await store.claim("email", "w1", NOW, 3, 30_000)
    finally:
        await store.close()
    assert "claim jobs" in str(info.value) and "Not primary" in str(info.value)


async def test_enqueue_many_interrupted_by_a_step_down_is_run_again_as_a_whole_transaction(
    wire_server: WireServer,
) -> None:
    store, backend = await _store(wire_server)
    wire_server.reply("insert", IN_TRANSACTION)  # the first transaction's insert: refused, aborted
    try:
        stored = await store.insert_many([new_job(oid(n)) for n in range(1, 6)])
    finally:
        await store.close()
    assert [job.id for job in stored] == [oid(n) for n in range(1, 6)]
    assert sorted(_statuses(backend)) == [oid(n) for n in range(1, 6)]  # each once
    first, second = wire_server.commands("insert")
    assert first["txnNumber"] != second["txnNumber"]  # with_transaction ran the transaction again
    assert second.get("startTransaction") is True
    assert len(wire_server.commands("commitTransaction")) == 1


async def test_a_bulk_cancel_interrupted_by_a_step_down_is_not_retried_and_can_be_run_again(
    wire_server: WireServer,
) -> None:
    """updateMany is not a retryable write (it may have changed part of the selection), so
    the driver does not send it again; the store reports it. Its filter carries the status
    guard, so running it again changes only what is still cancellable."""
    store, backend = await _store(wire_server, jobs=3)
    selector = StoreSelector(name="email", statuses=(JobStatus.PENDING,))
    wire_server.reply("update", STEPPED_DOWN_MULTI)
    try:
        with pytest.raises(ConnectionError) as info:
            await store.cancel_many(selector, NOW)
        assert "cancel jobs" in str(info.value)
        (refused,) = wire_server.commands("update")  # not retried by the driver
        assert "txnNumber" not in refused.command
        assert set(_statuses(backend).values()) == {"pending"}
        assert await store.cancel_many(selector, NOW) == 3  # the operator runs it again
    finally:
        await store.close()
    assert set(_statuses(backend).values()) == {"cancelled"}

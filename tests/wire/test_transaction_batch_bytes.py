"""A batch of large jobs is split into transactions by encoded bytes, not only by count
(issue 36, defect 5).

DRIVER LEVEL: a real ``MongoStore`` over the scripted wire server, which answers as a
replica-set primary, so the driver runs ``with_transaction``: ``insert`` commands carrying
``lsid``, ``txnNumber``, ``startTransaction`` / ``autocommit: false``, then
``commitTransaction`` (https://www.mongodb.com/docs/manual/reference/command/commitTransaction/).
Inserts are applied to a mongomock database. What the test reads is what the driver sent
inside each transaction; MongoDB's own limits (16 MB per oplog entry, the 60 s
``transactionLifetimeLimitSeconds``) are not exercised here.
"""

from __future__ import annotations

from collections import defaultdict

import bson
from test_mongo_evaluator import new_job, oid

from monque_engine.store.mongo import MongoStore
from monque_engine.store.mongo.intake import transaction_batches
from wire import WireServer
from wire.backend import MongomockBackend
from wire.store import open_store, script_collection

BLOB = "x" * (3 * 1024 * 1024)  # 3 MiB: allowed by default (no max_payload_size)


async def _store(server: WireServer) -> tuple[MongoStore, MongomockBackend]:
    backend = MongomockBackend()
    script_collection(server)
    server.handle("insert", backend.handler())
    return await open_store(server), backend


async def test_enqueue_many_of_large_jobs_keeps_each_transaction_under_the_byte_cap(wire_server: WireServer) -> None:
    store, backend = await _store(wire_server)
    jobs = [new_job(oid(n), data={"blob": BLOB}) for n in range(1, 11)]  # 30 MiB in all
    try:
        stored = await store.insert_many(jobs)
    finally:
        await store.close()
    assert [job.id for job in stored] == [job.id for job in jobs]
    by_transaction: dict[int, int] = defaultdict(int)
    for insert in wire_server.commands("insert"):
        assert insert.get("autocommit") is False  # inside a transaction
        by_transaction[int(insert["txnNumber"])] += sum(len(bson.encode(doc)) for doc in insert["documents"])
    assert len(wire_server.commands("commitTransaction")) == len(by_transaction) > 1
    assert max(by_transaction.values()) <= MongoStore.TRANSACTION_MAX_BYTES < 16 * 1024 * 1024
    assert backend.client["monque"]["monque_jobs"].count_documents({}) == 10


async def test_import_jobs_of_large_jobs_is_split_the_same_way(wire_server: WireServer) -> None:
    store, backend = await _store(wire_server)
    jobs = [new_job(oid(n), data={"blob": BLOB}).to_job() for n in range(1, 6)]
    try:
        assert await store.import_jobs(jobs) == 5
    finally:
        await store.close()
    transactions = {int(insert["txnNumber"]) for insert in wire_server.commands("insert")}
    assert len(transactions) == len(wire_server.commands("commitTransaction")) == 3  # 2 + 2 + 1
    assert backend.client["monque"]["monque_jobs"].count_documents({}) == 5


def test_batches_are_bounded_by_count_and_bytes_and_a_huge_item_goes_alone() -> None:
    assert transaction_batches([1] * 7, 3, 100) == [(0, 3), (3, 6), (6, 7)]
    assert transaction_batches([40, 40, 40, 10], 10, 100) == [(0, 2), (2, 4)]
    assert transaction_batches([10, 500, 10], 10, 100) == [(0, 1), (1, 2), (2, 3)]
    assert transaction_batches([], 10, 100) == []

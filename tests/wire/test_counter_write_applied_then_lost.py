"""A per-minute counter write applied by the driver's retry whose reply was lost counts once
(issue 36, defect 8).

DRIVER LEVEL: a real ``Monque`` on a real ``MongoStore`` over the scripted wire server; the
counters collection is a mongomock database behind it (``MongomockBackend``), so the test
reads what the writes did. The script: the first ``update`` drops the connection before
applying; the driver retries it (a retryable write: same ``lsid`` and ``txnNumber``); the
retry is applied and its connection dropped before the reply. The driver then raises a
network error for a write that happened. A server answers a batch it already holds with
E11000, as mongomock does here: an upsert whose filter is not equalities only is not
retried by the server on a duplicate key
(https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#upsert-with-duplicate-values).
This proves what the driver and the engine send and how they treat those replies, not how
a server behaves.
"""

from __future__ import annotations

from typing import Any

import pytest

from monque_engine import Monque
from monque_engine.errors import ConnectionError
from monque_engine.timeutil import now_ms
from wire import CLOSE, Request, WireServer
from wire.backend import MongomockBackend
from wire.store import script_collection

COUNTERS = "monque_jobs_counters"


async def _monque(server: WireServer, backend: MongomockBackend) -> Monque:
    script_collection(server)
    server.handle("find", backend.handler())
    m = Monque(server.url(), recover_stale_jobs=False)
    await m.initialize()
    return m


def _counter_row(backend: MongomockBackend) -> dict[str, Any]:
    rows = list(backend.client["monque"][COUNTERS].find())
    assert len(rows) == 1
    return rows[0]


async def test_a_counter_batch_applied_by_the_retry_whose_reply_was_lost_counts_once(
    wire_server: WireServer,
) -> None:
    backend = MongomockBackend()
    wire_server.reply("update", CLOSE, backend.apply_then(CLOSE))
    wire_server.handle("update", backend.handler())
    m = await _monque(wire_server, backend)
    try:
        for _ in range(3):
            m._processor._count("email", now_ms(), failed=False)
        with pytest.raises(ConnectionError):
            await m._fleet.flush_counts()
        first, retry = wire_server.commands("update")
        assert retry["txnNumber"] == first["txnNumber"]  # the driver's own retry of one write
        assert _counter_row(backend)["completed"] == 3  # applied by the retry
        await m._fleet.flush_counts()  # the next heartbeat's flush sends the batch again
        assert len(wire_server.commands("update")) >= 3
        assert _counter_row(backend)["completed"] == 3  # not 6
    finally:
        await m.close()


async def test_two_processes_inserting_one_row_both_count(wire_server: WireServer) -> None:
    """E11000 also answers the loser of two first inserts of a row (neither filter matched):
    that row is sent once more and, the row existing now, applied."""
    backend = MongomockBackend()
    counters = backend.client["monque"][COUNTERS]

    def another_process_inserts_first(request: Request) -> dict[str, Any]:
        statement = request["updates"][0]
        counters.insert_one({"_id": statement["q"]["_id"], "completed": 5, "failed": 0, "batches": ["other"]})
        return {
            "n": 0,
            "nModified": 0,
            "writeErrors": [{"index": 0, "code": 11000, "errmsg": "E11000 duplicate key error"}],
        }

    wire_server.reply("update", another_process_inserts_first)
    wire_server.handle("update", backend.handler())
    m = await _monque(wire_server, backend)
    try:
        m._processor._count("email", now_ms(), failed=True)
        await m._fleet.flush_counts()
        row = _counter_row(backend)
        assert (row["completed"], row["failed"]) == (5, 1)
        assert len(row["batches"]) == 2
    finally:
        await m.close()


async def test_a_batch_refused_by_the_server_is_sent_again_with_its_id(wire_server: WireServer) -> None:
    """A write error that applied nothing (here: not authorized) keeps the batch, with its
    id, for the next flush; the counts are then added once."""
    from wire import Error

    backend = MongomockBackend()
    wire_server.reply("update", Error(13, "not authorized on monque to execute command update", "Unauthorized"))
    wire_server.handle("update", backend.handler())
    m = await _monque(wire_server, backend)
    try:
        m._processor._count("email", now_ms(), failed=False)
        with pytest.raises(ConnectionError):
            await m._fleet.flush_counts()
        m._processor._count("email", now_ms(), failed=False)
        await m._fleet.flush_counts()
        refused, *sent = wire_server.commands("update")
        batch_ids = [s["updates"][0]["q"]["batches"]["$ne"] for s in sent]
        assert refused["updates"][0]["q"]["batches"]["$ne"] == batch_ids[0]  # sent again with its id
        assert len(set(batch_ids)) == 2  # then the new counts as a batch of their own
        assert _counter_row(backend)["completed"] == 2
    finally:
        await m.close()

"""A console read that reaches its ``maxTimeMS`` on the server.

DRIVER LEVEL: a real ``MongoStore`` over the scripted wire server, which answers the read
with error 50 ``MaxTimeMSExpired``, as the manual says a server does when an operation
runs past the ``maxTimeMS`` it was sent
(https://www.mongodb.com/docs/manual/reference/method/cursor.maxTimeMS/,
https://www.mongodb.com/docs/manual/reference/error-codes/). This proves that the store
sends the limit and turns the reply into the console's one-line error with advice; how
long a read takes on a server is not exercised.
"""

from __future__ import annotations

import pytest

from monque_engine.errors import AggregationTimeoutError
from monque_engine.store.base import StoreListFilter
from monque_engine.store.mongo import documents as q
from wire import Error, WireServer
from wire.store import open_store, script_collection

EXPIRED = Error(50, "operation exceeded time limit", "MaxTimeMSExpired")


async def test_a_listing_page_past_its_time_limit_says_how_to_narrow_it(wire_server: WireServer) -> None:
    script_collection(wire_server)
    wire_server.reply("find", EXPIRED)
    store = await open_store(wire_server)
    try:
        with pytest.raises(AggregationTimeoutError) as info:
            await store.page(StoreListFilter(), q.JobSort(), "forward", None, 50)
    finally:
        await store.close()
    assert wire_server.commands("find")[0]["maxTimeMS"] == q.LIST_MAX_TIME_MS
    text = str(info.value)
    assert "list a page of jobs" in text and "exceeded its time limit" in text and q.LIST_TIMEOUT_HINT in text


async def test_a_count_and_the_statistics_past_their_time_limit_are_the_same_error(wire_server: WireServer) -> None:
    script_collection(wire_server)
    wire_server.handle("aggregate", lambda request: EXPIRED)
    store = await open_store(wire_server)
    try:
        with pytest.raises(AggregationTimeoutError):
            await store.count(StoreListFilter(name="email"))
        with pytest.raises(AggregationTimeoutError):
            await store.stats(None)
    finally:
        await store.close()
    count, *statistics = [request["maxTimeMS"] for request in wire_server.commands("aggregate")]
    assert count == q.LIST_MAX_TIME_MS
    assert statistics and set(statistics) == {q.STATS_MAX_TIME_MS}

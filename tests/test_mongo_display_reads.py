"""The console's read preference on MongoDB (issue 27 item 3): off by default, display
reads only, and how stale they may be. FAKES: the evaluator adapter records
``with_options``; the staleness comes from PyMongo's own ``ServerDescription`` objects
built from ``hello`` replies, as the driver's monitor builds them."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from pymongo.hello import Hello
from pymongo.read_preferences import SecondaryPreferred
from pymongo.server_description import ServerDescription
from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine.job import JobSort
from monque_engine.store.base import StoreListFilter
from monque_engine.store.mongo.read_preference import secondary_staleness_s


def _recording(adapter: Any) -> list[Any]:
    preferences: list[Any] = []

    def with_options(read_preference: Any = None, **_: Any) -> Any:
        preferences.append(read_preference)
        return adapter

    adapter.with_options = with_options
    return preferences


async def test_display_reads_stay_on_the_primary_by_default() -> None:
    store, adapter = evaluator_store()
    preferences = _recording(adapter)
    await store.stats(None)
    await store.count(StoreListFilter())
    assert preferences == [] and store.display_staleness_s() is None


async def test_secondary_preferred_applies_to_display_reads_only() -> None:
    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))
    preferences = _recording(adapter)
    store.set_display_read_preference("secondaryPreferred")
    await store.page(StoreListFilter(), JobSort("created_at", "desc"), "forward", None, 10)
    await store.count(StoreListFilter(statuses=None))
    await store.stats("email")
    await store.names()
    await store.pending_health(0)
    assert len(preferences) >= 5
    assert all(p == SecondaryPreferred(max_staleness=90) for p in preferences)
    preferences.clear()
    await store.get(oid(1))
    await store.get_many([oid(1)])
    await store.claim("email", "w", 10_000, 1, 30_000)
    assert preferences == []  # reads that decide writes, and re-reads by id, stay on the primary
    with pytest.raises(ValueError, match="use one of primary, secondaryPreferred"):
        store.set_display_read_preference("nearest")


def _member(kind: str, last_write: datetime, updated: float) -> ServerDescription:
    reply: dict[str, Any] = {"ok": 1, "setName": "rs0", "hosts": ["a:1", "b:1"], "maxWireVersion": 21}
    reply["isWritablePrimary" if kind == "primary" else "secondary"] = True
    reply["lastWrite"] = {"lastWriteDate": last_write}
    description = ServerDescription(("a" if kind == "primary" else "b", 1), Hello(reply))
    description._last_update_time = updated  # when the monitor heard this reply (monotonic)
    return description


class _Topology:
    def __init__(self, *servers: ServerDescription) -> None:
        self._servers = {s.address: s for s in servers}

    def server_descriptions(self) -> dict[Any, ServerDescription]:
        return self._servers


def test_staleness_follows_the_max_staleness_formula() -> None:
    t0 = datetime(2026, 12, 1, 12, 0, 0)
    primary = _member("primary", t0 + timedelta(seconds=30), updated=1000.0)
    secondary = _member("secondary", t0 + timedelta(seconds=18), updated=1001.0)
    # (S.update − S.lastWrite) − (P.update − P.lastWrite) + heartbeat = (1001−18) − (1000−30) + 10 = 23
    assert secondary_staleness_s(_Topology(primary, secondary), 10.0) == pytest.approx(23.0)
    assert secondary_staleness_s(_Topology(primary), 10.0) is None  # no secondary: reads go to the primary

"""A worker with N free slots claims them in waves of concurrent claims, not N sequential
round trips (issue 36 item 6). FAKES: the store's claims run against the mongomock
evaluator (tests/test_mongo_evaluator.py); each claim awaits once, as the driver awaits its
reply, so the claims of one wave are in flight together. A server's ``w:majority`` latency
is not measured here: the number of sequential round trips is what is counted."""

from __future__ import annotations

import asyncio
from typing import Any

from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine.job import JobStatus
from monque_engine.store.mongo.claims import CLAIM_WAVE_MAX


class RoundTrips:
    """Wraps the adapter's ``find_one_and_update``: counts sequential round trips (a call
    that starts while none is in flight begins one) and the most in flight at once."""

    def __init__(self, adapter: Any) -> None:
        self.original = adapter.find_one_and_update
        self.in_flight = 0
        self.peak = 0
        self.trips = 0
        self.calls = 0
        adapter.find_one_and_update = self

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.in_flight == 0:
            self.trips += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0)  # the reply is awaited: the wave's other claims start meanwhile
            return await self.original(*args, **kwargs)
        finally:
            self.in_flight -= 1


async def test_ten_free_slots_are_claimed_in_four_round_trips_not_ten() -> None:
    store, adapter = evaluator_store()
    for n in range(1, 11):
        await store.insert(new_job(oid(n), run_at=n))
    trips = RoundTrips(adapter)
    claimed = await store.claim("email", "me", 1_000, 10, 30_000)
    assert sorted(j.id for j in claimed) == [oid(n) for n in range(1, 11)]
    assert all(j.status is JobStatus.PROCESSING and j.claimed_by == "me" for j in claimed)
    assert (trips.trips, trips.peak, trips.calls) == (4, 4, 10)  # waves of 1, 2, 4, 3


async def test_a_wave_holds_at_most_claim_wave_max_connections() -> None:
    store, adapter = evaluator_store()
    for n in range(1, 41):
        await store.insert(new_job(oid(n), run_at=n))
    trips = RoundTrips(adapter)
    assert len(await store.claim("email", "me", 1_000, 40, 30_000)) == 40
    assert trips.peak == CLAIM_WAVE_MAX and trips.trips == 6  # 1, 2, 4, 8, 16, 9


async def test_two_workers_claiming_in_waves_never_claim_one_job_twice() -> None:
    """Each claim is still one atomic findOneAndUpdate guarded by ``status: pending``: two
    workers' overlapping waves split the due jobs, none claimed by both, none left."""
    first, adapter = evaluator_store()
    second, other = evaluator_store(adapter.sync)
    for n in range(1, 16):
        await first.insert(new_job(oid(n), run_at=n))
    RoundTrips(adapter)
    RoundTrips(other)
    a, b = await asyncio.gather(
        first.claim("email", "w1", 1_000, 10, 30_000), second.claim("email", "w2", 1_000, 10, 30_000)
    )
    ids_a, ids_b = {j.id for j in a}, {j.id for j in b}
    assert not ids_a & ids_b
    assert ids_a | ids_b == {oid(n) for n in range(1, 16)}
    owners = {str(d["_id"]): d["claimedBy"] for d in adapter.sync.find({})}
    assert {owners[j.id] for j in a} == {"w1"} and {owners[j.id] for j in b} == {"w2"}

"""Writes that partly happen on MongoDB (issue 27 item 14). FAKES: mongomock evaluates the
claims; errors are PyMongo's and bson's own exception types, raised where the driver
raises them (a BulkWriteError after an unordered bulk applied the other operations; an
InvalidBSON while decoding a reply to a write that was applied)."""

from __future__ import annotations

from typing import Any

import pytest
from bson.errors import InvalidBSON
from pymongo.errors import BulkWriteError
from test_mongo_evaluator import evaluator_store, new_job, oid
from test_mongo_fleet import fleet_store

from monque_engine.store.mongo.fleet import PartialCounterWriteError


async def test_a_partly_applied_counter_write_names_only_what_was_not_applied() -> None:
    store, _, database = fleet_store()
    side = database["monque_jobs_counters"]

    async def bulk_write(requests: Any, ordered: bool = True, **kw: Any) -> Any:
        assert ordered is False
        for i, request in enumerate(requests):
            if i != 1:
                side.sync.update_one(request._filter, request._doc, upsert=True)
        raise BulkWriteError({"writeErrors": [{"index": 1, "code": 112, "errmsg": "WriteConflict"}], "nUpserted": 2})

    side.bulk_write = bulk_write  # type: ignore[method-assign]
    counts = {("email", 10): (3, 0), ("sms", 10): (1, 1), ("push", 10): (0, 2)}
    with pytest.raises(PartialCounterWriteError) as info:
        await store.add_outcome_counts(counts)
    assert info.value.unapplied == {("sms", 10): (1, 1)}  # the other two are stored: not again


async def test_a_claim_whose_reply_cannot_be_decoded_keeps_the_jobs_already_claimed() -> None:
    store, adapter = evaluator_store()
    for n in (1, 2, 3):
        await store.insert(new_job(oid(n), run_at=1_000 + n))
    calls = [0]

    def second_fails(args: Any, kwargs: Any) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise InvalidBSON("invalid document length")

    adapter.before_find_one_and_update = second_fails
    jobs = await store.claim("email", "w1", 10_000, 3, 30_000)
    # Claims 1 and 3 (the second wave runs claims 2 and 3 together) committed as ours:
    # returned to run, not orphaned; no wave starts after the failure.
    assert [job.id for job in jobs] == [oid(1), oid(2)]
    assert calls[0] == 3

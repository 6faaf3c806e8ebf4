"""MongoDB documents for time limits (issue 37 part 1, ADR 0019), through the store's own
methods over the query evaluator (mongomock; no server): a job's own limit is a field of
ours, ``timeoutMs``, after upstream's; the over-limit stamp ``overLimitAt`` is written only
on a job its owner still holds; a Node document without them reads as having no limit."""

from __future__ import annotations

import dataclasses

from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine.job import Job, JobStatus

UPSTREAM_NEW_JOB = ["_id", "name", "data", "status", "nextRunAt", "failCount", "createdAt", "updatedAt"]


async def test_a_job_s_own_limit_is_stored_after_upstream_s_fields_and_read_back() -> None:
    store, adapter = evaluator_store()
    limited = dataclasses.replace(new_job(oid(1)), timeout_ms=2500)
    await store.insert(limited)
    await store.insert_many([dataclasses.replace(new_job(oid(2)), timeout_ms=700), new_job(oid(3))])
    by_id = {str(doc["_id"]): doc for doc in adapter.sync.find({})}
    assert list(by_id[oid(1)]) == [*UPSTREAM_NEW_JOB, "timeoutMs"] and by_id[oid(1)]["timeoutMs"] == 2500
    assert by_id[oid(2)]["timeoutMs"] == 700 and "timeoutMs" not in by_id[oid(3)]
    [claimed_first, claimed_second, claimed_third] = await store.claim("email", "me", 2_000, 3, 30_000)
    limits = {job.id: job.timeout_ms for job in (claimed_first, claimed_second, claimed_third)}
    assert limits == {oid(1): 2500, oid(2): 700, oid(3): None}


async def test_the_over_limit_stamp_is_written_only_for_the_owner_s_processing_job() -> None:
    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))
    [job] = await store.claim("email", "me", 2_000, 1, 30_000)
    assert await store.mark_over_limit(job.id, "someone-else", 3_000) is False
    assert await store.mark_over_limit(job.id, "me", 3_000) is True
    stored = Job.from_document(adapter.sync.find_one({}))
    assert stored is not None and stored.over_limit_at_ms == 3_000 and stored.over_limit
    assert stored.status is JobStatus.PROCESSING and stored.claimed_by == "me"
    assert await store.mark_over_limit("not-an-id", "me", 3_000) is False


def test_a_node_document_without_our_fields_has_no_limit_and_bad_values_read_as_none() -> None:
    base = {"_id": oid(1), "name": "email", "status": "pending", "nextRunAt": 1_000, "createdAt": 500}
    assert Job.from_document(base).timeout_ms is None
    for bad in ("5000", -1, 0, float("nan"), True, 10**15):
        assert Job.from_document({**base, "timeoutMs": bad}).timeout_ms is None, bad
    assert Job.from_document({**base, "timeoutMs": 1500.0}).timeout == 1.5

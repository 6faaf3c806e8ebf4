"""MongoDB: the completion writes the handler's ``result`` (issue 38, ADR 0020).

Checked with mongomock as a query-language evaluator (no server; test_mongo_evaluator.py);
the contract suite (contract/claims/test_results_and_wait.py) runs on a real server when
MONQUE_TEST_MONGODB_URI is set.
"""

from __future__ import annotations

from pymongo import ReturnDocument
from test_mongo_evaluator import evaluator_collection, new_job, oid

from monque_engine.job import Job, JobStatus
from monque_engine.store.mongo import claims


def _claimed(c, n: int, **fields):
    job = new_job(oid(n)).to_job().replace(status=JobStatus.PROCESSING, claimed_by="me", locked_at_ms=100, **fields)
    c.insert_one(job.to_document())


def test_one_off_completion_sets_the_result_and_none_writes_none() -> None:
    c = evaluator_collection()
    _claimed(c, 1)
    _claimed(c, 2)
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"),
        claims.complete_update(200, None, None, {"rows": [1, 2], "ok": True}),
        return_document=ReturnDocument.AFTER,
    )
    assert doc["status"] == "completed" and doc["result"] == {"rows": [1, 2], "ok": True}
    assert Job.from_document(doc).result == {"rows": [1, 2], "ok": True}
    doc = c.find_one_and_update(
        claims.owned_filter(oid(2), "me"), claims.complete_update(200, None), return_document=ReturnDocument.AFTER
    )
    assert "result" not in doc and Job.from_document(doc).result is None
    # upstream's completion fields are untouched when there is no result
    assert claims.complete_update(200, None)["$set"] == {"status": "completed", "updatedAt": claims.dt(200)}


def test_recurring_run_replaces_or_removes_the_last_runs_result() -> None:
    c = evaluator_collection()
    _claimed(c, 1, repeat_interval="* * * * *", result=7)
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"),
        claims.complete_update(200, 60_000, None, 8),
        return_document=ReturnDocument.AFTER,
    )
    assert doc["status"] == "pending" and doc["result"] == 8
    c.update_one({"_id": doc["_id"]}, {"$set": {"status": "processing", "claimedBy": "me"}})
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"), claims.complete_update(300, 120_000), return_document=ReturnDocument.AFTER
    )
    assert "result" not in doc

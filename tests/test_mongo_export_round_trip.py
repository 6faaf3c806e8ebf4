"""An export restored into MongoDB is the same documents (issue 34). FAKES: mongomock evaluates
the documents (no server here); the contract round trip (contract/reads/test_export_round_trip.py)
runs the whole ``export_jobs`` → ``read_export`` → ``import_jobs`` path on a real one.

The jobs are the import contract's samples (one per status, failures with attempt history,
error type and group, a processing job's owner and heartbeat interval) and a Node producer's
job due beyond the year 9999, which the export writes as ``{"$date": {"$numberLong": …}}``.
"""

from __future__ import annotations

import json

from job_samples import oid, sample_jobs
from test_mongo_evaluator import evaluator_store

from monque_engine import Job, JobStatus
from monque_engine.export import export_document
from monque_engine.restore import read_export
from monque_engine.timeutil import MAX_MS


def _jobs() -> list[Job]:
    far = Job(oid(9), "node.far", {"n": [1, 2.5]}, JobStatus.PENDING, MAX_MS + 86_400_000, 1_000, 2_000)
    return [*sample_jobs(), far]


async def test_an_export_imported_into_mongodb_is_the_same_documents() -> None:
    source, source_docs = evaluator_store()
    await source.import_jobs(_jobs())
    stored = [await source.get(job.id) for job in _jobs()]
    lines = [json.dumps(export_document(job)) for job in stored if job is not None]
    assert json.loads(lines[-1])["nextRunAt"] == {"$date": {"$numberLong": str(MAX_MS + 86_400_000)}}

    target, target_docs = evaluator_store()
    restored = list(read_export(lines))
    assert await target.import_jobs(restored) == len(stored)
    for job in stored:
        assert job is not None
        assert await target.get(job.id) == job
    by_id = {doc["_id"]: doc for doc in target_docs.sync.find()}
    for doc in source_docs.sync.find():
        assert by_id[doc["_id"]] == doc  # attempts (BSON dates, durationMs), errorType, errorGroup: all of it
    failed = by_id[next(doc["_id"] for doc in source_docs.sync.find({"status": "failed"}))]
    assert failed["errorGroup"] and failed["attempts"][0]["errorType"] == "httpx.ConnectTimeout"

"""What the console's statistics reads cost on MongoDB (issue 27 item 3). STATIC + FAKE.

A console refreshes its counts every 2–3 s; at 10M jobs a read that touches every
document runs into the 30 s limit and pushes the workers' working set out of the cache.
Checked here without a server: every statistics aggregation either reads index keys only
(it names no field outside the index it hints, so the plan is covered) or reads a bounded
number of documents (a ``$limit`` before its ``$group``). The pipelines' results are
evaluated by mongomock (a query-language evaluator). Whether the server really chooses the
covered plan is for a real server's ``explain`` (see docs/scale-out.md).
"""

from __future__ import annotations

from typing import Any

from test_mongo_documents import _job
from test_mongo_evaluator import evaluator_collection, evaluator_store

from monque_engine.job import JobStatus
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import reads as mongo_reads
from monque_engine.store.mongo.indexes import index_specs


def _fields(node: Any) -> set[str]:
    """Top-level field names a pipeline reads: $match / $sort keys and "$field" references."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if not key.startswith("$") and key != "_id":
                found.add(key.split(".")[0])
            found |= _fields(value)
    elif isinstance(node, list):
        for value in node:
            found |= _fields(value)
    elif isinstance(node, str) and node.startswith("$") and not node.startswith("$$"):
        found.add(node[1:].split(".")[0])
    return found


def _pipeline_fields(pipeline: list[dict[str, Any]]) -> set[str]:
    fields: set[str] = set()
    for stage in pipeline:
        ((op, body),) = stage.items()
        if op == "$group":
            fields |= _fields(list(body.values()))  # output names are not reads
        else:
            fields |= _fields(body)
    return fields


def _is_bounded(pipeline: list[dict[str, Any]]) -> bool:
    ops = [next(iter(stage)) for stage in pipeline]
    return "$limit" in ops and ops.index("$limit") < ops.index("$group")


def test_count_pipelines_read_only_the_keys_of_the_index_they_hint() -> None:
    for pipeline, hint in (
        mongo_reads.status_counts_pipeline(None),
        mongo_reads.status_counts_pipeline("email"),
        mongo_reads.counts_by_name_pipeline(),
        (mongo_reads.pending_health_pipeline(0), mongo_reads.PENDING_HEALTH_HINT),
    ):
        assert _pipeline_fields(pipeline) <= {key for key, _ in hint}, pipeline
        assert hint in [keys for keys, _ in index_specs(False)]


def test_the_average_reads_a_bounded_sample_of_completed_jobs_only() -> None:
    for name in (None, "email"):
        pipeline = mongo_reads.completed_duration_pipeline(name)
        assert pipeline[0]["$match"]["status"] == "completed"
        assert _is_bounded(pipeline) and pipeline[2] == {"$limit": mongo_reads.AVG_SAMPLE}


async def test_every_aggregation_the_stats_reads_send_is_covered_or_bounded() -> None:
    collection = evaluator_collection()
    collection.insert_many(
        [_job(n=n, status=JobStatus.COMPLETED, created_at_ms=1_000, updated_at_ms=1_000 + n) for n in range(1, 4)]
    )
    store, adapter = evaluator_store(collection)
    await store.stats(None)
    await store.stats("email")
    await store.stats_by_name()
    await store.pending_health(10_000)
    calls = [(args[0], kwargs) for name, args, kwargs in adapter.calls if name == "aggregate"]
    assert len(calls) == 7
    for pipeline, kwargs in calls:
        assert kwargs["maxTimeMS"] == q.STATS_MAX_TIME_MS
        if "hint" in kwargs:
            assert _pipeline_fields(pipeline) <= {key for key, _ in kwargs["hint"]}, pipeline
        else:
            assert _is_bounded(pipeline), pipeline


async def test_the_average_is_over_the_most_recent_completed_jobs(monkeypatch: Any) -> None:
    monkeypatch.setattr(mongo_reads, "AVG_SAMPLE", 20)  # the same rule as 1,000, at a size mongomock evaluates fast
    collection = evaluator_collection()
    old = [_job(n=n, status=JobStatus.COMPLETED, created_at_ms=0, updated_at_ms=1_000_000 + n) for n in range(1, 11)]
    recent = [
        _job(n=100 + n, status=JobStatus.COMPLETED, created_at_ms=2_000_000, updated_at_ms=2_000_100 + n)
        for n in range(mongo_reads.AVG_SAMPLE)
    ]
    collection.insert_many(
        old + recent + [_job(n=5_000, status=JobStatus.FAILED, created_at_ms=0, updated_at_ms=9_000_000)]
    )
    store, _ = evaluator_store(collection)
    stats = await store.stats(None)
    assert (stats.completed, stats.failed, stats.total) == (mongo_reads.AVG_SAMPLE + 10, 1, mongo_reads.AVG_SAMPLE + 11)
    # updatedAt − createdAt of the recent ones only: 100 + n for n in 0..19 → mean 109.5 → 110
    assert stats.avg_processing_duration_ms == 110.0
    assert (await store.stats_by_name())["email"].avg_processing_duration_ms == 110.0

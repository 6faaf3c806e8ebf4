"""Change-stream documents → ChangeEvent, from recorded change documents (as a replica set
sends them), and the watch pipeline's $match evaluated by mongomock (a MongoDB
query-language evaluator, not a stand-in for a real change stream)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import mongomock
from bson import ObjectId, Timestamp

from monque_engine.job import Job, JobStatus
from monque_engine.store.mongo.changes import change_to_event, watch_pipeline

ID = ObjectId("65f0000000000000000000aa")
T0 = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
T1 = datetime(2026, 1, 2, 3, 5, 0, tzinfo=UTC)
TOKEN = {"_data": "8265F0A1B2000000012B042C0100296E5A1004"}
DOC = {
    "_id": ID,
    "name": "email",
    "data": {"to": "a@b"},
    "status": "pending",
    "nextRunAt": T1,
    "failCount": 0,
    "createdAt": T0,
    "updatedAt": T0,
}
NS = {"db": "app", "coll": "monque_jobs"}


def change(op: str, **extra: Any) -> dict[str, Any]:
    return {
        "_id": TOKEN,
        "operationType": op,
        "clusterTime": Timestamp(1767323045, 1),
        "wallTime": T0,
        "ns": NS,
        "documentKey": {"_id": ID},
        **extra,
    }


def test_insert_with_full_document() -> None:
    event = change_to_event(change("insert", fullDocument=DOC))
    assert event is not None
    assert (event.operation, event.job_id, event.token, event.name, event.status, event.next_run_at_ms) == (
        "insert",
        str(ID),
        TOKEN,
        "email",
        JobStatus.PENDING,
        int(T1.timestamp() * 1000),
    )
    assert event.job == Job.from_document(DOC)


def test_insert_without_job_when_caller_does_not_want_it() -> None:
    event = change_to_event(change("insert", fullDocument=DOC), include_job=False)
    assert event is not None and event.job is None and event.name == "email" and event.status is JobStatus.PENDING


def test_update_uses_updated_fields_for_state_and_post_image_for_name() -> None:
    post = {**DOC, "status": "processing", "claimedBy": "w1"}  # looked up later: may be newer than the change
    event = change_to_event(
        change(
            "update",
            updateDescription={
                "updatedFields": {"status": "pending", "nextRunAt": T0, "updatedAt": T0},
                "removedFields": ["claimedBy"],
                "truncatedArrays": [],
            },
            fullDocument=post,
        )
    )
    assert event is not None
    assert (event.operation, event.status, event.next_run_at_ms, event.name) == (
        "update",
        JobStatus.PENDING,
        int(T0.timestamp() * 1000),
        "email",
    )
    assert event.job is not None and event.job.status is JobStatus.PROCESSING


def test_update_without_full_document_or_deleted_since() -> None:
    event = change_to_event(
        change(
            "update",
            updateDescription={"updatedFields": {"status": "completed"}, "removedFields": []},
            fullDocument=None,
        )
    )
    assert event is not None
    assert (event.job, event.name, event.status, event.next_run_at_ms) == (None, None, JobStatus.COMPLETED, None)


def test_update_of_next_run_only_takes_status_from_post_image() -> None:
    event = change_to_event(
        change("update", updateDescription={"updatedFields": {"nextRunAt": T1}, "removedFields": []}, fullDocument=DOC)
    )
    assert (
        event is not None and event.status is JobStatus.PENDING and event.next_run_at_ms == int(T1.timestamp() * 1000)
    )


def test_delete_has_id_and_token_only() -> None:
    event = change_to_event(change("delete"))
    assert event is not None
    assert (event.operation, event.job_id, event.job, event.name, event.status, event.token) == (
        "delete",
        str(ID),
        None,
        None,
        None,
        TOKEN,
    )


def test_replace_maps_to_update_with_the_replacement() -> None:
    replacement = {**DOC, "status": "cancelled"}
    event = change_to_event(change("replace", fullDocument=replacement))
    assert event is not None and event.operation == "update" and event.status is JobStatus.CANCELLED
    assert event.job == Job.from_document(replacement)


def test_non_job_documents_and_other_operations() -> None:
    event = change_to_event(change("insert", fullDocument={"_id": ID, "hello": "world"}))
    assert event is not None and event.job is None and event.status is None
    assert change_to_event({"_id": TOKEN, "operationType": "invalidate"}) is None
    assert change_to_event(change("drop")) is None


def _evaluate(pipeline: list[dict[str, Any]], changes: list[dict[str, Any]], stages: int | None = None) -> list[str]:
    """Labels of the recorded changes that pass the pipeline's ``$match`` stages (all, or
    the first ``stages`` of them), evaluated by mongomock."""
    c = mongomock.MongoClient().db.changes
    for i, doc in enumerate(changes):
        c.insert_one({**doc, "_id": i, "label": doc["label"]})
    matches = [stage["$match"] for stage in pipeline if "$match" in stage][:stages]
    return [d["label"] for d in c.find({"$and": matches})]


RECORDED = [
    {"label": "insert", "operationType": "insert", "fullDocument": DOC},
    {
        "label": "claim",
        "operationType": "update",
        "fullDocument": {**DOC, "status": "processing"},
        "updateDescription": {"updatedFields": {"status": "processing", "claimedBy": "w", "updatedAt": T0}},
    },
    {
        "label": "heartbeat",
        "operationType": "update",
        "fullDocument": {**DOC, "status": "processing"},
        "updateDescription": {"updatedFields": {"lastHeartbeat": T0, "updatedAt": T0}},
    },
    {
        "label": "reschedule",
        "operationType": "update",
        "fullDocument": DOC,
        "updateDescription": {"updatedFields": {"nextRunAt": T1, "updatedAt": T0}},
    },
    {
        "label": "retry-backoff",
        "operationType": "update",
        "fullDocument": DOC,
        "updateDescription": {"updatedFields": {"status": "pending", "nextRunAt": T1, "failCount": 1}},
    },
    {"label": "delete", "operationType": "delete"},
    {"label": "replace-cancelled", "operationType": "replace", "fullDocument": {**DOC, "status": "cancelled"}},
    {"label": "drop", "operationType": "drop"},
    {"label": "invalidate", "operationType": "invalidate"},
]


def test_evaluator_watch_match_without_status_filter() -> None:
    assert _evaluate(watch_pipeline(True, None), RECORDED) == [
        "insert",
        "claim",
        "reschedule",
        "retry-backoff",
        "delete",
        "replace-cancelled",
        "invalidate",
    ]


def test_evaluator_watch_match_with_pending_filter() -> None:
    assert _evaluate(watch_pipeline(False, (JobStatus.PENDING,)), RECORDED) == [
        "insert",
        "reschedule",
        "retry-backoff",
        "invalidate",
    ]


def test_watch_pipeline_projects_payload_away_only_without_full_document() -> None:
    assert watch_pipeline(False, None)[-1] == {"$project": {"fullDocument.data": 0}}
    assert all("$project" not in stage for stage in watch_pipeline(True, None))


def _paths(node: Any) -> set[str]:
    """Every field path a query document names (keys that are not operators)."""
    if isinstance(node, dict):
        return {k for k in node if not k.startswith("$")} | set().union(*(_paths(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_paths(v) for v in node)) if node else set()
    return set()


def test_first_match_drops_heartbeats_before_any_post_image_lookup() -> None:
    """Issue 11 item 14. The server's optimiser moves a ``$match`` ahead of the
    ``updateLookup`` stage only when it names no ``fullDocument`` path (that stage modifies
    only fullDocument). So the first stage must name only operationType and
    updateDescription, and must already drop heartbeats and claims: they then never cost a
    post-image lookup on any worker's stream."""
    for pipeline in (
        watch_pipeline(True, None),
        watch_pipeline(True, (JobStatus.PENDING,)),
        watch_pipeline(True, (JobStatus.COMPLETED, JobStatus.FAILED)),
    ):
        first = pipeline[0]["$match"]
        assert not any(path.startswith("fullDocument") for path in _paths(first)), first
        assert {p.split(".")[0] for p in _paths(first)} <= {"operationType", "updateDescription"}
        survivors = _evaluate(pipeline, RECORDED, stages=1)
        assert "heartbeat" not in survivors and "invalidate" in survivors
    assert "claim" not in _evaluate(watch_pipeline(True, (JobStatus.PENDING,)), RECORDED, stages=1)
    # A worker's stream looks nothing up at all (test_mongo_worker_feed_load.py), and its one
    # $match drops heartbeats and claims just the same.
    assert "heartbeat" not in _evaluate(watch_pipeline(False, (JobStatus.PENDING,)), RECORDED)
    assert "claim" not in _evaluate(watch_pipeline(False, (JobStatus.PENDING,)), RECORDED)


def test_invalidate_is_not_mapped_to_an_event() -> None:
    """The store itself turns an invalidate into ChangeFeedHistoryLostError (see
    test_mongo_watch.py); the mapping leaves it alone."""
    assert change_to_event({"_id": TOKEN, "operationType": "invalidate"}) is None


RUNNING = [
    {
        "label": label,
        "operationType": "update",
        "fullDocument": {**DOC, "status": "processing"},
        "updateDescription": {"updatedFields": {field: value, "updatedAt": T0}},
    }
    for label, field, value in (
        ("progress", "progress", {"done": 1, "total": 4}),
        ("stop-request", "stopRequestedAt", T0),
        ("over-limit", "overLimitAt", T0),
        ("heartbeat", "lastHeartbeat", T0),
    )
]


def test_an_unfiltered_stream_carries_progress_stop_requests_and_over_limit_stamps() -> None:
    """A console follows a running job's progress, its stop request and its over-limit stamp
    live (the SQLite feed journals all three); the unfiltered stream passed only status and
    nextRunAt updates, so those rows went stale on MongoDB (a review of the MongoDB store).
    Heartbeats stay out, before any post-image lookup."""
    for full_document in (False, True):
        assert _evaluate(watch_pipeline(full_document, None), RUNNING) == ["progress", "stop-request", "over-limit"]
    assert _evaluate(watch_pipeline(True, None), RUNNING, stages=1) == ["progress", "stop-request", "over-limit"]


def test_a_status_filtered_stream_with_documents_carries_stop_requests_as_a_workers_does() -> None:
    for statuses in ((JobStatus.PENDING,), (JobStatus.PROCESSING,)):
        assert _evaluate(watch_pipeline(True, statuses), RUNNING) == ["stop-request"]
        assert _evaluate(watch_pipeline(False, statuses), RUNNING) == ["stop-request"]

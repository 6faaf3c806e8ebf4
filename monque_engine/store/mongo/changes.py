"""The change feed on MongoDB: the ``$changeStream`` pipeline and change document → ChangeEvent.

Upstream watches inserts and updates that touch ``status`` or ``nextRunAt``
(change-stream-handler.ts). We also pass replaces (a ``mongosh`` replaceOne is still a
change an operator wants to see), mapped to ``"update"`` since a job's identity is
unchanged, and deletes, but only on an unfiltered stream (consoles drop rows): a stream
filtered by status (the workers') never sees a delete, since a deleted job is in no
status and a worker has nothing to do about it. With 20 workers a retention purge or a
bulk delete of 1M jobs would otherwise send 1M events to each of them (issue 27).
``invalidate`` always passes: the server sends it when the collection or its database is
dropped or renamed, then closes the cursor; the store must see it to tell the caller to
reopen without the old token.

The post-image is looked up (``fullDocument: "updateLookup"``, one read of the current
document on the primary per surviving update event) only where the caller wants the job
(``needs_post_image``). A console (no job, no status filter) re-reads the rows it shows by
id. Where the lookup runs, the pipeline filters in two ``$match`` stages: the first names
only ``operationType`` and ``updateDescription``, which the post-image lookup does not
modify, so the server's optimiser runs it *before* the lookup and heartbeat-only updates
(``lastHeartbeat`` and ``updatedAt``) and claims are dropped without one; only the second,
for the few events that survive, needs ``fullDocument``. When the caller does not want the
job we project the payload away, so the feed stays small however large the payloads are.

A worker's stream (filtered by status, no job wanted: ``worker_pipeline``) does without
the lookup too (issue 36 item 2): a bulk retry of 100k jobs used to cost 100k primary
reads per worker, each sending up to 10 attempt records of 16 KB. It is projected down to
what a wake-up needs (the token, the operation, the document key, an insert's or
replace's ``name``/``status``/``nextRunAt``, and the update's ``status``, ``nextRunAt``
and ``STOP_REQUEST_FIELD``), and filtered by the worker's registered names where the event
carries a name (inserts and replaces). An update that sets ``status`` carries no name:
it passes, and the scheduler wakes every registered name (a claim that finds nothing is
one indexed read). An update that sets ``STOP_REQUEST_FIELD`` passes whatever the job's
status or name: the owner must hear a request to stop its running job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...job import STATUS_BY_VALUE, ChangeEvent, ChangeOperation, Job, JobStatus
from ...timeutil import datetime_to_ms
from .documents import STOP_REQUEST_FIELD, Document

_OPERATION: dict[str, ChangeOperation] = {
    "insert": "insert",
    "update": "update",
    "replace": "update",
    "delete": "delete",
}
_STATUS = "updateDescription.updatedFields.status"
_NEXT_RUN = "updateDescription.updatedFields.nextRunAt"
_STOP = f"updateDescription.updatedFields.{STOP_REQUEST_FIELD}"
#: A running job's progress report and its over-limit stamp: a console shows both, and the
#: SQLite feed journals both; an unfiltered stream passes them (heartbeats stay out).
_PROGRESS = "updateDescription.updatedFields.progress"
_OVER_LIMIT = "updateDescription.updatedFields.overLimitAt"
#: What a worker's wake-up reads from an event (``worker_pipeline``); the driver keeps the
#: token (``_id``) itself and a change stream refuses a ``$project`` that drops it.
WORKER_PROJECTION: Document = {
    "_id": 1,
    "operationType": 1,
    "documentKey": 1,
    "fullDocument.name": 1,
    "fullDocument.status": 1,
    "fullDocument.nextRunAt": 1,
    _STATUS: 1,
    _NEXT_RUN: 1,
    _STOP: 1,
}
#: Events that pass on their operation alone (no post-image involved).
_WHOLE = ["insert", "replace", "delete", "invalidate"]
#: The same on a status-filtered stream: no deletes (a deleted job is in no status).
_WHOLE_FILTERED = ["insert", "replace", "invalidate"]


def needs_post_image(full_document: bool, statuses: tuple[JobStatus, ...] | None) -> bool:
    """Whether the stream must look up each update's post-image (see the module docstring):
    only when the caller wants the job; ``statuses`` no longer needs it (issue 36 item 2)."""
    return full_document


def worker_pipeline(statuses: tuple[JobStatus, ...], names: tuple[str, ...] | None) -> list[Document]:
    """A worker's stream: no post-image, names filtered, projected (see the module docstring).

    Passes: ``invalidate``; an insert or replace that left the job in ``statuses`` (and of
    one of ``names``, when given); an update that wrote one of ``statuses``; an update of
    ``nextRunAt`` alone (a reschedule: the job's status and name are not in the event, so
    it passes and the scheduler treats it as possibly pending); an update that set
    ``STOP_REQUEST_FIELD``."""
    wanted = [s.value for s in statuses]
    whole: Document = {"operationType": {"$in": ["insert", "replace"]}, "fullDocument.status": {"$in": wanted}}
    if names is not None:
        whole["fullDocument.name"] = {"$in": list(names)}
    return [
        {
            "$match": {
                "$or": [
                    {"operationType": "invalidate"},
                    whole,
                    {"operationType": "update", _STATUS: {"$in": wanted}},
                    {"operationType": "update", _STATUS: {"$exists": False}, _NEXT_RUN: {"$exists": True}},
                    {"operationType": "update", _STOP: {"$exists": True}},
                ]
            }
        },
        {"$project": dict(WORKER_PROJECTION)},
    ]


def watch_pipeline(
    full_document: bool, statuses: tuple[JobStatus, ...] | None, names: tuple[str, ...] | None = None
) -> list[Document]:
    """The aggregation stages after ``$changeStream`` (see the module docstring); ``names``
    narrows only a status-filtered stream."""
    if statuses is not None and not full_document:
        return worker_pipeline(statuses, names)
    if statuses is None:
        pipeline: list[Document] = [
            {
                "$match": {
                    "$or": [
                        {"operationType": {"$in": _WHOLE}},
                        {
                            "operationType": "update",
                            "$or": [
                                {field: {"$exists": True}}
                                for field in (_STATUS, _NEXT_RUN, _STOP, _PROGRESS, _OVER_LIMIT)
                            ],
                        },
                    ]
                }
            }
        ]
    else:
        wanted = [s.value for s in statuses]
        # "Changes that left a job in one of them": the status the change wrote when it
        # wrote one, else the job's current status (a nextRunAt-only update, e.g. reschedule).
        pipeline = [
            {
                "$match": {
                    "$or": [  # before the post-image lookup: no fullDocument here
                        {"operationType": {"$in": _WHOLE_FILTERED}},
                        {"operationType": "update", _STATUS: {"$in": wanted}},
                        {"operationType": "update", _STATUS: {"$exists": False}, _NEXT_RUN: {"$exists": True}},
                        {"operationType": "update", _STOP: {"$exists": True}},  # its owner hears it, as a worker's
                    ]
                }
            },
            {
                "$match": {
                    "$or": [  # after it: inserts, replaces and nextRunAt-only updates by status
                        {"operationType": "invalidate"},
                        {_STATUS: {"$exists": True}},
                        {_STOP: {"$exists": True}},
                        {"fullDocument.status": {"$in": wanted}},
                    ]
                }
            },
        ]
        if names is not None:
            pipeline.append(
                {"$match": {"$or": [{"operationType": "invalidate"}, {"fullDocument.name": {"$in": list(names)}}]}}
            )
    if not full_document:
        pipeline.append({"$project": {"fullDocument.data": 0}})
    return pipeline


def _ms(value: Any) -> int | None:
    try:
        return None if value is None else datetime_to_ms(value)
    except (TypeError, AttributeError):
        return None  # not a date (a hand-edited document): unknown rather than a crash


def change_to_event(change: Mapping[str, Any], include_job: bool = True) -> ChangeEvent | None:
    """Map one change-stream document to a ChangeEvent; None for operations we do not map
    (``drop``, ``rename``, ``invalidate`` …: the caller decides what those mean)."""
    operation = _OPERATION.get(change.get("operationType", ""))
    if operation is None:
        return None
    key = change.get("documentKey") or {}
    job_id = str(key.get("_id")) if key.get("_id") is not None else ""
    full = change.get("fullDocument")
    updated = (change.get("updateDescription") or {}).get("updatedFields") or {}

    job: Job | None = None
    if include_job and isinstance(full, Mapping) and operation != "delete":
        try:
            job = Job.from_document(full)
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
            job = None  # not a Monque job document; still report the change itself

    name = full.get("name") if isinstance(full, Mapping) else None
    status_value = (
        updated.get("status") if "status" in updated else (full.get("status") if isinstance(full, Mapping) else None)
    )
    next_run = (
        updated.get("nextRunAt")
        if "nextRunAt" in updated
        else (full.get("nextRunAt") if isinstance(full, Mapping) else None)
    )
    if operation == "delete":
        name, status_value, next_run = None, None, None
    return ChangeEvent(
        operation=operation,
        job_id=job_id,
        job=job,
        token=change.get("_id"),
        name=name if isinstance(name, str) else None,
        status=STATUS_BY_VALUE.get(status_value) if isinstance(status_value, str) else None,
        next_run_at_ms=_ms(next_run),
        stop_requested=operation == "update" and STOP_REQUEST_FIELD in updated,
    )

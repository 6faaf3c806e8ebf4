"""The Reads port on MongoDB: jobs by id, listings and keyset pages, counts (also in
steps), queue statistics, job names, error groups and the pending health of each name.

Reads that only show something go through ``_display_call`` (a console may send them to
a secondary); every listing and count is bounded by ``maxTimeMS`` and says how to narrow
it when the bound is hit. Statistics come from index keys (hinted, covered plans) and a
bounded sample of recent completions, never from every document.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from bson import ObjectId
from pymongo.asynchronous.collection import AsyncCollection

from ...cursor import CursorAnchor
from ...errorgroups import ErrorGroupRow, fold_buckets, hour_window
from ...job import CursorDirection, Job, JobSort, JobStatus, PendingHealth, QueueStats
from ...timeutil import datetime_to_ms
from ...timeutil import now_ms as clock_ms
from ..base import PendingSplit, StepCount, StoreListFilter, StoreSelector
from . import documents as q
from .documents import COMPLETED, PENDING, PROCESSING, Document, dt, error_member_filter
from .indexes import ERROR_GROUPS_KEYS
from .plumbing import MongoPlumbing, _ms_or_none, _valid

#: The Monque statuses (a document's status written by hand may be anything else).
_STATUS_VALUES = frozenset(status.value for status in JobStatus)


FIND_SORT: list[tuple[str, int]] = [("nextRunAt", 1), ("_id", 1)]
NO_DATA_PROJECTION: Document = {"data": 0}
#: Every BSON date sorts at or after this one, and strings, numbers, null and a missing
#: field sort before any date (BSON comparison order), so ``$gte`` against it means "is a date".
_EARLIEST_DATE = datetime(1, 1, 1, tzinfo=UTC)
#: updatedAt − createdAt of a completed job; 0 where either is not a date (a hand-written
#: document must not fail the whole aggregation with "can't $subtract").
_DURATION = {
    "$cond": [
        {
            "$and": [
                {"$eq": ["$status", COMPLETED]},
                {"$gte": ["$updatedAt", _EARLIEST_DATE]},
                {"$gte": ["$createdAt", _EARLIEST_DATE]},
            ]
        },
        {"$subtract": ["$updatedAt", "$createdAt"]},
        0,
    ]
}
#: The average processing duration is taken over this many completed jobs, the most
#: recently updated first (issue 27): a bounded read of documents that were just written
#: (hot in the cache), where upstream sums a duration over every document at every refresh.
#: Below this many completed jobs it is upstream's average exactly.
AVG_SAMPLE = 1000
#: Counts come from a scan of index keys only (a covered plan: the pipeline needs no field
#: outside the hinted index, so no document is read); the hint makes the planner take it
#: rather than a collection scan for an empty ``$match``.
STATUS_COUNT_HINT: list[tuple[str, int]] = [("status", 1), ("nextRunAt", 1)]
NAME_STATUS_COUNT_HINT: list[tuple[str, int]] = [("name", 1), ("status", 1)]


def status_counts_pipeline(name: str | None) -> tuple[list[Document], list[tuple[str, int]]]:
    """(pipeline, hint): documents per status (of one name), from index keys alone. Every
    document has a key in both hinted indexes (neither is sparse nor partial), so the
    total still counts documents whose status is not a Monque status, as upstream."""
    group = {"$group": {"_id": "$status", "count": {"$sum": 1}}}
    if name is None:
        return [{"$sort": {"status": 1}}, group], STATUS_COUNT_HINT
    return [{"$match": {"name": name}}, {"$sort": {"name": 1, "status": 1}}, group], NAME_STATUS_COUNT_HINT


def matched_status_pipeline(query: Document) -> list[Document]:
    """Documents per status among those ``query`` matches: a count in steps answered in one
    (``MongoReads.count_in_steps``), bounded by ``maxTimeMS`` like the listing's count."""
    return [{"$match": query}, {"$group": {"_id": "$status", "count": {"$sum": 1}}}]


def counts_by_name_pipeline() -> tuple[list[Document], list[tuple[str, int]]]:
    """(pipeline, hint): documents per (name, status), from the ``{name, status}`` index's keys."""
    return [
        {"$sort": {"name": 1, "status": 1}},
        {"$group": {"_id": {"name": "$name", "status": "$status"}, "count": {"$sum": 1}}},
    ], NAME_STATUS_COUNT_HINT


def completed_duration_pipeline(name: str | None) -> list[Document]:
    """The summed duration (updatedAt − createdAt, so it includes queue wait, as upstream's
    avgProcessingDurationMs) of the ``AVG_SAMPLE`` most recently updated completed jobs
    (of one name): ``{status, updatedAt, _id}`` or ``{name, updatedAt, _id}`` serves it."""
    match: Document = {"status": COMPLETED} if name is None else {"name": name, "status": COMPLETED}
    return [
        {"$match": match},
        {"$sort": {"updatedAt": -1, "_id": -1}},
        {"$limit": AVG_SAMPLE},
        {"$group": {"_id": None, "count": {"$sum": 1}, "durationMs": {"$sum": _DURATION}}},
    ]


#: The errors view's grouping reads only this index's keys (``error_groups_pipeline``); the
#: hint keeps the planner from a name's {name, status} index, which would fetch documents.
ERROR_GROUPS_HINT: list[tuple[str, int]] = list(ERROR_GROUPS_KEYS)


def error_groups_pipeline(name: str | None, since_ms: int | None, now_ms: int) -> list[Document]:
    """Members grouped by ``errorGroup`` and minute of their last failure within the hour
    (``-1`` before it); the store folds the minutes (``errorgroups.fold_buckets``). The
    ``$match`` implies the partial ``ERROR_GROUPS_KEYS`` index's filter, and every field
    the pipeline reads is a key of that index: an index-only plan, no document fetched."""
    hour_start = dt(hour_window(now_ms))
    match: Document = {"errorGroup": {"$exists": True}, **error_member_filter()}
    if name is not None:
        match["name"] = name
    if since_ms is not None:
        match["updatedAt"] = {"$gte": dt(since_ms)}
    bucket = {
        "$cond": [
            {"$gte": ["$updatedAt", hour_start]},
            {"$floor": {"$divide": [{"$subtract": ["$updatedAt", hour_start]}, 60_000]}},
            -1,
        ]
    }
    return [
        {"$match": match},
        {
            "$group": {
                "_id": {"group": "$errorGroup", "bucket": bucket},
                "name": {"$first": "$name"},
                "errorType": {"$max": "$errorType"},
                "count": {"$sum": 1},
                "retrying": {"$sum": {"$cond": [{"$eq": ["$status", PENDING]}, 1, 0]}},
                "first": {"$min": "$updatedAt"},
                "last": {"$max": "$updatedAt"},
            }
        },
    ]


#: Every field pending_health_pipeline reads is a key of upstream's claim index, so the
#: hinted plan reads index keys only (no document); with ``name`` unbounded the scan seeks
#: from one name's pending/processing keys to the next, skipping finished jobs' keys.
PENDING_HEALTH_HINT: list[tuple[str, int]] = [("name", 1), ("status", 1), ("nextRunAt", 1), ("claimedBy", 1)]


def pending_split_filters(name: str, now_ms: int) -> tuple[Document, Document, Document]:
    """Pending jobs of ``name``: due by ``now_ms``, due later, and all with a date nextRunAt.
    ``name``, ``status`` and ``nextRunAt`` are the leading fields of the
    {name, status, nextRunAt, claimedBy} index, so each is a bounded index range (the counts
    are run with a ``limit``, the earliest and latest are one index entry each)."""
    now = dt(now_ms)
    return (
        {"name": name, "status": PENDING, "nextRunAt": {"$lte": now}},
        {"name": name, "status": PENDING, "nextRunAt": {"$gt": now}},
        {"name": name, "status": PENDING, "nextRunAt": {"$type": "date"}},
    )


def pending_health_pipeline(now_ms: int) -> list[Document]:
    """Pending and processing jobs by name: due now, due later, oldest due, processing.
    Run with ``PENDING_HEALTH_HINT`` (issue 27: it used to fetch every pending document)."""
    now = dt(now_ms)
    due = {"$and": [{"$eq": ["$status", PENDING]}, {"$lte": ["$nextRunAt", now]}]}
    return [
        {"$match": {"status": {"$in": [PENDING, PROCESSING]}}},
        {
            "$group": {
                "_id": "$name",
                "due": {"$sum": {"$cond": [due, 1, 0]}},
                "scheduled": {
                    "$sum": {"$cond": [{"$and": [{"$eq": ["$status", PENDING]}, {"$gt": ["$nextRunAt", now]}]}, 1, 0]}
                },
                "oldestDue": {"$min": {"$cond": [due, "$nextRunAt", None]}},
                "processing": {"$sum": {"$cond": [{"$eq": ["$status", PROCESSING]}, 1, 0]}},
            }
        },
        {"$sort": {"_id": 1}},
    ]


class MongoReads(MongoPlumbing):
    """``JobStore``'s read methods on MongoDB (composed into ``MongoStore``)."""

    async def get(self, job_id: str) -> Job | None:
        if not _valid(job_id):
            return None
        return self._job(await self._call("read a job", lambda c: c.find_one({"_id": ObjectId(job_id)})))

    async def get_many(self, job_ids: Sequence[str]) -> dict[str, Job]:
        ids = [ObjectId(job_id) for job_id in dict.fromkeys(job_ids) if _valid(job_id)]
        if not ids:
            return {}
        docs = await self._call("read jobs", lambda c: c.find({"_id": {"$in": ids}}).to_list(None))
        return {job.id: job for job in self._readable(docs)}

    async def find(self, selector: StoreSelector, limit: int, skip: int) -> list[Job]:
        query = await self._selector_query(selector)
        docs = await self._call(
            "list jobs",
            lambda c: (
                c.find(query).sort(FIND_SORT).skip(skip).limit(limit).max_time_ms(q.LIST_MAX_TIME_MS).to_list(None)
            ),
            q.LIST_TIMEOUT_HINT,
        )
        return self._readable(docs)

    async def page(
        self,
        filter: StoreListFilter,
        sort: JobSort,
        direction: CursorDirection,
        anchor: CursorAnchor | None,
        limit: int,
        include_data: bool = True,
    ) -> list[Job]:
        query, order = q.page_query(filter, sort, direction, anchor, await self._suffix_ids(filter))
        projection = None if include_data else NO_DATA_PROJECTION
        docs = await self._display_call(
            "list a page of jobs",
            lambda c: c.find(query, projection).sort(order).limit(limit).max_time_ms(q.LIST_MAX_TIME_MS).to_list(None),
            self._list_hint(filter),
        )
        return self._readable(docs)

    async def count(self, filter: StoreListFilter) -> int:
        query = q.list_filter(filter, await self._suffix_ids(filter))
        return await self._display_call(
            "count jobs",
            lambda c: c.count_documents(query, maxTimeMS=q.LIST_MAX_TIME_MS),
            self._list_hint(filter),
        )

    @staticmethod
    def _stats(rows: Sequence[tuple[Any, int]], sample: Mapping[str, Any] | None) -> QueueStats:
        """Fold per-status counts as upstream getQueueStats does: ``total`` counts every
        document, including ones whose status is not a Monque status, and the average
        (over ``AVG_SAMPLE`` recent completed jobs) is rounded half up to whole ms
        (JavaScript's ``Math.round``)."""
        counts = {status.value: 0 for status in JobStatus}
        total = 0
        for status, count in rows:
            total += int(count)
            if isinstance(status, str) and status in counts:
                counts[status] = int(count)  # else not a Monque status (hand-written document): only in the total
        avg: float | None = None
        if sample is not None and sample.get("count") and counts[q.COMPLETED]:
            avg = float(math.floor(float(sample.get("durationMs") or 0) / int(sample["count"]) + 0.5))
        return QueueStats(**counts, total=total, avg_processing_duration_ms=avg)

    async def _duration_sample(self, name: str | None) -> Mapping[str, Any] | None:
        rows = await self._aggregate(completed_duration_pipeline(name))
        return rows[0] if rows else None

    async def stats(self, name: str | None) -> QueueStats:
        """Counts from index keys, the average from a bounded sample (issue 27: the old
        single aggregation read every document at every console refresh)."""
        pipeline, hint = status_counts_pipeline(name)
        rows, sample = await asyncio.gather(self._aggregate(pipeline, hint), self._duration_sample(name))
        return self._stats([(r["_id"], r["count"]) for r in rows], sample)

    async def stats_by_name(self) -> dict[str, QueueStats]:
        pipeline, hint = counts_by_name_pipeline()
        rows = await self._aggregate(pipeline, hint)
        grouped: dict[str, list[tuple[Any, int]]] = {}
        for row in rows:
            key = row["_id"]
            if isinstance(key.get("name"), str):
                grouped.setdefault(key["name"], []).append((key.get("status"), row["count"]))
        names = sorted(grouped)
        completed = [n for n in names if any(status == q.COMPLETED and count for status, count in grouped[n])]
        samples = dict(
            zip(completed, await asyncio.gather(*(self._duration_sample(n) for n in completed)), strict=True)
        )
        return {name: self._stats(grouped[name], samples.get(name)) for name in names}

    async def names(self) -> list[str]:
        values = await self._display_call("list job names", lambda c: c.distinct("name"))
        return sorted(v for v in values if isinstance(v, str))

    async def error_groups(self, name: str | None, since_ms: int | None, now_ms: int) -> list[ErrorGroupRow]:
        pipeline = error_groups_pipeline(name, since_ms, now_ms)

        async def run(c: AsyncCollection[Any]) -> list[dict[str, Any]]:
            cursor = await c.aggregate(pipeline, maxTimeMS=q.STATS_MAX_TIME_MS, hint=ERROR_GROUPS_HINT)
            return await cursor.to_list(None)

        docs = await self._display_call("group failed jobs by error", run, "narrow the errors view to one job name")
        rows = []
        for doc in docs:
            key = doc["_id"].get("group")
            first, last = doc.get("first"), doc.get("last")
            if not isinstance(key, str) or not isinstance(first, datetime) or not isinstance(last, datetime):
                continue  # a hand-written errorGroup or updatedAt: not ours to group
            error_type = doc.get("errorType")
            rows.append(
                (
                    key,
                    str(doc.get("name")),
                    error_type if isinstance(error_type, str) else None,
                    int(doc["_id"].get("bucket", -1)),
                    int(doc["count"]),
                    int(doc["retrying"]),
                    datetime_to_ms(first),
                    datetime_to_ms(last),
                )
            )
        return fold_buckets(rows, hour_window(now_ms))

    async def error_group_sample(self, key: str) -> str | None:
        doc = await self._display_call(
            "read an error group's message",
            lambda c: c.find_one({"errorGroup": key, **q.error_member_filter()}, projection={"failReason": 1}),
        )
        reason = None if doc is None else doc.get("failReason")
        return reason if isinstance(reason, str) else None

    async def count_in_steps(
        self, target: StoreListFilter | StoreSelector, step: int
    ) -> AsyncGenerator[StepCount, None]:
        """One step: one aggregation grouping the matches by status, bounded by the listing's
        ``maxTimeMS`` (a text search over it says how to narrow it), never a walk. A
        selector's position is this process's clock before it, as ``count_selected_as_of``."""
        if isinstance(target, StoreSelector):
            position = clock_ms() if target.as_of is None else target.as_of
            query = await self._selector_query(target)
            call, hint = self._call, q.LIST_TIMEOUT_HINT
        else:
            position = None
            query = q.list_filter(target, await self._suffix_ids(target))
            call, hint = self._display_call, self._list_hint(target)
        pipeline = matched_status_pipeline(query)

        async def run(c: AsyncCollection[Any]) -> list[dict[str, Any]]:
            cursor = await c.aggregate(pipeline, maxTimeMS=q.LIST_MAX_TIME_MS)
            return await cursor.to_list(None)

        docs = await call("count jobs", run, hint)
        by_status = {JobStatus(doc["_id"]): int(doc["count"]) for doc in docs if doc.get("_id") in _STATUS_VALUES}
        matched = sum(by_status.values())
        yield StepCount(by_status, matched, matched, True, position)

    async def pending_health(self, now_ms: int) -> list[PendingHealth]:
        rows = await self._aggregate(pending_health_pipeline(now_ms), PENDING_HEALTH_HINT)
        return [
            PendingHealth(
                row["_id"],
                int(row["due"]),
                int(row["scheduled"]),
                _ms_or_none(row.get("oldestDue")),
                int(row["processing"]),
            )
            for row in rows
            if isinstance(row.get("_id"), str)
        ]

    async def pending_split(self, now_ms: int, names: Sequence[str], cap: int) -> list[PendingSplit]:
        result: list[PendingSplit] = []
        for name in dict.fromkeys(names):
            due, later, dated = pending_split_filters(name, now_ms)
            result.append(
                PendingSplit(
                    name,
                    await self._count_up_to(due, cap),
                    await self._count_up_to(later, cap),
                    await self._run_at_end(dated, 1),
                    await self._run_at_end(dated, -1),
                )
            )
        return result

    async def _count_up_to(self, filter: q.Document, cap: int) -> int:
        return await self._call("count pending jobs", lambda c: c.count_documents(filter, limit=cap))

    async def _run_at_end(self, filter: q.Document, order: int) -> int | None:
        """The earliest (``order`` 1) or latest (-1) nextRunAt among ``filter``'s jobs."""
        doc = await self._call(
            "find the earliest and latest pending job",
            lambda c: c.find_one(filter, projection={"nextRunAt": 1}, sort=[("nextRunAt", order)]),
        )
        run_at = None if doc is None else doc.get("nextRunAt")
        return datetime_to_ms(run_at) if isinstance(run_at, datetime) else None

"""The MongoDB store: Monque's own collection, queries and indexes, on PyMongo's async API.

Every transition is one atomic single-document ``findOneAndUpdate`` or one ``updateMany``
whose filter carries the guard (status, owner), exactly as upstream Monque does, so Node
and Python schedulers can share a collection and still never double-claim or overwrite
each other's transitions. The query documents live in ``documents.py``; this module only
sends them and turns driver errors into engine errors.

Two ways to build one:

* ``MongoStore.from_url("mongodb://user:pw@host/db")`` (what ``open_store`` does): the store
  owns an ``AsyncMongoClient`` and closes it.
* ``MongoStore(database)`` or ``MongoStore(collection)`` with the host application's
  ``AsyncDatabase`` / ``AsyncCollection``: the store borrows the client and never closes it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import pymongo
from bson import ObjectId
from pymongo import AsyncMongoClient
from pymongo.asynchronous.change_stream import AsyncChangeStream
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from ...cursor import CursorAnchor
from ...errorgroups import ErrorGroupRow, fold_buckets, hour_window
from ...errors import ConnectionError, InvalidCursorError
from ...job import ChangeEvent, CursorDirection, Job, JobSort, JobStatus, PendingHealth, QueueStats
from ...timeutil import datetime_to_ms
from ...timeutil import now_ms as clock_ms
from ..base import PendingSplit, StepCount, StoreListFilter, StoreOpenOptions, StoreSelector
from . import config
from . import documents as q
from .changes import needs_post_image, watch_pipeline
from .claims import MongoClaims
from .config import DEFAULT_SERVER_SELECTION_TIMEOUT_MS, parse_mongo_url
from .feed import CollectionInvalidatedError, read_changes
from .fleet import MongoFleet
from .index_build import Progress, build_indexes
from .indexes import fleet_index_models, index_models
from .intake import MongoIntake
from .liveness import MongoLiveness
from .management import MongoManagement
from .plumbing import _bounded_close, _ms_or_none, _valid
from .retention import MongoRetention
from .server import inspect_server

#: The Monque statuses (a document's status written by hand may be anything else).
_STATUS_VALUES = frozenset(status.value for status in JobStatus)


class MongoStore(MongoIntake, MongoClaims, MongoLiveness, MongoRetention, MongoManagement, MongoFleet):
    kind = "mongodb"

    @classmethod
    def from_url(cls, url: str, **options: Any) -> MongoStore:
        """``database=`` overrides the URL's path; ``server_selection_timeout_ms=`` sets the
        driver's serverSelectionTimeoutMS (and the first ping's wait, 5 s by default); other
        keyword arguments go to ``AsyncMongoClient`` (tls=, appname=, socketTimeoutMS=, …)."""
        return cls(parse_mongo_url(url, **options))

    check_collection_name = staticmethod(config.check_collection_name)
    locate = staticmethod(config.locate)

    # -- life cycle -------------------------------------------------------------------------
    async def open(self, options: StoreOpenOptions) -> None:
        async with self._open_lock:
            if self._collection is not None:
                return
            self._closing = False
            try:
                collection = await self._connect(options)
                admin = collection.database.client.admin
                with self._errors.guard("read the server's version and topology"):
                    server = await inspect_server(admin.command, f"MongoDB at {self._hosts}")
                self._supports_transactions = server.supports_transactions
                self._index_policy = (options.create_indexes, options.retention_index)
                self._unique_refusal = None
                if options.create_indexes:
                    await self._ensure_indexes(collection)
            except BaseException:
                await self._release_client()
                raise
            self._collection = collection

    async def build_indexes(self, progress: Progress | None = None, *, retention: bool = False) -> int:
        """Build the missing indexes of the jobs collection (and its side collections), one
        at a time and without a deadline, calling ``progress`` before and after each: the
        deploy step ``monque-tui migrate`` runs. ``retention``: the retention index too
        (what ``job_retention`` needs). Returns how many jobs-collection indexes were built."""
        collection = self._coll()
        report = progress if progress is not None else (lambda *_: None)
        with self._errors.guard("build the jobs collection's indexes"):
            built = await build_indexes(collection, index_models(retention), report)
            for kind, models in fleet_index_models().items():
                await collection.database[q.fleet_collections(collection.name)[kind]].create_indexes(models)
        self.missing_indexes = []
        return built

    async def _connect(self, options: StoreOpenOptions) -> AsyncCollection[Any]:
        if self._given_collection is not None:
            database = self._given_collection.database
            collection = self._given_collection
        else:
            self.check_collection_name(options.collection_name)  # before a client is made
            database = self._given_db if self._given_db is not None else self._new_client()[self._database_name]
            collection = database[options.collection_name]
        try:
            # Only this first ping is bounded this tightly (see config.py); pymongo.timeout
            # applies to server selection too and leaves the client's own settings alone.
            with pymongo.timeout(self._ping_timeout_ms() / 1000):
                await database.command("ping")
        except PyMongoError as error:
            raise ConnectionError(self._unreachable(error)) from error
        return collection

    def _ping_timeout_ms(self) -> int:
        settings = self._settings
        return settings.server_selection_timeout_ms if settings is not None else DEFAULT_SERVER_SELECTION_TIMEOUT_MS

    def _new_client(self) -> AsyncMongoClient[Any]:
        settings = self._settings
        assert settings is not None
        try:
            self._client = AsyncMongoClient(settings.url, **settings.driver_kwargs())
        except (PyMongoError, ValueError, TypeError) as error:
            raise ConnectionError(
                f"Invalid MongoDB URL or option for {settings.display_url}: {self._mask(str(error))}"
            ) from error
        return self._client

    def _unreachable(self, error: BaseException) -> str:
        timeout = f" within {self._ping_timeout_ms()} ms"
        return (
            f"Cannot reach MongoDB at {self._hosts} (database {self._database_name}){timeout}: "
            f"{self._mask(str(error).split(', Timeout: ')[0])}; check that the server is running and reachable, the host and port, "
            "credentials and TLS settings (the wait is serverSelectionTimeoutMS in the URL)"
        )

    async def _release_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await _bounded_close(client.close(), "the MongoDB client (endSessions)")

    async def close(self) -> None:
        """Close the change streams and the client; bounded (``CLOSE_TIMEOUT_S`` for the
        streams together, then for the client) however unreachable the server is."""
        self._closing = True
        streams, self._streams = list(self._streams), set()
        await asyncio.gather(*(_bounded_close(stream.close(), "a change stream (killCursors)") for stream in streams))
        self._collection = None
        await self._release_client()

    # -- processing -------------------------------------------------------------------------

    # -- reads ------------------------------------------------------------------------------
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
                c.find(query).sort(q.FIND_SORT).skip(skip).limit(limit).max_time_ms(q.LIST_MAX_TIME_MS).to_list(None)
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
        projection = None if include_data else q.NO_DATA_PROJECTION
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
        (over ``documents.AVG_SAMPLE`` recent completed jobs) is rounded half up to whole ms
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
        rows = await self._aggregate(q.completed_duration_pipeline(name))
        return rows[0] if rows else None

    async def stats(self, name: str | None) -> QueueStats:
        """Counts from index keys, the average from a bounded sample (issue 27: the old
        single aggregation read every document at every console refresh)."""
        pipeline, hint = q.status_counts_pipeline(name)
        rows, sample = await asyncio.gather(self._aggregate(pipeline, hint), self._duration_sample(name))
        return self._stats([(r["_id"], r["count"]) for r in rows], sample)

    async def stats_by_name(self) -> dict[str, QueueStats]:
        pipeline, hint = q.counts_by_name_pipeline()
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
        pipeline = q.error_groups_pipeline(name, since_ms, now_ms)

        async def run(c: AsyncCollection[Any]) -> list[dict[str, Any]]:
            cursor = await c.aggregate(pipeline, maxTimeMS=q.STATS_MAX_TIME_MS)
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

    # -- management -------------------------------------------------------------------------

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
        pipeline = q.matched_status_pipeline(query)

        async def run(c: AsyncCollection[Any]) -> list[dict[str, Any]]:
            cursor = await c.aggregate(pipeline, maxTimeMS=q.LIST_MAX_TIME_MS)
            return await cursor.to_list(None)

        docs = await call("count jobs", run, hint)
        by_status = {JobStatus(doc["_id"]): int(doc["count"]) for doc in docs if doc.get("_id") in _STATUS_VALUES}
        matched = sum(by_status.values())
        yield StepCount(by_status, matched, matched, True, position)

    # -- fleet and queue control --------------------------------------------------------------

    async def pending_health(self, now_ms: int) -> list[PendingHealth]:
        rows = await self._aggregate(q.pending_health_pipeline(now_ms), q.PENDING_HEALTH_HINT)
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
            due, later, dated = q.pending_split_filters(name, now_ms)
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

    # -- change feed --------------------------------------------------------------------------
    async def open_watch(
        self,
        resume_after: Any = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
    ) -> AsyncIterator[ChangeEvent]:
        """Open a change stream now (errors, including "standalone server", raise here).

        ``resume_after`` is a ``ChangeEvent.token`` from this store (a resume-token document).
        """
        if resume_after is not None and not isinstance(resume_after, Mapping):
            raise InvalidCursorError(
                f"Resume token {resume_after!r} is not one this store made; pass ChangeEvent.token from a previous watch"
            )
        pipeline = watch_pipeline(full_document, statuses)
        lookup = "updateLookup" if needs_post_image(full_document, statuses) else None
        stream = await self._call(
            "open the change stream",
            lambda c: c.watch(pipeline, full_document=lookup, resume_after=resume_after),
        )
        self._streams.add(stream)
        return ChangeIterator(self._changes(stream, full_document), stream)

    def _timeout_governs(self) -> bool:
        """Whether the client has ``timeoutMS`` (each change-stream wait then has its budget)."""
        collection = self._collection
        if collection is None:
            return False
        try:
            return collection.database.client.options.timeout is not None
        except AttributeError:
            return False

    async def _changes(self, stream: AsyncChangeStream[Any], include_job: bool) -> AsyncIterator[ChangeEvent]:
        """The stream's events until it breaks or the store closes (see ``feed.read_changes``);
        the stream is closed and forgotten however the iteration ends."""
        try:
            governs = self._timeout_governs()
            async for event in read_changes(
                stream, include_job, self.display_url, lambda: self._closing, self._errors, governs
            ):
                yield event
        except CollectionInvalidatedError:
            await self._indexes_after_invalidate()
            raise
        finally:
            self._streams.discard(stream)
            await _bounded_close(stream.close(), "a change stream (killCursors)")


class ChangeIterator:
    """The change events of one stream, and ``resume_token``: where to resume it.

    That is PyMongo's ``AsyncChangeStream.resume_token``, not the last event's ``_id``: the
    driver advances it to each batch's ``postBatchResumeToken``, also over empty batches,
    so after a quiet spell on a filtered stream a reconnect resumes from the last batch the
    server answered, not from the last event delivered hours ago (a long oplog rescan, or
    "history lost" once that event left the oplog; issue 27 item 9). ``ResilientWatch``
    reads it when it reopens."""

    def __init__(self, events: AsyncIterator[ChangeEvent], stream: AsyncChangeStream[Any]) -> None:
        self._events = events
        self._stream = stream

    @property
    def resume_token(self) -> Any:
        return self._stream.resume_token

    def __aiter__(self) -> ChangeIterator:
        return self

    async def __anext__(self) -> ChangeEvent:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        close = getattr(self._events, "aclose", None)
        if close is not None:
            await close()


__all__ = ["ChangeIterator", "MongoStore"]

"""The Intake port on MongoDB: new jobs (one, many, in chunks) and imported ones.

A plain job is one ``insert_one`` of the document Node Monque writes (``new_job_document``);
a job with a unique key is upstream's upsert with ``$setOnInsert``, so concurrent enqueues
of one key store one job. Batches run in transactions where the server has them and undo
what they wrote where it has not (``MongoIntake.insert_many``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import bson
from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError, DuplicateKeyError, PyMongoError

from ...errors import ConnectionError, PartialInsertError
from ...job import Job, NewJob
from . import documents as q
from .documents import PENDING, Document, dt, oid
from .plumbing import UNIQUE_INSERT_ATTEMPTS, MongoPlumbing


def new_job_document(job: NewJob) -> Document:
    """A new pending job exactly as Node Monque writes one, field order included.

    Upstream's job-intake.ts builds ``{name, data, status, nextRunAt, repeatInterval,
    failCount, createdAt, updatedAt}`` and then adds ``uniqueKey``; the server puts ``_id``
    first. Order matters only for byte-level comparisons (exports, diffs of documents
    written by both sides), but it costs nothing to keep.
    """
    doc: Document = {
        "_id": oid(job.id),
        "name": job.name,
        "data": job.data,
        "status": PENDING,
        "nextRunAt": dt(job.next_run_at_ms),
    }
    if job.repeat_interval is not None:
        doc["repeatInterval"] = job.repeat_interval
    doc["failCount"] = 0
    doc["createdAt"] = doc["updatedAt"] = dt(job.created_at_ms)
    if job.unique_key is not None:
        doc["uniqueKey"] = job.unique_key
    if job.timeout_ms is not None:  # ours, after upstream's fields (ADR 0019)
        doc["timeoutMs"] = job.timeout_ms
    return doc


def insert_undo_filter(inserted: list[ObjectId]) -> Document:
    """The jobs a failed standalone ``insert_many`` inserted that are still as it wrote
    them: pending, no owner, and ``updatedAt`` still equal to ``createdAt`` (every later
    write, a claim, a release back to pending, a reschedule, moves ``updatedAt``)."""
    return {
        "_id": {"$in": inserted},
        "status": PENDING,
        "claimedBy": None,
        "$expr": {"$eq": ["$updatedAt", "$createdAt"]},
    }


def transaction_batches(sizes: Sequence[int], max_count: int, max_bytes: int) -> list[tuple[int, int]]:
    """``[start, end)`` ranges over items of these encoded sizes, in order: at most
    ``max_count`` items and ``max_bytes`` per range (an item larger than that alone)."""
    ranges: list[tuple[int, int]] = []
    start = total = 0
    for index, size in enumerate(sizes):
        if index > start and (index - start >= max_count or total + size > max_bytes):
            ranges.append((start, index))
            start, total = index, 0
        total += size
    if start < len(sizes):
        ranges.append((start, len(sizes)))
    return ranges


def unique_insert_update(job: NewJob) -> Document:
    """``$setOnInsert`` the whole document: an existing live job is returned unchanged."""
    return {"$setOnInsert": new_job_document(job)}


class MongoIntake(MongoPlumbing):
    """``JobStore``'s intake methods on MongoDB (composed into ``MongoStore``)."""

    #: Jobs per ``insert_many`` / ``import_jobs`` transaction, at most (see ``insert_many``).
    TRANSACTION_BATCH = 1000
    #: Encoded bytes per transaction, at most (a single larger job goes alone). A count
    #: alone let one transaction hold 1,000 payloads of up to 15 MiB each, as
    #: ``max_payload_size`` is unset by default (issue 36 defect 5): gigabytes in one
    #: transaction, against MongoDB's 16 MB per oplog entry, its cache and 60 s limit.
    #: Half of 16 MiB leaves room for what the oplog adds per document.
    TRANSACTION_MAX_BYTES = 8 * 1024 * 1024

    async def insert(self, job: NewJob) -> Job:
        if job.unique_key is None:
            await self._call("insert a job", lambda c: c.insert_one(new_job_document(job)))
            return job.to_job()
        await self._require_unique_index()
        collection = self._coll()
        with self._errors.guard("enqueue a unique job"):
            return await self._insert_unique(collection, job, None)

    @staticmethod
    async def _insert_unique(collection: AsyncCollection[Any], job: NewJob, session: AsyncClientSession | None) -> Job:
        """Upstream's upsert with ``$setOnInsert``. E11000 from a concurrent enqueue of the
        same key (both upserts missed; the partial unique index let only one in) means "it
        exists now": re-read it and return it, as if our upsert had found it. Driver errors
        propagate raw; callers translate them."""
        assert job.unique_key is not None
        scope = q.unique_key_filter(job.name, job.unique_key)
        last: DuplicateKeyError | None = None
        for _ in range(UNIQUE_INSERT_ATTEMPTS):
            try:
                doc = await collection.find_one_and_update(
                    scope,
                    unique_insert_update(job),
                    upsert=True,
                    return_document=ReturnDocument.AFTER,
                    session=session,
                )
            except DuplicateKeyError as error:
                if session is not None:
                    raise  # the transaction is aborted by now: the caller runs it again
                last = error
                doc = await collection.find_one(scope)  # None: the winner already finished; upsert again
            if doc is not None:
                return Job.from_document(doc)
        assert last is not None
        raise last

    async def insert_many(self, jobs: Sequence[NewJob]) -> list[Job]:
        """In transactions of at most ``TRANSACTION_BATCH`` jobs and ``TRANSACTION_MAX_BYTES``
        encoded bytes on a replica set / sharded cluster, each all or none (one transaction of any size hit the 60 s transaction
        limit or the cache and aborted, issue 27). If batch k fails, batches 1…k−1 stay
        stored and ``PartialInsertError`` says how many (a batch size or fewer jobs is still
        all or none). docs/engine.md (Intake) states this guarantee.

        Fallback on a standalone server (no transactions there): ordered inserts, and if one
        fails, the jobs this call inserted that are still pending and unclaimed are deleted
        again before the error is raised (a job another worker already claimed is left
        alone). That undo is best effort: a crash between the two leaves the first part of
        the batch behind (use unique keys if a batch must be safe to re-submit)."""
        if not jobs:
            return []
        if any(job.unique_key is not None for job in jobs):
            await self._require_unique_index()
        collection = self._coll()
        if not self._supports_transactions:
            return await self._insert_many_compensating(collection, jobs)
        with self._errors.guard("insert a batch of jobs"):
            sizes = [len(bson.encode(new_job_document(job))) for job in jobs]
        stored: list[Job] = []
        for start, end in self._transaction_batches(sizes):
            try:
                stored.extend(await self._insert_many_transaction(collection, jobs[start:end]))
            except ConnectionError as error:
                if not stored:
                    raise
                raise PartialInsertError(
                    f"{error} — the first {len(stored)} of {len(jobs)} jobs were stored (in transactions of "
                    f"{self._transaction_limit()}); the rest were not: submit the items from index {len(stored)} "
                    "on to complete the batch",
                    stored,
                    len(jobs),
                ) from error
        return stored

    def _transaction_batches(self, sizes: Sequence[int]) -> list[tuple[int, int]]:
        return transaction_batches(sizes, self.TRANSACTION_BATCH, self.TRANSACTION_MAX_BYTES)

    def _transaction_limit(self) -> str:
        return f"at most {self.TRANSACTION_BATCH:,} jobs and {self.TRANSACTION_MAX_BYTES / 2**20:g} MiB"

    async def _insert_batch(
        self,
        collection: AsyncCollection[Any],
        jobs: Sequence[NewJob],
        session: AsyncClientSession | None,
        inserted: list[ObjectId],
    ) -> list[Job]:
        results: list[Job] = []
        plain: list[NewJob] = []

        async def flush() -> None:
            if plain:
                ids = [ObjectId(j.id) for j in plain]
                try:
                    await collection.insert_many([new_job_document(j) for j in plain], ordered=True, session=session)
                except BulkWriteError as error:
                    inserted.extend(ids[: int(error.details.get("nInserted", 0))])  # ordered: a prefix landed
                    raise
                inserted.extend(ids)
                results.extend(j.to_job() for j in plain)
                plain.clear()

        for job in jobs:
            if job.unique_key is None:
                plain.append(job)
                continue
            await flush()
            stored = await self._insert_unique(collection, job, session)
            if stored.id == job.id:
                inserted.append(ObjectId(job.id))
            results.append(stored)
        await flush()
        return results

    async def _insert_many_transaction(self, collection: AsyncCollection[Any], jobs: Sequence[NewJob]) -> list[Job]:
        client = collection.database.client
        for attempt in range(UNIQUE_INSERT_ATTEMPTS):
            try:
                with self._errors.guard("insert a batch of jobs"):
                    async with client.start_session() as session:
                        return await session.with_transaction(lambda s: self._insert_batch(collection, jobs, s, []))
            except ConnectionError as error:
                # A concurrent enqueue of one of our unique keys aborted the transaction;
                # run it again: this time the upsert finds the other job and returns it.
                if isinstance(error.__cause__, DuplicateKeyError) and attempt + 1 < UNIQUE_INSERT_ATTEMPTS:
                    continue
                raise
        raise AssertionError("unreachable")

    async def _insert_many_compensating(self, collection: AsyncCollection[Any], jobs: Sequence[NewJob]) -> list[Job]:
        inserted: list[ObjectId] = []
        try:
            with self._errors.guard("insert a batch of jobs"):
                return await self._insert_batch(collection, jobs, None, inserted)
        except Exception:
            # Undo exactly what this call wrote (never a job that already existed, e.g. the
            # one whose id or unique key collided, nor one a unique key deduplicated onto),
            # and of that only what no worker has touched: a job another process already
            # claimed (or ran) stays, as it would after a crash here (issue 27 item 12).
            if inserted:
                try:
                    await collection.delete_many(insert_undo_filter(inserted))
                except PyMongoError:
                    pass  # already failing; the original error is the one to report
            raise

    async def import_jobs(self, jobs: Sequence[Job]) -> int:
        """Each job as its own document (``Job.to_document``: the schema Node Monque reads),
        written as ``insert_many`` writes new jobs: in transactions of at most
        ``TRANSACTION_BATCH`` jobs and ``TRANSACTION_MAX_BYTES`` on a replica set or sharded
        cluster, each all or none; ordered,
        in one call, on a standalone server. When a write fails after some jobs were stored,
        ``PartialInsertError`` says how many (the first ones, in order) and keeps them: an
        import of the rest completes it (an id already stored is refused, never replaced)."""
        if not jobs:
            return 0
        documents = [job.to_document() for job in jobs]
        collection = self._coll()
        if self._supports_transactions:
            with self._errors.guard("import jobs"):
                ranges = self._transaction_batches([len(bson.encode(doc)) for doc in documents])
        else:
            ranges = [(0, len(documents))]
        stored = 0
        for start, end in ranges:
            batch = documents[start:end]
            try:
                with self._errors.guard("import jobs"):
                    try:
                        await self._import_batch(collection, batch)
                    except BulkWriteError as error:
                        if not self._supports_transactions:  # ordered: a prefix landed
                            stored += int(error.details.get("nInserted", 0))
                        raise
            except ConnectionError as error:
                if not stored:
                    raise
                raise PartialInsertError(
                    f"{error} — the first {stored} of {len(jobs)} jobs were imported; the rest were not: "
                    f"import the jobs from index {stored} on to complete it",
                    list(jobs[:stored]),
                    len(jobs),
                ) from error
            stored += len(batch)
        return stored

    async def _import_batch(self, collection: AsyncCollection[Any], documents: list[q.Document]) -> None:
        if not self._supports_transactions:
            await collection.insert_many(documents, ordered=True)
            return
        async with collection.database.client.start_session() as session:
            await session.with_transaction(lambda s: collection.insert_many(documents, ordered=True, session=s))

"""Bulk retry on MongoDB when unique keys may clash.

Upstream retries a selection with one pipeline ``updateMany`` (the ``$rand`` stagger), and
so do we. But a multi-document update stops at its first E11000: when another live job
already holds a retried job's unique key, the jobs before it are retried, the clashing one
and every job after it are not, and the caller only sees an error. So:

1. find the clashes first: selected jobs with a unique key, against the live (pending or
   processing) holders of those keys, and against each other (of several retryable jobs
   with one key, the oldest is retried);
2. run the update on the selection minus those jobs;
3. a clash that appears between 1 and 2 (a concurrent enqueue) still stops the update:
   add that key's jobs to the clashes and run it again, counting what each round modified
   (jobs retried in an earlier round are pending now, so the selection no longer matches
   them).

Driver errors propagate; the store translates them.
"""

from __future__ import annotations

from typing import Any

from bson import ObjectId
from pymongo import UpdateMany
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError

from ...errors import UniqueKeyConflictError
from . import documents as q
from .documents import PENDING, PROCESSING, Document

#: Extra rounds beyond one per known clash (concurrent writers may add clashes).
EXTRA_ROUNDS = 5
#: Keys per query when looking up the live holders of unique keys.
HOLDER_LOOKUP_CHUNK = 500
DUPLICATE_KEY = 11000

Errors = list[dict[str, str]]


def excluding(query: Document, ids: list[ObjectId]) -> Document:
    """``query`` minus the given ids (the jobs a bulk retry leaves alone)."""
    return query if not ids else {"$and": [query, {"_id": {"$nin": ids}}]}


def keyed(query: Document) -> Document:
    """The jobs of ``query`` that carry a unique key."""
    return {"$and": [query, {"uniqueKey": {"$type": "string"}}]}


def live_holders_filter(keys: list[tuple[str, str]]) -> Document:
    """Pending or processing jobs holding any of these (name, uniqueKey) pairs: each branch
    is the unique index's own shape, so each is an index lookup."""
    return {"status": {"$in": [PENDING, PROCESSING]}, "$or": [{"name": name, "uniqueKey": key} for name, key in keys]}


async def bulk_retry(
    collection: AsyncCollection[Any], selection: q.Document, pipeline: list[q.Document]
) -> tuple[int, Errors] | None:
    """(count retried, one ``{"jobId", "error"}`` per clash); None if clashes kept
    appearing for more rounds than there were jobs to exclude."""
    clashes = await find_clashes(collection, selection)
    count = 0
    for _ in range(len(clashes) + EXTRA_ROUNDS):
        query = excluding(selection, [ObjectId(job_id) for job_id in clashes])
        try:
            result = await collection.bulk_write([UpdateMany(query, pipeline)], ordered=True)
        except BulkWriteError as error:
            count += int(error.details.get("nModified", 0))
            if not await _add_clash_from_error(collection, selection, clashes, error):
                raise
            continue
        count += result.modified_count
        return count, [{"jobId": job_id, "error": message} for job_id, message in clashes.items()]
    return None


async def find_clashes(collection: AsyncCollection[Any], selection: q.Document) -> dict[str, str]:
    """Selected jobs that cannot become pending: job id → UniqueKeyConflictError text."""
    found = (
        await collection.find(keyed(selection), projection={"name": 1, "uniqueKey": 1}).sort([("_id", 1)]).to_list(None)
    )
    groups: dict[tuple[str, str], list[str]] = {}
    for doc in found:
        if isinstance(doc.get("name"), str) and isinstance(doc.get("uniqueKey"), str):
            groups.setdefault((doc["name"], doc["uniqueKey"]), []).append(str(doc["_id"]))
    holders: dict[tuple[str, str], str] = {}
    keys = list(groups)
    for start in range(0, len(keys), HOLDER_LOOKUP_CHUNK):
        chunk = keys[start : start + HOLDER_LOOKUP_CHUNK]
        for doc in await collection.find(live_holders_filter(chunk), projection={"name": 1, "uniqueKey": 1}).to_list(
            None
        ):
            holders.setdefault((doc["name"], doc["uniqueKey"]), str(doc["_id"]))
    clashes: dict[str, str] = {}
    for (name, key), ids in groups.items():
        holder = holders.get((name, key))
        losers = ids if holder is not None else ids[1:]
        for job_id in losers:
            clashes[job_id] = str(UniqueKeyConflictError(job_id, name, key, holder or ids[0]))
    return clashes


async def _add_clash_from_error(
    collection: AsyncCollection[Any], selection: q.Document, clashes: dict[str, str], error: BulkWriteError
) -> bool:
    """Add the selected jobs of the key an E11000 names; False if it names none (then the
    error is not ours to absorb)."""
    write_errors = error.details.get("writeErrors") or []
    first = write_errors[0] if write_errors else {}
    key_value = first.get("keyValue") or {}
    name, key = key_value.get("name"), key_value.get("uniqueKey")
    if first.get("code") != DUPLICATE_KEY or not isinstance(name, str) or not isinstance(key, str):
        return False
    holder = await collection.find_one(q.unique_key_filter(name, key), projection={"_id": 1})
    holder_id = str(holder["_id"]) if holder is not None else "?"
    stuck = await collection.find(
        {"$and": [selection, {"name": name, "uniqueKey": key}]}, projection={"_id": 1}
    ).to_list(None)
    added = False
    for doc in stuck:
        job_id = str(doc["_id"])
        if job_id not in clashes:
            clashes[job_id] = str(UniqueKeyConflictError(job_id, name, key, holder_id))
            added = True
    return added

"""The MongoDB documents more than one port sends, and the vocabulary they are built from.

Here: the status values and field lists, ``dt`` / ``oid``, the unique-key scope (intake and
retry), the release update (claims and fleet), the selector and listing filters and keyset
pages (reads and management, as SQLite's ``queries.py``) and the side collections' names.
A document only one port sends is built next to that port's methods (``claims.py``,
``reads.py``, …).

All are pure functions of their arguments, with no driver calls, so every query can be read
and tested on its own (the tests evaluate them with mongomock, a query-language evaluator).
Shapes follow upstream Monque's services (``job-processor.ts`` acquireJob / completeJob /
failJob, ``job-manager.ts``, ``cursor-listing.ts``, ``job-query.ts``) so Node and Python
workers on one collection send the same queries and use the same indexes.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from bson import ObjectId

from ...cursor import CursorAnchor
from ...errors import InvalidCursorError
from ...job import CursorDirection, JobSort, JobStatus, name_glob_regex, regex_literal
from ...payload_filter import DataTerm
from ...timeutil import in_range, ms_to_datetime
from ..base import StoreListFilter, StoreSelector

Document = dict[str, Any]

PENDING = JobStatus.PENDING.value
PROCESSING = JobStatus.PROCESSING.value
COMPLETED = JobStatus.COMPLETED.value
FAILED = JobStatus.FAILED.value
CANCELLED = JobStatus.CANCELLED.value

#: Fields a release removes. ``heartbeatInterval`` is kept: DESIGN §3 says it is written on
#: claim and kept afterwards (the SQLite store does the same), so both stores agree.
CLAIM_FIELDS = ("lockedAt", "claimedBy", "lastHeartbeat")
#: The field a request to stop a running job is written to (issue 37 writes it; issue 36
#: item 2 makes sure a worker's narrowed change stream still passes an update that sets it,
#: so the owner hears the request). One name, here, for the writer and the stream.
STOP_REQUEST_FIELD = "stopRequestedAt"
SORT_FIELDS = {
    "id": "_id",
    "created_at": "createdAt",
    "updated_at": "updatedAt",
    "next_run_at": "nextRunAt",
    "locked_at": "lockedAt",
}
#: Upstream's stats aggregation is bounded at 30 s (job-query.ts, maxTimeMS: 30000).
STATS_MAX_TIME_MS = 30_000
#: Listings and counts get the same bound: a search over a large collection must end with
#: a clear error rather than hold a console (and a server thread) for minutes.
LIST_MAX_TIME_MS = 30_000
LIST_TIMEOUT_HINT = "narrow the listing: type more of the job id or unique key, or filter by name or status"
_HEX = re.compile(r"[0-9a-f]{1,24}")


def dt(ms: int) -> datetime:
    """Epoch ms -> aware UTC datetime (BSON date, ms precision: exact round trip)."""
    return ms_to_datetime(ms)


def oid(job_id: str) -> ObjectId:
    return ObjectId(job_id)


def _unset(*fields: str) -> Document:
    return {field: "" for field in fields}


# -- unique keys (intake, retry) ------------------------------------------------------------
def unique_key_filter(name: str, unique_key: str) -> Document:
    """The dedup scope: same name and key among live (pending/processing) jobs — the same
    predicate as the partial unique index, so the upsert and the index agree."""
    return {"name": name, "uniqueKey": unique_key, "status": {"$in": [PENDING, PROCESSING]}}


# -- claims and releases (claims, fleet, management) -----------------------------------------------
#: Ours: the error fields a completion or a manual retry removes with failReason.
ERROR_FIELDS = ("errorType", "errorGroup")


def to_pending_update(now_ms: int) -> Document:
    """Release: back to pending, claim fields removed."""
    return {"$set": {"status": PENDING, "updatedAt": dt(now_ms)}, "$unset": _unset(*CLAIM_FIELDS)}


# -- selectors and listing filters -------------------------------------------------------------------
def selector_filter(selector: StoreSelector, suffix_ids: list[Any] | None = None) -> Document:
    """Upstream buildSelectorQuery: name, status (one or many), createdAt < / >; ours: updatedAt <.
    ``suffix_ids``: for a listing with an id-like search, the ids ``id_suffix_query`` found
    (``MongoPlumbing._selector_query``), so the search's ``$or`` stays indexed, as a listing's."""
    query: Document = {}
    if selector.name is not None:
        query["name"] = selector.name
    if selector.statuses is not None:
        query["status"] = {"$in": [s.value for s in selector.statuses]}
    created: Document = {}
    if selector.created_before_ms is not None:
        created["$lt"] = dt(selector.created_before_ms)
    if selector.created_after_ms is not None:
        created["$gt"] = dt(selector.created_after_ms)
    if created:
        query["createdAt"] = created
    before = [ms for ms in (selector.updated_before_ms, selector.as_of) if ms is not None]
    if before:
        # as_of: the count's instant (MongoManagement.count_selected_as_of), a bound on updatedAt too.
        query["updatedAt"] = {"$lt": dt(min(before))}
    _add_ours(query, selector.error_group, selector.text)
    if selector.listing is not None:
        # Bulk on any listing filter: the listing's own document, so bulk and listing agree.
        listing = list_filter(selector.listing, suffix_ids)
        if listing:
            return {"$and": [query, listing]} if query else listing
    return query


#: Failed jobs and retrying ones: the members of error groups (the errors view).
def error_member_filter() -> Document:
    return {"$or": [{"status": FAILED}, {"status": PENDING, "failCount": {"$gt": 0}}]}


TEXT_TIMEOUT_HINT = (
    "the text search read too many jobs; narrow it with a job name, a status or a time range, "
    "or search for a longer string"
)


def text_clause(text: str) -> Document:
    """Payload or error text contains ``text`` as typed, case ignored (ADR 0008).

    BSON holds the payload's values decoded (no JSON escapes), so they are searched as the
    producer passed them; ``text`` is a literal (``regex_literal``: every metacharacter
    escaped, a NUL spelled ``\\x00``). MongoDB cannot turn a document into text on the
    server, so the payload is searched where it is text: a string payload (or an array of
    strings), and the keys and top-level values of an object payload, each value converted
    to a string (a number's digits, ``true``, ``null``; ``$convert`` with ``onError``: a
    nested object or array is skipped, never an error). No index serves a substring; the
    caller bounds the query with maxTimeMS and says how to narrow it when it is hit.
    """
    escaped = regex_literal(text)
    pattern = {"$regex": escaped, "$options": "i"}
    values = {"$objectToArray": {"$cond": [{"$eq": [{"$type": "$data"}, "object"]}, "$data", {}]}}
    as_text = {"$convert": {"input": "$$this.v", "to": "string", "onError": "", "onNull": "null"}}
    entry = {
        "$or": [
            {"$regexMatch": {"input": "$$this.k", "regex": escaped, "options": "i"}},
            {"$regexMatch": {"input": as_text, "regex": escaped, "options": "i"}},
        ]
    }
    return {
        "$or": [
            {"failReason": pattern},
            {"errorType": pattern},
            {"data": pattern},
            {"$expr": {"$gt": [{"$size": {"$filter": {"input": values, "cond": entry}}}, 0]}},
        ]
    }


def group_clause(key: str) -> Document:
    return {"errorGroup": key, **error_member_filter()}


def data_clause(term: DataTerm) -> Document:
    """One payload condition (``payload_filter``) with dotted paths.

    A dotted path reaches into arrays' elements (``data.a.b`` matches ``{"a": [{"b": 1}]}``),
    and ``{path: value}`` matches an array holding the value; the filter's path goes through
    objects only. So ``data`` and every parent must be an object and not an array, and the
    value must not be an array: then each step is a plain field read, as SQLite's
    ``json_type``. ``$eq`` compares numbers by value across int, long, double and decimal;
    the ``$type`` beside it keeps a boolean from equalling a number; null is ``$eq: None``
    on a field that exists (``{path: None}`` alone also matches a missing field)."""
    keys = ("data", *term.path)
    parents = [".".join(keys[:depth]) for depth in range(1, len(keys))]
    leaf = ".".join(keys)
    not_array = {"$not": {"$type": "array"}}
    present: list[Document] = [{parent: {"$type": "object", **not_array}} for parent in parents]
    if term.op in ("missing", "exists"):
        there: Document = {"$and": [*present, {leaf: {"$exists": True}}]}
        return {"$nor": [there]} if term.op == "missing" else there
    value = term.value
    test: Document
    if value is None:
        test = {"$eq": None, "$exists": True}  # present and null (``$eq: None`` alone: or missing)
    else:
        # The type too: a server never equates true with 1, but the type says so plainly.
        kind = "bool" if isinstance(value, bool) else "number" if isinstance(value, int | float) else "string"
        test = {"$type": kind, "$eq": value}
    return {"$and": [*present, {leaf: {**test, **not_array}}]}


def _add_ours(query: Document, error_group: str | None, text: str | None) -> None:
    if error_group is not None:
        query.setdefault("$and", []).append(group_clause(error_group))
    if text:
        query.setdefault("$and", []).append(text_clause(text))


#: At most this many ids are taken from the id-suffix query (``id_suffix_query``): a
#: suffix of 8 hex digits (what consoles show) is practically unique, a short one matches
#: 1/16 of the jobs per digit, and a listing shows a page anyway.
ID_SUFFIX_LIMIT = 1000
#: The id-suffix query reads keys of the ``_id`` index only (a covered plan).
ID_INDEX_HINT: list[tuple[str, int]] = [("_id", 1)]


def id_like(search: str) -> bool:
    return _HEX.fullmatch(search.lower()) is not None


def id_suffix_query(search: str) -> Document:
    """The jobs whose id *ends* with ``search`` (hex), or, for 4-7 hex digits, holds them
    anywhere in its last 8 (what consoles show): no index range can express a suffix,
    so this runs as its own query, projected to ``_id`` and hinted to the ``_id`` index so
    it reads index keys only, limited to ``ID_SUFFIX_LIMIT``; the listing then matches the
    ids it found (issue 27: inside the listing's ``$or`` the ``$expr`` made every branch,
    the indexed ones too, a collection scan)."""
    digits = search.lower()
    tail = f"[0-9a-f]{{0,{8 - len(digits)}}}" if 4 <= len(digits) < 8 else ""
    return {"$expr": {"$regexMatch": {"input": {"$toString": "$_id"}, "regex": f"{digits}{tail}$"}}}


def _search_clause(search: str, suffix_ids: list[Any] | None = None) -> Document:
    """Id prefix (as an ObjectId range, so it uses the _id index), id suffix or 4+ hex digits
    within the last 8 (ours: consoles show the last 8 hex digits), or unique-key substring
    (the contract's meaning, and what
    the console matches live events with).

    A substring cannot be anchored, so the unique-key branch is an unanchored regex, which
    MongoDB evaluates against the keys of the sparse ``uniqueKey`` index (only jobs with a
    key, no document fetched until a key matches); the caller bounds it with maxTimeMS.

    The suffix branch is ``_id $in suffix_ids`` (found by ``id_suffix_query``), so every
    branch of the ``$or`` has an index. Without ``suffix_ids`` (a bulk selector's listing,
    built without a round trip) it is the ``$expr`` itself, which no index serves.
    """
    clauses: list[Document] = [{"uniqueKey": {"$regex": regex_literal(search)}}]
    prefix = search.lower()
    if _HEX.fullmatch(prefix):
        low = ObjectId(prefix.ljust(24, "0"))
        high = ObjectId(prefix.ljust(24, "f"))
        clauses.insert(0, {"_id": {"$gte": low, "$lte": high}})
        if suffix_ids is None:
            clauses.insert(1, id_suffix_query(search))
        elif suffix_ids:
            clauses.insert(1, {"_id": {"$in": suffix_ids}})
    return {"$or": clauses}


def list_filter(filter: StoreListFilter, suffix_ids: list[Any] | None = None) -> Document:
    """Cursor-listing filter (upstream cursor-listing.ts): inclusive date bounds.
    ``suffix_ids``: the ids ``id_suffix_query`` found for an id-like search (see ``_search_clause``)."""
    query: Document = {}
    if filter.name is not None:
        query["name"] = filter.name
    if filter.name_pattern is not None:
        # Anchored, every other character escaped (name_glob_regex); a literal prefix uses the name index.
        clause = {"name": {"$regex": name_glob_regex(filter.name_pattern)}}
        if "name" in query:
            query.setdefault("$and", []).append(clause)
        else:
            query.update(clause)
    if filter.statuses is not None:
        query["status"] = {"$in": [s.value for s in filter.statuses]}
    bounds = (
        ("createdAt", filter.created_from_ms, filter.created_to_ms),
        ("updatedAt", filter.updated_from_ms, filter.updated_to_ms),
        ("nextRunAt", filter.next_run_from_ms, filter.next_run_to_ms),
    )
    for field, low, high in bounds:
        rng: Document = {}
        if low is not None:
            rng["$gte"] = dt(low)
        if high is not None:
            rng["$lte"] = dt(high)
        if rng:
            query[field] = rng
    if filter.recurring is not None:
        query["repeatInterval"] = {"$exists": True, "$ne": None} if filter.recurring else {"$in": [None]}
    if filter.search:
        query.setdefault("$and", []).append(_search_clause(filter.search, suffix_ids))
    _add_ours(query, filter.error_group, filter.text)
    for term in filter.data or ():
        query.setdefault("$and", []).append(data_clause(term))
    return query


def page_query(
    filter: StoreListFilter,
    sort: JobSort,
    direction: CursorDirection,
    anchor: CursorAnchor | None,
    suffix_ids: list[Any] | None = None,
) -> tuple[Document, list[tuple[str, int]]]:
    """Keyset page: the filter plus "strictly past the anchor", and the traversal sort.

    Backward pages traverse in the opposite order (the caller reverses them), exactly as
    upstream's cursor listing: ``$or: [{f: {$gt: v}}, {f: v, _id: {$gt: id}}]``.
    """
    query = list_filter(filter, suffix_ids)
    ascending = (sort.direction == "asc") == (direction == "forward")
    order = 1 if ascending else -1
    op = "$gt" if ascending else "$lt"
    field = SORT_FIELDS[sort.by]
    if anchor is not None:
        if sort.by == "id":
            keyset: Document = {"_id": {op: oid(anchor.job_id)}}
        else:
            assert anchor.value_ms is not None
            if not in_range(anchor.value_ms):  # no BSON date a job holds is outside: a made-up cursor
                raise InvalidCursorError(
                    "Cursor holds a sort value out of range; pass the cursor a previous page returned"
                )
            value = dt(anchor.value_ms)
            keyset = {"$or": [{field: {op: value}}, {field: value, "_id": {op: oid(anchor.job_id)}}]}
        query.setdefault("$and", []).append(keyset)
    sort_spec = [("_id", order)] if sort.by == "id" else [(field, order), ("_id", order)]
    return query, sort_spec


# -- fleet and queue control (issue 13) ---------------------------------------------------------------
# Side collections named after the jobs collection; Node Monque never reads them.
def fleet_collections(collection: str) -> dict[str, str]:
    return {
        "instances": f"{collection}_instances",
        "control": f"{collection}_control",
        "counters": f"{collection}_counters",
    }


#: ``claimedBy`` of a processing job that names no owner: missing, null or empty. Stale
#: recovery takes such a job back; the owner listings leave it out.
NO_OWNER: Document = {"$in": [None, ""]}

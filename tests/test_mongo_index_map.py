"""Every query shape the engine and the console send to MongoDB has a declared index
(issue 27 item 7). STATIC: no server; the rules below are MongoDB's planner rules for when
an index serves a filter and a sort (equality keys first, then the sort keys in order, all
in one direction or all reversed; a range or ``$in`` needs a leading key; an ``$or`` is
served when its branches each are), applied to the documents the store's modules build
(``documents.py`` and each port's module: ``claims.py``, ``reads.py``, …).

Adding a query builder to any module of ``store/mongo/`` fails ``test_every_query_builder_is_mapped``
until its shape is listed in ``SHAPES`` below (and served) or in ``EXEMPT`` with a reason.
Whether the server's planner picks these indexes is for a real server's ``explain``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import pytest
from bson import ObjectId

import monque_engine.store.mongo as mongo
from monque_engine.cursor import CursorAnchor
from monque_engine.job import JobSort, JobStatus, OwnerJobStamp
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import claims as mongo_claims
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import fleet, intake, liveness
from monque_engine.store.mongo import management as mongo_management
from monque_engine.store.mongo import reads as mongo_reads
from monque_engine.store.mongo import retention as mongo_retention
from monque_engine.store.mongo import retry as mongo_retry
from monque_engine.store.mongo import running as mongo_running
from monque_engine.store.mongo.indexes import fleet_index_specs, index_specs

Keys = list[tuple[str, int]]
#: (keys, options): an index with a ``partialFilterExpression`` (or ``sparse``) serves only
#: queries that imply its filter (MongoDB's rule: the planner drops it otherwise).
Index = tuple[Keys, dict[str, Any]]
NOW = 1_800_000_000_000
ID = "65f000000000000000000001"
JOBS: list[Index] = [([("_id", 1)], {}), *index_specs(retention=True)]
SIDE: dict[str, list[Index]] = {kind: [([("_id", 1)], {}), *specs] for kind, specs in fleet_index_specs().items()}
_RANGE_OPS = {"$lt", "$lte", "$gt", "$gte", "$type", "$exists", "$regex", "$ne"}
#: Operators after which a field is certainly present (a comparison never matches a missing field).
_PRESENT_OPS = {"$lt", "$lte", "$gt", "$gte", "$type", "$regex"}


def _conjuncts(query: dict[str, Any]) -> list[dict[str, Any]]:
    """The filter as a list of single-purpose parts ($and flattened)."""
    parts: list[dict[str, Any]] = []
    for key, value in query.items():
        if key == "$and":
            for item in value:
                parts.extend(_conjuncts(item))
        else:
            parts.append({key: value})
    return parts


def _fields(query: dict[str, Any]) -> tuple[set[str], set[str], list[list[dict[str, Any]]], set[str]]:
    """(equality fields, range fields, $or branch lists, fields fixed to one value) of a
    filter; $expr is a filter only. A field fixed to one value drops out of a sort."""
    equal: set[str] = set()
    ranged: set[str] = set()
    fixed: set[str] = set()
    ors: list[list[dict[str, Any]]] = []
    for part in _conjuncts(query):
        ((key, value),) = part.items()
        if key == "$or":
            ors.append(value)
        elif key.startswith("$"):
            continue  # $expr: evaluated on what an index found
        elif isinstance(value, dict) and set(value) & _RANGE_OPS:
            ranged.add(key)
        else:
            equal.add(key)  # a value, or {$in: [...]} (points: still equality for the planner)
            if not isinstance(value, dict) or len(value.get("$in", [])) == 1:
                fixed.add(key)
    return equal, ranged, ors, fixed


def _implies(query: dict[str, Any], field: str, condition: Any) -> bool:
    """Whether every document ``query`` matches satisfies ``{field: condition}`` (the two
    partial-filter forms Monque's indexes use: ``$exists: true`` and ``$in``)."""
    for part in _conjuncts(query):
        ((key, value),) = part.items()
        if key == "$or" and all(_implies(branch, field, condition) for branch in value):
            return True
        if key != field:
            continue
        points = value.get("$in") if isinstance(value, dict) else [value]
        if condition == {"$exists": True}:
            if points is not None and None not in points:
                return True
            if isinstance(value, dict) and (value.get("$exists") is True or set(value) & _PRESENT_OPS):
                return True
        elif (
            isinstance(condition, dict)
            and "$in" in condition
            and points is not None
            and all(point in condition["$in"] for point in points)
        ):
            return True
    return False


def _eligible(index: Index, query: dict[str, Any]) -> bool:
    keys, options = index
    partial: dict[str, Any] = dict(options.get("partialFilterExpression", {}))
    if options.get("sparse"):
        partial.update({field: {"$exists": True} for field, _ in keys})
    return all(_implies(query, field, condition) for field, condition in partial.items())


def _serves(index: Keys, equal: set[str], ranged: set[str], sort: Keys, fixed: set[str] = frozenset()) -> bool:  # type: ignore[assignment]
    fields = [field for field, _ in index]
    if fields == ["_id"] and ("_id" in equal or "_id" in ranged):
        return True
    lead = 0
    while lead < len(fields) and fields[lead] in equal:
        lead += 1
    if not sort:
        return bool(fields) and (fields[0] in equal or fields[0] in ranged)
    if equal and lead == 0:
        return False  # sorted, but reads past every key that fails the equality
    # A sort field fixed to one value by the filter orders nothing ({createdAt: v, _id < x}
    # sorted by createdAt, _id is in _id order after the equality prefix).
    rest = [(field, order) for field, order in sort if field not in fixed or field not in fields[:lead]]
    window = index[lead : lead + len(rest)]
    if [f for f, _ in window] != [f for f, _ in rest]:
        return False
    same = all(d == s for (_, d), (_, s) in zip(window, rest, strict=True))
    reversed_ = all(d == -s for (_, d), (_, s) in zip(window, rest, strict=True))
    return same or reversed_


def _without_ors(query: dict[str, Any]) -> dict[str, Any]:
    return {"$and": [part for part in _conjuncts(query) if "$or" not in part]}


def served_by(
    query: dict[str, Any],
    sort: Keys,
    indexes: list[Index],
    bounded: set[str] = frozenset(),  # type: ignore[assignment]
) -> Keys | None:
    """The index that serves ``query`` sorted by ``sort`` (None: none does); ``bounded``:
    fields that must be keys of it (a keyset branch's bounds, not a filter on what it reads)."""
    equal, ranged, ors, fixed = _fields(query)
    eligible = [keys for keys, options in indexes if _eligible((keys, options), query)]
    if ors and sort:
        # A keyset page's $or (past the anchor) with a sort: each branch, with the rest of
        # the filter, must be read in the sort's order from an index whose keys bound it (a
        # SORT_MERGE of bounded scans); else every page reads from the start of the order.
        rest = _without_ors(query)
        for branches in ors:
            for branch in branches:
                if served_by({"$and": [rest, branch]}, sort, indexes, set(branch)) is None:
                    return None
        return [("$or", 1)]
    for index in eligible:
        if bounded <= {field for field, _ in index} and _serves(index, equal, ranged, sort, fixed):
            return index
    if ors and not sort:
        # Each branch of each $or, with the filter's other fields, served on its own (an OR plan).
        for branches in ors:
            if all(served_by({**branch, **dict.fromkeys(equal, 1)}, [], indexes) for branch in branches):
                return [("$or", 1)]
    return None


def _page(filter: StoreListFilter, by: str, anchored: bool) -> tuple[dict[str, Any], Keys]:
    anchor = CursorAnchor(job_id=ID, value_ms=None if by == "id" else NOW) if anchored else None
    return q.page_query(filter, JobSort(by, "desc"), "forward", anchor)  # type: ignore[arg-type]


def _console_pages() -> list[tuple[str, dict[str, Any], Keys]]:
    shapes = []
    for status in (None, (JobStatus.FAILED,)):
        for name in (None, "email"):
            for by in ("created_at", "updated_at", "next_run_at"):
                for anchored in (False, True):
                    query, sort = _page(StoreListFilter(name=name, statuses=status), by, anchored)
                    shapes.append((f"page status={status} name={name} by={by} anchored={anchored}", query, sort))
    return shapes


def _pipeline(pipeline: list[dict[str, Any]]) -> tuple[dict[str, Any], Keys]:
    """The leading $match and the $sort right after it (the part the query layer runs)."""
    match = pipeline[0].get("$match", {})
    sort_stage = pipeline[1].get("$sort", {}) if len(pipeline) > 1 else {}
    return match, list(sort_stage.items())


#: (label, filter, sort) of every jobs-collection query; hinted pipelines are checked in
#: test_hinted_reads_name_declared_indexes.
SHAPES: list[tuple[str, dict[str, Any], Keys]] = [
    ("claim", mongo_claims.claim_filter("email", NOW), mongo_claims.CLAIM_SORT),
    ("next due", mongo_claims.next_due_filter(["email", "sms"]), [("nextRunAt", 1)]),
    ("owned transition", mongo_claims.owned_filter(ID, "w1"), []),
    ("stop request (issue 37)", mongo_running.stop_filter(ID, "w1", NOW), []),
    ("release", mongo_claims.release_filter([ID], "w1"), []),
    ("heartbeat (own jobs)", liveness.heartbeat_filter("w1", [ID]), []),
    ("heartbeat (all of an owner)", liveness.heartbeat_filter("w1"), []),
    ("stale recovery", liveness.stale_filter(NOW), []),
    ("retention: find a batch", mongo_retention.purge_filter(JobStatus.COMPLETED, NOW), mongo_retention.PURGE_SORT),
    (
        "retention: delete a batch",
        mongo_retention.purge_batch_filter(mongo_retention.purge_filter(JobStatus.FAILED, NOW), [ObjectId(ID)]),
        [],
    ),
    ("instance collision check", liveness.live_claim_filter("w1", NOW), []),
    ("unique key upsert", q.unique_key_filter("email", "k"), []),
    ("standalone insert_many undo", intake.insert_undo_filter([ObjectId(ID)]), []),
    ("an owner's jobs (dead-owner watch)", fleet.owner_jobs_filter("w1"), []),
    ("dead owner release", fleet.unmoved_owner_filter("w1", [OwnerJobStamp(ID, NOW, NOW, 30_000)]), []),
    ("hand-edited claims (stale recovery)", liveness.malformed_claims_filter(), []),
    ("guarded management write", mongo_management.guarded_filter(ID, ("failed", "cancelled")), []),
    ("unique-key holders (bulk retry)", mongo_retry.live_holders_filter([("email", "k")]), []),
    ("error group sample", q.group_clause("g"), []),
    ("bulk by name", q.selector_filter(StoreSelector(name="email", statuses=(JobStatus.FAILED,))), []),
    ("bulk by status", q.selector_filter(StoreSelector(statuses=(JobStatus.FAILED,))), []),
    ("bulk by error group", q.selector_filter(StoreSelector(error_group="g", statuses=(JobStatus.FAILED,))), []),
    ("count a status tab", q.list_filter(StoreListFilter(statuses=(JobStatus.PENDING,))), []),
    ("count a name", q.list_filter(StoreListFilter(name="email")), []),
    ("search: id-like, suffix ids found first", q.list_filter(StoreListFilter(search="0001"), [ObjectId(ID)]), []),
    ("search: unique key", q.list_filter(StoreListFilter(search="order-7")), []),
    (
        "bulk on a listing: id-like search, suffix ids found first",
        q.selector_filter(
            StoreSelector(statuses=(JobStatus.FAILED,), listing=StoreListFilter(search="0001"), as_of=NOW),
            [ObjectId(ID)],
        ),
        [],
    ),
    ("average sample", *_pipeline(mongo_reads.completed_duration_pipeline(None))),
    ("average sample of a name", *_pipeline(mongo_reads.completed_duration_pipeline("email"))),
    ("owner holdings", *_pipeline(fleet.owner_holdings_pipeline())),
    ("error groups", *_pipeline(mongo_reads.error_groups_pipeline("email", NOW - 3_600_000, NOW))),
    *_console_pages(),
    *(
        (f"find by {label} ({'FIND_SORT'})", q.selector_filter(selector), mongo_reads.FIND_SORT)
        for label, selector in (
            ("nothing", StoreSelector()),
            ("name", StoreSelector(name="email")),
            ("status", StoreSelector(statuses=(JobStatus.PENDING,))),
            ("statuses", StoreSelector(statuses=(JobStatus.FAILED, JobStatus.CANCELLED))),
            ("name and status", StoreSelector(name="email", statuses=(JobStatus.FAILED,))),
        )
    ),
]

SIDE_SHAPES: list[tuple[str, str, dict[str, Any], Keys]] = [
    ("instances", "purge", fleet.instance_purge_filter(NOW), []),
    ("control", "paused names", fleet.PAUSED_FILTER, []),
    ("control", "lease", mongo_retention.lease_filter("retention", "w1", NOW), []),
    ("control", "lease release", mongo_retention.lease_release_filter("retention", "w1"), []),
    # MongoFleet.outcome_counts sends both with COUNTERS_SORT (issue 36 item 7).
    ("counters", "health window of a name", fleet.counters_filter(100, "email"), fleet.COUNTERS_SORT),
    ("counters", "health window", fleet.counters_filter(100, None), fleet.COUNTERS_SORT),
    ("counters", "purge", fleet.counters_purge_filter(100), []),
    # The errors view's first seen and last hour per shown group (issue 40).
    ("counters", "error groups' minutes", fleet.error_counters_filter(["\x1eab"], 100), []),
    (
        "counters",
        "error groups' first minute",
        fleet.error_first_pipeline(["\x1eab"])[0]["$match"],
        fleet.COUNTERS_SORT,
    ),
]

#: Builders that issue no query of their own, or whose query is a deliberate scan.
EXEMPT = {
    "matched_status_pipeline": "wraps a listing filter (mapped above as its builder) in a $group by status; bounded by maxTimeMS as the listing's count",
    "text_clause": "payload/error text: a substring no index serves (ADR 0008); bounded by maxTimeMS, says how to narrow",
    "data_clause": "payload terms (ADR 0022): no index serves a payload path; bounded by maxTimeMS as text_clause",
    "id_suffix_query": "runs hinted to the _id index, keys only (test_hinted_reads_name_declared_indexes)",
    "owned_filter_by_oid": "the _id index, as owned_filter",
    "error_member_filter": "only inside group_clause / selector_filter, mapped above",
    "stale_recovery_pipeline": "an update, not a query",
    "retry_many_pipeline": "an update, not a query",
    "status_counts_pipeline": "hinted (test_hinted_reads_name_declared_indexes)",
    "counts_by_name_pipeline": "hinted (test_hinted_reads_name_declared_indexes)",
    "pending_health_pipeline": "hinted (test_hinted_reads_name_declared_indexes)",
    "watch_pipeline": "a change stream's $match on events, not a query of the collection",
    "worker_pipeline": "a change stream's $match on events (watch_pipeline's for workers), not a query of the collection",
}


@pytest.mark.parametrize(("label", "query", "sort"), SHAPES, ids=[s[0] for s in SHAPES])
def test_every_jobs_query_shape_has_an_index(label: str, query: dict[str, Any], sort: Keys) -> None:
    assert served_by(query, sort, JOBS) is not None, f"{label}: no declared index serves {query} sorted {sort}"


@pytest.mark.parametrize(("kind", "label", "query", "sort"), SIDE_SHAPES, ids=[s[1] for s in SIDE_SHAPES])
def test_every_side_collection_query_has_an_index(kind: str, label: str, query: dict[str, Any], sort: Keys) -> None:
    assert served_by(query, sort, SIDE[kind]) is not None, f"{label}: no index on {kind} serves {query} sorted {sort}"


def test_hinted_reads_name_declared_indexes() -> None:
    for hint in (
        mongo_reads.STATUS_COUNT_HINT,
        mongo_reads.NAME_STATUS_COUNT_HINT,
        mongo_reads.PENDING_HEALTH_HINT,
        mongo_reads.ERROR_GROUPS_HINT,
        q.ID_INDEX_HINT,
    ):
        assert hint in [keys for keys, _ in JOBS], hint


def test_every_query_builder_is_mapped() -> None:
    """A new ``*_filter`` / ``*_query`` / ``*_pipeline`` / ``*_clause`` builder, in any module
    of ``store/mongo/``, must be mapped or exempted."""
    source = inspect.getsource(__import__(__name__))
    modules = [
        importlib.import_module(info.name)
        for info in pkgutil.iter_modules(mongo.__path__, "monque_engine.store.mongo.")
    ]
    builders = {
        name
        for module in modules
        for name, value in vars(module).items()
        if inspect.isfunction(value)
        and value.__module__ == module.__name__
        and not name.startswith("_")
        and name.endswith(("_filter", "_query", "_pipeline", "_clause"))
    }
    assert {"claim_filter", "list_filter", "watch_pipeline"} <= builders  # the modules are found
    unmapped = {name for name in builders if name not in EXEMPT and f".{name}(" not in source}
    assert not unmapped, f"map these query builders to an index in SHAPES (or EXEMPT them with a reason): {unmapped}"


def test_the_checker_rejects_what_no_index_serves() -> None:
    """The rules are not vacuous: the shapes issue 27 found unindexed before are refused
    without the indexes added for them."""
    before = [(keys, options) for keys, options in JOBS if keys[0][0] != "name" or keys[-1] != ("_id", -1)]
    name_by_created, sort = _page(StoreListFilter(name="email"), "created_at", False)
    assert served_by(name_by_created, sort, JOBS) is not None
    assert served_by(name_by_created, sort, before) is None
    old_search = q.list_filter(StoreListFilter(search="0001"))  # the $expr branch inside the $or
    assert served_by(old_search, [], JOBS) is None
    assert served_by({"failReason": "x"}, [], JOBS) is None


def test_the_checker_sees_partial_filters_keyset_branches_and_sorts() -> None:
    """Issue 36 item 10: the blind spots of the checker before it, each refused now."""
    # A partial index serves only a filter that implies its partialFilterExpression.
    assert served_by({"errorGroup": {"$exists": False}}, [], JOBS) is None
    assert served_by({"errorGroup": "g"}, [], JOBS) is not None
    assert served_by({"name": "email", "uniqueKey": "k", "status": "failed"}, [], JOBS) != [
        ("name", 1),
        ("uniqueKey", 1),
    ]
    # A keyset $or with a sort: its branches must be index bounds, not a filter.
    value, anchor = q.dt(NOW), ObjectId(ID)
    stray = {"name": "email", "$or": [{"updatedAt": {"$lt": value}}, {"updatedAt": value, "_id": {"$lt": anchor}}]}
    assert served_by(stray, [("createdAt", -1), ("_id", -1)], JOBS) is None
    # A sort on the counters: {minute, name} (the index before) serves neither window.
    old_counters = [([("_id", 1)], {}), ([("minute", 1), ("name", 1)], {})]
    for name in ("email", None):
        assert served_by(fleet.counters_filter(100, name), fleet.COUNTERS_SORT, old_counters) is None
        assert served_by(fleet.counters_filter(100, name), fleet.COUNTERS_SORT, SIDE["counters"]) is not None


def _paths_named(node: Any, keys: bool = True) -> set[str]:
    """Every field a pipeline part reads: with ``keys``, a query's keys that are not
    operators; always, ``"$field"`` references in expressions (``$$`` variables aside).
    A ``$group``'s keys are the names of its outputs: read it with ``keys=False``."""
    if isinstance(node, dict):
        named = {k for k in node if not k.startswith("$")} if keys else set()
        return named | set().union(*(_paths_named(v, keys) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_paths_named(v, keys) for v in node)) if node else set()
    if isinstance(node, str) and node.startswith("$") and not node.startswith("$$"):
        return {node[1:]}
    return set()


@pytest.mark.parametrize(("name", "since"), [(None, None), ("email", None), ("email", NOW - 3_600_000)])
def test_the_error_groups_read_is_index_only(name: str | None, since: int | None) -> None:
    """Issue 36 item 4: the errors view re-read every failed document every 3 s. Every field
    its grouping reads (filter, group keys, accumulators) is a key of the index that serves
    its ``$match``, so the plan reads index keys only (a covered plan: no document fetch)."""
    pipeline = mongo_reads.error_groups_pipeline(name, since, NOW)
    match, sort = _pipeline(pipeline)
    index = mongo_reads.ERROR_GROUPS_HINT  # run hinted: a name's {name, status} index would fetch
    assert served_by(match, sort, [(keys, options) for keys, options in JOBS if keys == index]) == index
    group = pipeline[1]["$group"]
    read = _paths_named(match) | _paths_named(group, keys=False)
    assert {"errorGroup", "status", "updatedAt", "name", "errorType", "failCount"} <= read  # the walker sees them
    missing = read - {field for field, _ in index}
    assert not missing, f"the errors view's read fetches documents for {missing}: add them to {index}"

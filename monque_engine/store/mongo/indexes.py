"""The indexes Monque creates on its jobs collection, with upstream's keys and options.

Same keys and options mean the same default index names (``status_1_nextRunAt_1`` …), so a
collection shared with Node Monque ends up with one set of indexes whichever side starts
first, and ``createIndexes`` is a no-op on the second. Upstream: ``createIndexes`` in
packages/core/src/scheduler/monque.ts (ueberBrot/monque); the list is DESIGN.md §3.
"""

from __future__ import annotations

from typing import Any

from pymongo import IndexModel

from .documents import COMPLETED, FAILED, PENDING, PROCESSING

IndexSpec = tuple[list[tuple[str, int]], dict[str, Any]]

#: The errors view's index: its filter's keys first (a group, its members' status, their last
#: failure), then the rest of what ``reads.error_groups_pipeline`` reads (name, error type,
#: fail count) so the plan needs no document. It was {errorGroup, status, updatedAt}.
ERROR_GROUPS_KEYS: list[tuple[str, int]] = [
    ("errorGroup", 1),
    ("status", 1),
    ("updatedAt", 1),
    ("name", 1),
    ("errorType", 1),
    ("failCount", 1),
]

_BG = {"background": True}


#: Ours, not upstream's: what the console filters and searches on. Created after upstream's
#: list (Node Monque neither creates nor needs them; they do not change its query plans).
#: ``uniqueKey`` (sparse: only jobs with a key) lets a unique-key search scan index keys
#: instead of documents; ``{status, createdAt, _id}`` serves a status tab in the console's
#: default order (newest first) without sorting the whole status in memory.
#: ``ERROR_GROUPS_KEYS`` (partial: only documents our processor failed) serves a group's
#: bulk retry / delete, and holds every field the errors view's grouping reads, so that
#: read is index-only (issue 36 item 4: it fetched every failed document every 3 s).
#: The status tab in the other two sort orders, and a name filter in each (issue 27: a page
#: of a rare status or name sorted by a field the index does not hold after the filter's
#: key scanned the collection until the page was full). A name-and-status view uses the
#: name's index and reads that name's documents to filter the status. Each costs about
#: 40 MB per 1M jobs (docs/scale-out.md).
CONSOLE_INDEXES: list[IndexSpec] = [
    ([("uniqueKey", 1)], {"sparse": True, **_BG}),
    ([("status", 1), ("createdAt", -1), ("_id", -1)], dict(_BG)),
    (ERROR_GROUPS_KEYS, {"partialFilterExpression": {"errorGroup": {"$exists": True}}, **_BG}),
    ([("status", 1), ("updatedAt", -1), ("_id", -1)], dict(_BG)),
    ([("status", 1), ("nextRunAt", -1), ("_id", -1)], dict(_BG)),
    ([("name", 1), ("createdAt", -1), ("_id", -1)], dict(_BG)),
    ([("name", 1), ("updatedAt", -1), ("_id", -1)], dict(_BG)),
    ([("name", 1), ("nextRunAt", -1), ("_id", -1)], dict(_BG)),
]


def index_specs(retention: bool) -> list[IndexSpec]:
    """(keys, options): upstream's list in its order, the retention index only when
    configured, then the console's own (``CONSOLE_INDEXES``)."""
    specs: list[IndexSpec] = [
        # claim / poll by status and due time
        ([("status", 1), ("nextRunAt", 1)], dict(_BG)),
        # unique keys dedupe only among live jobs
        (
            [("name", 1), ("uniqueKey", 1)],
            {
                "unique": True,
                "partialFilterExpression": {
                    "uniqueKey": {"$exists": True},
                    "status": {"$in": [PENDING, PROCESSING]},
                },
                **_BG,
            },
        ),
        ([("name", 1), ("status", 1)], dict(_BG)),
        # console listings: keyset pages with the _id tie-break
        ([("createdAt", -1), ("_id", -1)], dict(_BG)),
        ([("updatedAt", -1), ("_id", -1)], dict(_BG)),
        ([("nextRunAt", -1), ("_id", -1)], dict(_BG)),
        # ownership: heartbeats, release, collision check
        ([("claimedBy", 1), ("status", 1)], dict(_BG)),
        ([("lastHeartbeat", 1), ("status", 1)], dict(_BG)),
        # the claim query's shape: {name, status, nextRunAt, claimedBy}
        ([("name", 1), ("status", 1), ("nextRunAt", 1), ("claimedBy", 1)], dict(_BG)),
        # stale recovery
        ([("status", 1), ("lockedAt", 1), ("lastHeartbeat", 1)], dict(_BG)),
    ]
    if retention:
        specs.append(
            (
                [("status", 1), ("updatedAt", 1)],
                {
                    "partialFilterExpression": {
                        "status": {"$in": [COMPLETED, FAILED]},
                        "updatedAt": {"$exists": True},
                    },
                    **_BG,
                },
            )
        )
    specs.extend((list(keys), dict(options)) for keys, options in CONSOLE_INDEXES)
    return specs


def index_models(retention: bool) -> list[IndexModel]:
    return [IndexModel(keys, **options) for keys, options in index_specs(retention)]


#: Indexes of the fleet side collections (issue 13). Counters and registry records expire
#: by TTL on their date fields, so retention needs no job of ours on MongoDB (the store's
#: purges still run and are harmless).
COUNTER_TTL_S = 48 * 3600
INSTANCE_TTL_S = 24 * 3600


def fleet_index_specs() -> dict[str, list[IndexSpec]]:
    return {
        "instances": [([("lastHeartbeat", 1)], {"expireAfterSeconds": INSTANCE_TTL_S, **_BG})],
        "control": [([("kind", 1)], dict(_BG))],
        # {name, minute}: the health window's sort (``fleet.COUNTERS_SORT``) and a name's
        # window both read it in order. It was {minute, name} (issue 36 item 7), which served
        # neither the sort nor a name's window without a sort in memory; ``migrate`` (and
        # open, on a small collection) builds the new one; the old one can be dropped.
        "counters": [
            ([("name", 1), ("minute", 1)], dict(_BG)),
            ([("at", 1)], {"expireAfterSeconds": COUNTER_TTL_S, **_BG}),
        ],
    }


def fleet_index_models() -> dict[str, list[IndexModel]]:
    return {
        kind: [IndexModel(keys, **options) for keys, options in specs] for kind, specs in fleet_index_specs().items()
    }

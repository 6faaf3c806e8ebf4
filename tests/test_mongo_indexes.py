"""The MongoDB store's index list against upstream Monque's.

Hard-coded from upstream: ``createIndexes`` in packages/core/src/scheduler/monque.ts of
ueberBrot/monque (the 1.10 line: every index with ``background: true``; the retention
index only with ``jobRetention``), as summarised in DESIGN.md §3. Same keys and options
give the same index names, so Node and Python Monque share one index set.
"""

from __future__ import annotations

from typing import Any

from monque_engine.store.mongo.indexes import index_models, index_specs

BG = {"background": True}
UPSTREAM: list[tuple[dict[str, int], dict[str, Any]]] = [
    ({"status": 1, "nextRunAt": 1}, BG),
    (
        {"name": 1, "uniqueKey": 1},
        {
            "unique": True,
            "partialFilterExpression": {"uniqueKey": {"$exists": True}, "status": {"$in": ["pending", "processing"]}},
            **BG,
        },
    ),
    ({"name": 1, "status": 1}, BG),
    ({"createdAt": -1, "_id": -1}, BG),
    ({"updatedAt": -1, "_id": -1}, BG),
    ({"nextRunAt": -1, "_id": -1}, BG),
    ({"claimedBy": 1, "status": 1}, BG),
    ({"lastHeartbeat": 1, "status": 1}, BG),
    ({"name": 1, "status": 1, "nextRunAt": 1, "claimedBy": 1}, BG),
    ({"status": 1, "lockedAt": 1, "lastHeartbeat": 1}, BG),
]
UPSTREAM_RETENTION = (
    {"status": 1, "updatedAt": 1},
    {"partialFilterExpression": {"status": {"$in": ["completed", "failed"]}, "updatedAt": {"$exists": True}}, **BG},
)


#: Ours (issue 11 item 13, issue 27 item 7): the console's unique-key search, status tabs and name filter.
CONSOLE = [
    ({"uniqueKey": 1}, {"sparse": True, **BG}),
    ({"status": 1, "createdAt": -1, "_id": -1}, BG),
    (
        {"errorGroup": 1, "status": 1, "updatedAt": 1, "name": 1, "errorType": 1, "failCount": 1},
        {"partialFilterExpression": {"errorGroup": {"$exists": True}}, **BG},
    ),
    # issue 27 item 7: the status tab and the name filter in each console sort order
    ({"status": 1, "updatedAt": -1, "_id": -1}, BG),
    ({"status": 1, "nextRunAt": -1, "_id": -1}, BG),
    ({"name": 1, "createdAt": -1, "_id": -1}, BG),
    ({"name": 1, "updatedAt": -1, "_id": -1}, BG),
    ({"name": 1, "nextRunAt": -1, "_id": -1}, BG),
]


def _ours(retention: bool) -> list[tuple[dict[str, int], dict[str, Any]]]:
    return [(dict(keys), options) for keys, options in index_specs(retention)]


def test_index_list_matches_upstream_keys_order_and_options() -> None:
    assert _ours(False) == [*UPSTREAM, *CONSOLE]
    for (ours_keys, _), (up_keys, _) in zip(_ours(False), [*UPSTREAM, *CONSOLE], strict=True):
        assert list(ours_keys) == list(up_keys)  # key order matters for a compound index


def test_retention_index_only_when_configured() -> None:
    assert _ours(True) == [*UPSTREAM, UPSTREAM_RETENTION, *CONSOLE]


def test_index_models_have_upstreams_default_names() -> None:
    names = [m.document["name"] for m in index_models(True)]
    assert names == [
        "status_1_nextRunAt_1",
        "name_1_uniqueKey_1",
        "name_1_status_1",
        "createdAt_-1__id_-1",
        "updatedAt_-1__id_-1",
        "nextRunAt_-1__id_-1",
        "claimedBy_1_status_1",
        "lastHeartbeat_1_status_1",
        "name_1_status_1_nextRunAt_1_claimedBy_1",
        "status_1_lockedAt_1_lastHeartbeat_1",
        "status_1_updatedAt_1",
        "uniqueKey_1",
        "status_1_createdAt_-1__id_-1",
        "errorGroup_1_status_1_updatedAt_1_name_1_errorType_1_failCount_1",
        "status_1_updatedAt_-1__id_-1",
        "status_1_nextRunAt_-1__id_-1",
        "name_1_createdAt_-1__id_-1",
        "name_1_updatedAt_-1__id_-1",
        "name_1_nextRunAt_-1__id_-1",
    ]
    assert index_models(False)[1].document["unique"] is True

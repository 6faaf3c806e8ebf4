"""MongoDB query documents for attempt history, error groups and text search (issue 12).

Checked for SEMANTICS with mongomock used as a query-language evaluator (no server; see
test_mongo_evaluator.py). Where mongomock cannot evaluate a document (expressions inside
an update pipeline's array literal, ``$type`` in ``$expr``), its exact shape is asserted
instead; a real server runs the contract suite when MONQUE_TEST_MONGODB_URI is set.
"""

from __future__ import annotations

from typing import Any

import pytest
from pymongo import ReturnDocument
from pymongo.errors import ExecutionTimeout
from test_mongo_evaluator import evaluator_collection, evaluator_store, new_job, oid

from monque_engine.attempts import MAX_ATTEMPTS, Attempt
from monque_engine.errors import AggregationTimeoutError
from monque_engine.job import Job, JobSort, JobStatus
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import claims, liveness, management, reads
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo.indexes import index_specs

GROUP = "0123456789abcdef"


def _doc(n: int, **fields: Any) -> dict[str, Any]:
    job = new_job(oid(n), data=fields.pop("data", None)).to_job()
    return job.replace(**fields).to_document()


def _attempt(n: int, outcome: str = "retrying", **errors: Any) -> Attempt:
    return Attempt(n, outcome, "me", 100 * n, 100 * n + 50, **errors)


def test_fail_update_pushes_the_record_and_stores_type_and_group() -> None:
    c = evaluator_collection()
    c.insert_one(_doc(1, status=JobStatus.PROCESSING, claimed_by="me", locked_at_ms=100))
    record = _attempt(1, error_type="KeyError", error_message="'k'", traceback="Traceback ...")
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"),
        claims.fail_update(150, 1, "'k'", 900, record, GROUP),
        return_document=ReturnDocument.AFTER,
    )
    assert (doc["failReason"], doc["errorType"], doc["errorGroup"], doc["status"]) == (
        "'k'",
        "KeyError",
        GROUP,
        "pending",
    )
    job = Job.from_document(doc)
    assert job.attempts == (record,)
    assert doc["attempts"][0]["startedAt"] == q.dt(100) and doc["attempts"][0]["durationMs"] == 50
    # upstream's fields are exactly upstream's; ours are extra
    assert claims.fail_update(150, 1, "'k'", None)["$set"] == {
        "status": "failed",
        "failCount": 1,
        "failReason": "'k'",
        "updatedAt": q.dt(150),
    }


def test_pushes_keep_the_last_ten() -> None:
    c = evaluator_collection()
    history = [_attempt(n).to_document() for n in range(1, MAX_ATTEMPTS + 1)]
    c.insert_one({**_doc(1, status=JobStatus.PROCESSING, claimed_by="me"), "attempts": history})
    assert claims.push_attempt(_attempt(11)) == {"attempts": {"$each": [_attempt(11).to_document()], "$slice": -10}}
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"),
        claims.complete_update(2_000, None, _attempt(11, "completed")),
        return_document=ReturnDocument.AFTER,
    )
    assert [a.number for a in Job.from_document(doc).attempts] == list(range(2, 12))


def test_complete_and_retry_clear_the_error_fields_but_keep_history() -> None:
    c = evaluator_collection()
    c.insert_one(
        {
            **_doc(1, status=JobStatus.PROCESSING, claimed_by="me", fail_reason="x", error_type="E", error_group=GROUP),
            "attempts": [_attempt(1).to_document()],
        }
    )
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"),
        claims.complete_update(900, None, _attempt(2, "completed")),
        return_document=ReturnDocument.AFTER,
    )
    assert not {"failReason", "errorType", "errorGroup"} & set(doc) and len(doc["attempts"]) == 2
    c.insert_one(_doc(2, status=JobStatus.FAILED, fail_reason="x", error_type="E", error_group=GROUP))
    doc = c.find_one_and_update(
        management.guarded_filter(oid(2), management.RETRYABLE),
        management.retry_update(900),
        return_document=ReturnDocument.AFTER,
    )
    assert not {"failReason", "errorType", "errorGroup"} & set(doc)


def test_record_attempt_update_changes_only_the_history() -> None:
    c = evaluator_collection()
    c.insert_one(_doc(1, status=JobStatus.PROCESSING, claimed_by="me", locked_at_ms=100))
    before = c.find_one()
    c.update_one(claims.owned_filter(oid(1), "me"), claims.record_attempt_update(_attempt(1, "shutdown")))
    after = c.find_one()
    assert {k: v for k, v in after.items() if k != "attempts"} == before
    assert Job.from_document(after).attempts[0].outcome == "shutdown"


def test_stale_recovery_pipeline_exact_shape() -> None:
    """mongomock does not evaluate expressions inside an array literal in an update
    pipeline, so the shape is asserted: the record is built from each document's own
    fields, skipped when the last record is this attempt's, bounded by $slice."""
    now = q.dt(5_000)
    history = {"$cond": [{"$isArray": "$attempts"}, "$attempts", []]}
    record = {
        "attempt": {"$add": [{"$ifNull": ["$failCount", 0]}, 1]},
        "outcome": "stale",
        "instanceId": "$claimedBy",
        "startedAt": "$lockedAt",
        "endedAt": now,
        "durationMs": {"$subtract": [now, "$lockedAt"]},
    }
    already = {
        "$let": {
            "vars": {"last": {"$arrayElemAt": [history, -1]}},
            "in": {"$and": [{"$eq": ["$$last.startedAt", "$lockedAt"]}, {"$eq": ["$$last.instanceId", "$claimedBy"]}]},
        }
    }
    assert liveness.stale_recovery_pipeline(5_000) == [
        {
            "$set": {
                "attempts": {
                    "$cond": [
                        {"$and": [{"$gt": [{"$size": history}, 0]}, already]},
                        history,
                        {"$slice": [{"$concatArrays": [history, [record]]}, -10]},
                    ]
                },
                "status": "pending",
                "updatedAt": now,
            }
        },
        {"$unset": ["lockedAt", "claimedBy", "lastHeartbeat"]},
    ]


async def test_the_store_sends_attempts_in_complete_fail_and_stale_recovery() -> None:
    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))
    [claimed] = await store.claim("email", "me", 5_000, 1, 30_000)
    record = _attempt(1, error_type="ValueError", error_message="bad", traceback="tb")
    job = await store.fail(claimed.id, "me", 6_000, 1, "bad", 7_000, record, GROUP)
    assert job is not None and job.attempts == (record,) and job.error_group == GROUP
    [claimed] = await store.claim("email", "me", 8_000, 1, 30_000)
    job = await store.complete(claimed.id, "me", 9_000, None, _attempt(2, "completed"))
    assert job is not None and [a.outcome for a in job.attempts] == ["retrying", "completed"]
    assert job.error_group is None and job.error_type is None
    assert await store.record_attempt(claimed.id, "me", _attempt(3, "shutdown")) is False  # not processing any more
    try:
        await store.recover_stale(1_000, 2_000)
    except NotImplementedError:  # mongomock lacks the pipeline's $unset stage; the shape is what matters
        pass
    call = adapter.calls[-1]
    assert call[0] == "update_many" and call[1] == (
        liveness.stale_filter(1_000),
        liveness.stale_recovery_pipeline(2_000),
    )


def _members() -> list[dict[str, Any]]:
    hour = 3_600_000
    return [
        _doc(1, status=JobStatus.FAILED, fail_count=3, error_group="g1", error_type="KeyError", updated_at_ms=hour - 1),
        _doc(
            2,
            status=JobStatus.PENDING,
            fail_count=1,
            error_group="g1",
            error_type="KeyError",
            updated_at_ms=hour - 120_000,
        ),
        _doc(3, status=JobStatus.FAILED, fail_count=1, error_group="g1", error_type="KeyError", updated_at_ms=100),
        _doc(4, status=JobStatus.FAILED, fail_count=1, error_group="g2", error_type="OSError", updated_at_ms=hour - 5),
        # not members: retried (failCount 0), completed, no group (written by Node), processing
        _doc(5, status=JobStatus.PENDING, fail_count=0, error_group="g1", error_type="KeyError"),
        _doc(6, status=JobStatus.COMPLETED, fail_count=1, error_group="g1", error_type="KeyError"),
        _doc(7, status=JobStatus.FAILED, fail_count=1, fail_reason="by node"),
        _doc(8, status=JobStatus.PROCESSING, fail_count=1, error_group="g1", error_type="KeyError"),
    ]


async def test_error_groups_pipeline_groups_members_with_minute_buckets() -> None:
    c = evaluator_collection()
    c.insert_many(_members())
    store, adapter = evaluator_store(c)
    rows = {row.key: row for row in await store.error_groups(None, None, 3_600_000)}
    assert set(rows) == {"g1", "g2"}
    g1 = rows["g1"]
    assert (g1.count, g1.retrying, g1.error_type, g1.first_seen_ms, g1.last_seen_ms) == (
        3,
        1,
        "KeyError",
        100,
        3_599_999,
    )
    # now is the first instant of minute 60: 3_599_999 falls in minute 59, 3_480_000 in 58
    assert sum(g1.per_minute) == 2 and g1.per_minute[-2] == 1 and g1.per_minute[-3] == 1
    assert adapter.calls[-1][0] == "aggregate" and adapter.calls[-1][2] == {
        "maxTimeMS": q.STATS_MAX_TIME_MS,
        "hint": reads.ERROR_GROUPS_HINT,
    }
    assert [r.key for r in await store.error_groups(None, 3_000_000, 3_600_000)] != []
    assert {r.key: r.count for r in await store.error_groups(None, 3_000_000, 3_600_000)} == {"g1": 2, "g2": 1}
    assert await store.error_groups("other", None, 3_600_000) == []
    # the $match implies the partial index's filter, so the index can serve it
    match = reads.error_groups_pipeline(None, None, 0)[0]["$match"]
    spec = dict((tuple(map(tuple, keys)), options) for keys, options in index_specs(False))
    options = spec[tuple(reads.ERROR_GROUPS_HINT)]
    assert options["partialFilterExpression"] == {"errorGroup": {"$exists": True}} and match["errorGroup"] == {
        "$exists": True
    }


def test_group_selector_targets_exactly_the_members() -> None:
    c = evaluator_collection()
    c.insert_many(_members())
    selector = q.selector_filter(
        StoreSelector(error_group="g1", statuses=(JobStatus.FAILED, JobStatus.CANCELLED), updated_before_ms=3_599_999)
    )
    assert sorted(str(d["_id"]) for d in c.find(selector)) == [oid(3)]
    listing = q.list_filter(StoreListFilter(error_group="g1"))
    assert sorted(str(d["_id"]) for d in c.find(listing)) == [oid(1), oid(2), oid(3)]


def test_text_clause_shape_and_the_branches_the_evaluator_can_run() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _doc(1, data="plain ACME string"),
            _doc(2, data=["x", "acme"]),
            _doc(3, status=JobStatus.FAILED, fail_reason="SMTP relay timed out", error_type="TimeoutError"),
            _doc(4, data={"customer": "Globex"}),
        ]
    )
    clause = q.text_clause("acme")
    plain = {"$or": clause["$or"][:3]}
    assert sorted(str(d["_id"]) for d in c.find(plain)) == [oid(1), oid(2)]
    assert [str(d["_id"]) for d in c.find({"$or": q.text_clause("smtp relay")["$or"][:3]})] == [oid(3)]
    assert [str(d["_id"]) for d in c.find({"$or": q.text_clause("timeouterror")["$or"][:3]})] == [oid(3)]
    assert clause["$or"][0] == {"failReason": {"$regex": "acme", "$options": "i"}}
    assert clause["$or"][3] == {
        "$expr": {
            "$gt": [
                {
                    "$size": {
                        "$filter": {
                            "input": {
                                "$objectToArray": {"$cond": [{"$eq": [{"$type": "$data"}, "object"]}, "$data", {}]}
                            },
                            "cond": {
                                "$or": [
                                    {"$regexMatch": {"input": "$$this.k", "regex": "acme", "options": "i"}},
                                    {
                                        "$regexMatch": {
                                            "input": {
                                                "$convert": {
                                                    "input": "$$this.v",
                                                    "to": "string",
                                                    "onError": "",
                                                    "onNull": "null",
                                                }
                                            },
                                            "regex": "acme",
                                            "options": "i",
                                        }
                                    },
                                ]
                            },
                        }
                    }
                },
                0,
            ]
        }
    }
    assert q.text_clause("a.b*")["$or"][0]["failReason"]["$regex"] == r"a\.b\*"  # literal, not a pattern
    assert {"$and": [clause]} == {k: v for k, v in q.list_filter(StoreListFilter(text="acme")).items()}
    assert q.selector_filter(StoreSelector(text="acme")) == {"$and": [clause]}


async def test_a_text_search_that_runs_too_long_says_how_to_narrow_it() -> None:
    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))

    async def slow(*args: Any, **kwargs: Any) -> int:
        raise ExecutionTimeout("operation exceeded time limit", 50)

    adapter.count_documents = slow  # type: ignore[method-assign]
    with pytest.raises(AggregationTimeoutError) as info:
        await store.count(StoreListFilter(text="acme"))
    message = str(info.value)
    assert "exceeded its time limit" in message and "narrow it with a job name, a status or a time range" in message
    assert "\n" not in message

    def slow_find(*args: Any, **kwargs: Any) -> Any:
        raise ExecutionTimeout("operation exceeded time limit", 50)

    adapter.find = slow_find  # type: ignore[method-assign]
    with pytest.raises(AggregationTimeoutError, match="search for a longer string"):
        await store.page(StoreListFilter(text="acme"), JobSort(), "forward", None, 10)

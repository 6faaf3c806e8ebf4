"""The MongoDB store's query documents, checked for SEMANTICS with mongomock.

mongomock is used here as a MongoDB query-language evaluator, not a stand-in for the
contract suite: it tells us what a filter / update / sort / aggregation *means*; atomicity,
transactions and concurrency are checked by the contract suite on a real replica set.
Where mongomock cannot evaluate a document ($rand pipeline updates), the exact shape is
asserted instead.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pymongo import ReturnDocument
from test_mongo_evaluator import evaluator_collection, new_job, oid

from monque_engine.cursor import CursorAnchor
from monque_engine.job import Job, JobSort, JobStatus
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.mongo import claims, intake, liveness, management, reads
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import retention as mongo_retention
from monque_engine.timeutil import datetime_to_ms


def _job(**overrides: Any) -> dict[str, Any]:
    base = new_job(oid(overrides.pop("n", 1))).to_job()
    fields = {"status": JobStatus.PENDING}
    fields.update(overrides)
    return base.replace(**fields).to_document()


def _ids(docs: Any) -> list[str]:
    return [str(d["_id"]) for d in docs]


def test_evaluator_claim_takes_earliest_due_unclaimed_job_of_the_name() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(n=1, next_run_at_ms=3_000),
            _job(n=2, next_run_at_ms=2_000),
            _job(n=3, next_run_at_ms=9_000),  # not due
            _job(n=4, next_run_at_ms=1_000, name="other"),
            _job(n=5, next_run_at_ms=500, status=JobStatus.FAILED),
        ]
    )
    doc = c.find_one_and_update(
        claims.claim_filter("email", 5_000),
        claims.claim_update("me", 5_000, 30_000),
        sort=claims.CLAIM_SORT,
        return_document=ReturnDocument.AFTER,
    )
    job = Job.from_document(doc)
    assert job.id == oid(2)
    assert (
        job.status,
        job.claimed_by,
        job.locked_at_ms,
        job.last_heartbeat_ms,
        job.heartbeat_interval_ms,
        job.updated_at_ms,
    ) == (JobStatus.PROCESSING, "me", 5_000, 5_000, 30_000, 5_000)
    doc = c.find_one_and_update(
        claims.claim_filter("email", 5_000),
        claims.claim_update("me", 5_000, 30_000),
        sort=claims.CLAIM_SORT,
        return_document=ReturnDocument.AFTER,
    )
    assert str(doc["_id"]) == oid(1)
    assert c.find_one_and_update(claims.claim_filter("email", 5_000), claims.claim_update("me", 5_000, 1)) is None


def test_evaluator_claim_takes_pending_job_that_still_names_an_owner() -> None:
    """Issue 11 item 7: upstream's claimNext filter is {name, status, nextRunAt} only, so a
    pending document that still carries ``claimedBy`` is claimable (Node would claim it)."""
    c = evaluator_collection()
    c.insert_one(_job(n=1, claimed_by="ghost"))
    assert claims.claim_filter("email", 5_000) == {
        "name": "email",
        "status": "pending",
        "nextRunAt": {"$lte": q.dt(5_000)},
    }
    doc = c.find_one_and_update(
        claims.claim_filter("email", 5_000),
        claims.claim_update("me", 5_000, 30_000),
        sort=claims.CLAIM_SORT,
        return_document=ReturnDocument.AFTER,
    )
    assert doc is not None and doc["claimedBy"] == "me" and doc["status"] == "processing"


def test_evaluator_owned_complete_applies_only_to_processing_job_of_owner() -> None:
    c = evaluator_collection()
    c.insert_one(
        _job(
            n=1,
            status=JobStatus.PROCESSING,
            claimed_by="me",
            locked_at_ms=1,
            last_heartbeat_ms=1,
            heartbeat_interval_ms=30_000,
            fail_reason="earlier",
        )
    )
    assert c.find_one_and_update(claims.owned_filter(oid(1), "other"), claims.complete_update(9_000, None)) is None
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"), claims.complete_update(9_000, None), return_document=ReturnDocument.AFTER
    )
    assert doc["status"] == "completed"
    assert not {"lockedAt", "claimedBy", "lastHeartbeat", "failReason"} & set(doc)
    assert doc["heartbeatInterval"] == 30_000  # kept, DESIGN §3
    assert c.find_one_and_update(claims.owned_filter(oid(1), "me"), claims.complete_update(9_500, None)) is None


def test_evaluator_recurring_complete_returns_to_pending_with_fail_count_zero() -> None:
    c = evaluator_collection()
    c.insert_one(_job(n=1, status=JobStatus.PROCESSING, claimed_by="me", fail_count=3, repeat_interval="* * * * *"))
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"), claims.complete_update(9_000, 60_000), return_document=ReturnDocument.AFTER
    )
    job = Job.from_document(doc)
    assert (job.status, job.next_run_at_ms, job.fail_count, job.claimed_by, job.repeat_interval) == (
        JobStatus.PENDING,
        60_000,
        0,
        None,
        "* * * * *",
    )


@pytest.mark.parametrize("retry_at", [None, 20_000])
def test_evaluator_owned_fail_writes_terminal_or_retry_state(retry_at: int | None) -> None:
    c = evaluator_collection()
    c.insert_one(_job(n=1, status=JobStatus.PROCESSING, claimed_by="me", locked_at_ms=5))
    doc = c.find_one_and_update(
        claims.owned_filter(oid(1), "me"),
        claims.fail_update(9_000, 4, "boom", retry_at),
        return_document=ReturnDocument.AFTER,
    )
    job = Job.from_document(doc)
    assert (job.fail_count, job.fail_reason, job.updated_at_ms, job.locked_at_ms, job.claimed_by) == (
        4,
        "boom",
        9_000,
        None,
        None,
    )
    if retry_at is None:
        assert job.status is JobStatus.FAILED and job.next_run_at_ms == 1_000
    else:
        assert job.status is JobStatus.PENDING and job.next_run_at_ms == retry_at


def test_evaluator_release_heartbeat_and_stale_recovery_are_guarded() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(n=1, status=JobStatus.PROCESSING, claimed_by="me", locked_at_ms=100, last_heartbeat_ms=100),
            _job(n=2, status=JobStatus.PROCESSING, claimed_by="other", locked_at_ms=5_000, last_heartbeat_ms=5_000),
            _job(n=3, status=JobStatus.PENDING),
        ]
    )
    assert c.update_many(liveness.heartbeat_filter("me"), liveness.heartbeat_update(7_000)).modified_count == 1
    assert datetime_to_ms(c.find_one({"_id": q.oid(oid(1))})["lastHeartbeat"]) == 7_000
    assert c.find_one(liveness.live_claim_filter("me", 6_999)) is not None
    assert c.find_one(liveness.live_claim_filter("me", 7_000)) is not None  # upstream: lastHeartbeat $gte threshold
    assert c.find_one(liveness.live_claim_filter("me", 7_001)) is None
    # job 1's lockedAt is ancient but its heartbeat is fresh: only job 2 is stale
    assert c.update_many(liveness.stale_filter(6_000), q.to_pending_update(8_000)).modified_count == 1
    recovered = c.find_one({"_id": q.oid(oid(2))})
    assert recovered["status"] == "pending" and "claimedBy" not in recovered and "lockedAt" not in recovered
    assert (
        c.update_many(claims.release_filter([oid(1), oid(3)], "other"), q.to_pending_update(9_000)).modified_count == 0
    )
    assert c.update_many(claims.release_filter([oid(1)], "me"), q.to_pending_update(9_000)).modified_count == 1


def test_evaluator_stale_recovery_judges_heartbeat_then_locked_at() -> None:
    """Issue 11 item 9 / store contract: stale means lastHeartbeat before the cutoff, or no
    lastHeartbeat and lockedAt before it. A long job (old lockedAt) whose owner, Python or
    Node, still heartbeats is never pulled back, whatever lock timeout the caller uses."""
    c = evaluator_collection()
    c.insert_many(
        [
            _job(n=1, status=JobStatus.PROCESSING, claimed_by="node-1", locked_at_ms=100, last_heartbeat_ms=9_000),
            _job(n=2, status=JobStatus.PROCESSING, claimed_by="dead", locked_at_ms=100, last_heartbeat_ms=200),
            _job(n=3, status=JobStatus.PROCESSING, claimed_by="old", locked_at_ms=100),  # no heartbeat field
            _job(n=4, status=JobStatus.PROCESSING, claimed_by="young", locked_at_ms=8_000),  # no heartbeat field
            _job(n=5, status=JobStatus.PENDING, locked_at_ms=100, last_heartbeat_ms=100),
        ]
    )
    assert sorted(_ids(c.find(liveness.stale_filter(5_000)))) == [oid(2), oid(3)]
    assert c.update_many(liveness.stale_filter(5_000), q.to_pending_update(10_000)).modified_count == 2
    assert c.find_one({"_id": q.oid(oid(1))})["status"] == "processing"
    assert c.find_one({"_id": q.oid(oid(4))})["status"] == "processing"
    assert c.find_one(liveness.stale_filter(9_000)) is not None and c.find_one(liveness.stale_filter(8_000)) is None
    # every branch leads with the indexed status and ranges over one indexed field (or, for a
    # job no owner can beat or complete, matches the {status, lockedAt, lastHeartbeat} or the
    # {claimedBy, status} index's keys: issue 34)
    stale = liveness.stale_filter(5_000)
    assert stale["status"] == "processing" and [sorted(b) for b in stale["$or"]] == [
        ["lastHeartbeat"],
        ["lastHeartbeat", "lockedAt"],
        ["lastHeartbeat", "lockedAt"],
        ["claimedBy"],
    ]


def test_evaluator_purge_deletes_only_that_status_before_cutoff() -> None:
    c = evaluator_collection(retention=True)
    c.insert_many(
        [
            _job(n=1, status=JobStatus.COMPLETED, updated_at_ms=100),
            _job(n=2, status=JobStatus.COMPLETED, updated_at_ms=5_000),
            _job(n=3, status=JobStatus.FAILED, updated_at_ms=100),
        ]
    )
    assert c.delete_many(mongo_retention.purge_filter(JobStatus.COMPLETED, 1_000)).deleted_count == 1
    assert sorted(_ids(c.find())) == [oid(2), oid(3)]


def test_evaluator_selector_filter_name_statuses_and_created_bounds() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(n=1, created_at_ms=100, status=JobStatus.PENDING),
            _job(n=2, created_at_ms=200, status=JobStatus.FAILED),
            _job(n=3, created_at_ms=300, status=JobStatus.CANCELLED),
            _job(n=4, created_at_ms=200, status=JobStatus.FAILED, name="other"),
        ]
    )
    sel = StoreSelector(name="email", statuses=(JobStatus.FAILED, JobStatus.CANCELLED), created_before_ms=300)
    assert _ids(c.find(q.selector_filter(sel))) == [oid(2)]
    assert sorted(_ids(c.find(q.selector_filter(StoreSelector(created_after_ms=100))))) == [oid(2), oid(3), oid(4)]
    assert list(c.find(q.selector_filter(StoreSelector(statuses=())))) == []
    assert q.selector_filter(StoreSelector()) == {}


def test_evaluator_bulk_cancel_and_delete_use_the_selector() -> None:
    c = evaluator_collection()
    c.insert_many([_job(n=1), _job(n=2, status=JobStatus.PROCESSING), _job(n=3, name="other")])
    sel = StoreSelector(name="email", statuses=(JobStatus.PENDING,))
    assert c.update_many(q.selector_filter(sel), management.cancel_update(5_000)).modified_count == 1
    assert c.find_one({"_id": q.oid(oid(1))})["status"] == "cancelled"
    assert c.delete_many(q.selector_filter(StoreSelector(name="other"))).deleted_count == 1


def test_retry_many_pipeline_exact_shape() -> None:
    """mongomock has no $rand, so the pipeline's exact shape is asserted here. The stagger
    term is upstream's (retryJobs, @monque/core 1.5): ``$add: [now, {$multiply: [{$rand: {}},
    spread]}]`` with no ``$floor`` (issue 11 item 8)."""
    assert management.retry_many_pipeline(1_000, 30_000) == [
        {
            "$set": {
                "status": "pending",
                "failCount": 0,
                "nextRunAt": {"$add": [q.dt(1_000), {"$multiply": [{"$rand": {}}, 30_000]}]},
                "updatedAt": q.dt(1_000),
            }
        },
        {"$unset": ["failReason", "lockedAt", "claimedBy", "lastHeartbeat", "errorType", "errorGroup"]},
    ]
    assert management.retry_many_pipeline(1_000, 0)[0]["$set"]["nextRunAt"]["$add"][1]["$multiply"][1] == 1


@pytest.mark.parametrize("rand", [0.0, 0.5, 0.999999])
def test_evaluator_retry_many_pipeline_with_rand_pinned(rand: float) -> None:
    """The rest of the pipeline evaluated with ``$rand`` pinned to a constant. mongomock also
    cannot add a number to a date, so the stagger term is evaluated on its own (as a number)
    and the date addition is covered by the exact-shape test above."""
    pipeline = copy.deepcopy(management.retry_many_pipeline(1_000, 30_000))
    stagger = pipeline[0]["$set"].pop("nextRunAt")["$add"][1]
    stagger["$multiply"][0] = rand
    pipeline[0]["$set"]["stagger"] = stagger
    # mongomock lacks the $unset *stage*; {$project: {f: 0}} is its documented equivalent.
    pipeline[1] = {"$project": {field: 0 for field in pipeline[1]["$unset"]}}
    c = evaluator_collection()
    c.insert_many(
        [
            _job(n=1, status=JobStatus.FAILED, fail_count=5, fail_reason="x", claimed_by="me"),
            _job(n=2, status=JobStatus.CANCELLED),
        ]
    )
    sel = StoreSelector(statuses=(JobStatus.FAILED, JobStatus.CANCELLED))
    assert c.update_many(q.selector_filter(sel), pipeline).modified_count == 2
    job = Job.from_document(c.find_one({"_id": q.oid(oid(1))}))
    assert job.status is JobStatus.PENDING and job.fail_count == 0 and job.fail_reason is None
    assert job.claimed_by is None and job.updated_at_ms == 1_000
    assert c.find_one({"_id": q.oid(oid(1))})["stagger"] == pytest.approx(rand * 30_000)
    assert 0 <= rand * 30_000 < 30_000


def test_evaluator_single_management_guards() -> None:
    c = evaluator_collection()
    c.insert_many([_job(n=1), _job(n=2, status=JobStatus.FAILED, fail_count=2, fail_reason="x")])
    assert c.find_one_and_update(management.guarded_filter(oid(2), (q.PENDING,)), management.cancel_update(5)) is None
    assert c.find_one_and_update(
        management.guarded_filter(oid(1), (q.PENDING,)),
        management.reschedule_update(77_000, 6),
        return_document=ReturnDocument.AFTER,
    )["nextRunAt"] == q.dt(77_000)
    before = c.find_one_and_update(
        management.guarded_filter(oid(2), management.RETRYABLE),
        management.retry_update(9_000),
        return_document=ReturnDocument.BEFORE,
    )
    after = Job.from_document(c.find_one({"_id": q.oid(oid(2))}))
    assert (
        management.retried_job(Job.from_document(before), 9_000) == after
    )  # the computed post-image is the stored one


def test_evaluator_unique_upsert_inserts_once_and_returns_existing_live_job() -> None:
    c = evaluator_collection()
    first = new_job(oid(1), unique_key="k1")
    second = new_job(oid(2), unique_key="k1", data={"other": True})
    a = c.find_one_and_update(
        q.unique_key_filter("email", "k1"),
        intake.unique_insert_update(first),
        upsert=True,
        return_document=ReturnDocument.AFTER,
    )
    b = c.find_one_and_update(
        q.unique_key_filter("email", "k1"),
        intake.unique_insert_update(second),
        upsert=True,
        return_document=ReturnDocument.AFTER,
    )
    assert str(a["_id"]) == str(b["_id"]) == oid(1) and b["data"] == first.data
    c.update_one({"_id": q.oid(oid(1))}, {"$set": {"status": "completed"}})
    d = c.find_one_and_update(
        q.unique_key_filter("email", "k1"),
        intake.unique_insert_update(second),
        upsert=True,
        return_document=ReturnDocument.AFTER,
    )
    assert str(d["_id"]) == oid(2)  # a finished job does not block the key
    assert Job.from_document(d) == second.to_job()


def _page_ids(
    c: Any,
    sort: JobSort,
    direction: str,
    anchor: CursorAnchor | None,
    limit: int = 3,
    flt: StoreListFilter | None = None,
) -> list[str]:
    query, order = q.page_query(flt or StoreListFilter(), sort, direction, anchor)  # type: ignore[arg-type]
    return _ids(c.find(query).sort(order).limit(limit))


def test_evaluator_keyset_pages_walk_every_job_once_with_ties() -> None:
    c = evaluator_collection()
    # createdAt ties on purpose: the _id tie-break must keep pages disjoint and complete.
    created = [300, 100, 200, 100, 300, 200, 100]
    c.insert_many([_job(n=i + 1, created_at_ms=t) for i, t in enumerate(created)])
    expected_asc = [oid(n) for n in sorted(range(1, 8), key=lambda n: (created[n - 1], n))]
    for by, direction, expected in (
        ("created_at", "asc", expected_asc),
        ("created_at", "desc", expected_asc[::-1]),
        ("id", "asc", [oid(n) for n in range(1, 8)]),
    ):
        sort = JobSort(by, direction)  # type: ignore[arg-type]
        seen: list[str] = []
        anchor = None
        while True:
            page = _page_ids(c, sort, "forward", anchor)
            if not page:
                break
            seen += page
            last = Job.from_document(c.find_one({"_id": q.oid(page[-1])}))
            anchor = CursorAnchor(last.id, None if by == "id" else last.created_at_ms)
        assert seen == expected
        # backward from the end returns the previous page in reverse traversal order
        end = Job.from_document(c.find_one({"_id": q.oid(expected[-1])}))
        back = _page_ids(c, sort, "backward", CursorAnchor(end.id, None if by == "id" else end.created_at_ms))
        assert back == expected[-4:-1][::-1]


def test_page_query_or_shape_matches_upstream_cursor_listing() -> None:
    query, order = q.page_query(StoreListFilter(), JobSort("updated_at", "desc"), "forward", CursorAnchor(oid(1), 5))
    assert query == {
        "$and": [{"$or": [{"updatedAt": {"$lt": q.dt(5)}}, {"updatedAt": q.dt(5), "_id": {"$lt": q.oid(oid(1))}}]}]
    }
    assert order == [("updatedAt", -1), ("_id", -1)]


def test_evaluator_list_filter_bounds_are_inclusive_and_search_matches_prefix_or_key() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(n=1, created_at_ms=100, updated_at_ms=100, next_run_at_ms=100),
            _job(n=2, created_at_ms=200, updated_at_ms=200, next_run_at_ms=200, unique_key="invoice-42"),
            _job(n=3, created_at_ms=300, updated_at_ms=300, next_run_at_ms=300, name="other"),
        ]
    )
    flt = StoreListFilter(created_from_ms=100, created_to_ms=200, updated_to_ms=200, next_run_from_ms=200)
    assert _ids(c.find(q.list_filter(flt))) == [oid(2)]
    assert _ids(c.find(q.list_filter(StoreListFilter(search="ICE-4")))) == []  # key substring is case-sensitive
    assert _ids(c.find(q.list_filter(StoreListFilter(search="ice-4")))) == [oid(2)]
    assert _ids(c.find(q.list_filter(StoreListFilter(search=oid(3).upper())))) == [oid(3)]
    assert sorted(_ids(c.find(q.list_filter(StoreListFilter(search="65f0"))))) == [oid(1), oid(2), oid(3)]
    assert _ids(c.find(q.list_filter(StoreListFilter(search="a.b*")))) == []  # regex-escaped, not a pattern
    assert c.count_documents(q.list_filter(StoreListFilter(name="other", statuses=(JobStatus.PENDING,)))) == 1


def test_evaluator_stats_pipeline_counts_and_completed_duration() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(n=1, status=JobStatus.COMPLETED, created_at_ms=1_000, updated_at_ms=4_000),
            _job(n=2, status=JobStatus.COMPLETED, created_at_ms=1_000, updated_at_ms=2_000),
            _job(n=3, status=JobStatus.FAILED, created_at_ms=1_000, updated_at_ms=9_000),
            _job(n=4, status=JobStatus.PENDING, name="other"),
        ]
    )
    rows = {r["_id"]: r for r in c.aggregate(reads.status_counts_pipeline("email")[0])}
    assert {k: v["count"] for k, v in rows.items()} == {"completed": 2, "failed": 1}
    (sample,) = c.aggregate(reads.completed_duration_pipeline("email"))
    assert (sample["count"], sample["durationMs"]) == (2, 4_000)
    by_name = {
        (r["_id"]["name"], r["_id"]["status"]): r["count"] for r in c.aggregate(reads.counts_by_name_pipeline()[0])
    }
    assert by_name == {("email", "completed"): 2, ("email", "failed"): 1, ("other", "pending"): 1}


def test_evaluator_next_due_filter_only_pending_of_names() -> None:
    c = evaluator_collection()
    c.insert_many(
        [
            _job(n=1, next_run_at_ms=50, status=JobStatus.FAILED),
            _job(n=2, next_run_at_ms=70),
            _job(n=3, next_run_at_ms=10, name="other"),
        ]
    )
    doc = c.find_one(claims.next_due_filter(["email"]), sort=[("nextRunAt", 1)])
    assert str(doc["_id"]) == oid(2)


def test_evaluator_recurring_filter_tells_scheduled_jobs_from_one_offs() -> None:
    """Checked with a MongoDB query-language evaluator (mongomock), not a server."""
    c = evaluator_collection()
    c.insert_many([_job(n=1), _job(n=2, repeat_interval="@hourly"), _job(n=3)])
    assert _ids(c.find(q.list_filter(StoreListFilter(recurring=True)))) == [oid(2)]
    assert sorted(_ids(c.find(q.list_filter(StoreListFilter(recurring=False))))) == [oid(1), oid(3)]

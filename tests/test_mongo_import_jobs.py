"""``MongoStore.import_jobs`` and the store-neutral checks on MongoDB. FAKES: documents are
evaluated by mongomock and transactions by the fake session of the enqueue_many tests (no
server here); the contract suite (contract/intake/test_import_jobs.py) runs them on a real one."""

from __future__ import annotations

import pytest
from job_samples import sample_jobs
from test_mongo_enqueue_many_batches import _transactional_store
from test_mongo_evaluator import evaluator_store

from monque_engine.errors import ConnectionError, PartialInsertError
from monque_engine.store import InvalidCollectionNameError, InvalidStoreUrlError, check_collection_name, locate_store
from monque_engine.store.mongo import MongoStore


async def test_imported_documents_are_the_jobs_as_node_monque_reads_them() -> None:
    store, adapter = evaluator_store()
    jobs = sample_jobs()
    assert await store.import_jobs(jobs) == len(jobs)
    for job in jobs:
        assert await store.get(job.id) == job
    failed = adapter.sync.find_one({"status": "failed"})
    assert failed["errorType"] == "httpx.ConnectTimeout" and failed["attempts"][0]["outcome"] == "failed"
    assert "claimedBy" not in adapter.sync.find_one({"status": "completed"})


async def test_standalone_import_that_fails_keeps_the_first_jobs_and_says_how_many() -> None:
    store, adapter = evaluator_store(transactions=False)
    jobs = sample_jobs()
    await store.import_jobs(jobs[2:3])
    with pytest.raises(PartialInsertError) as info:
        await store.import_jobs(jobs)  # the third clashes: ordered, the first two landed
    assert [job.id for job in info.value.stored] == [jobs[0].id, jobs[1].id] and info.value.total == len(jobs)
    assert "the first 2 of 6 jobs were imported" in str(info.value) and "from index 2" in str(info.value)
    assert sorted(str(doc["_id"]) for doc in adapter.sync.find()) == sorted(job.id for job in jobs[:3])


async def test_a_clash_on_the_first_job_stores_nothing_and_is_a_plain_connection_error() -> None:
    store, adapter = evaluator_store(transactions=False)
    jobs = sample_jobs()
    await store.import_jobs(jobs[:1])
    with pytest.raises(ConnectionError) as info:
        await store.import_jobs(jobs)
    assert not isinstance(info.value, PartialInsertError)
    assert [str(doc["_id"]) for doc in adapter.sync.find()] == [jobs[0].id]


async def test_a_replica_set_imports_in_bounded_transactions_each_all_or_none() -> None:
    store, _, client = _transactional_store()  # TRANSACTION_BATCH = 3
    jobs = sample_jobs()
    await store.import_jobs(jobs[:3])
    assert len(client.transactions) == 1
    store2, adapter2, _ = _transactional_store()
    await store2.import_jobs([jobs[4]])
    with pytest.raises(PartialInsertError) as info:
        await store2.import_jobs(jobs)  # the second transaction (jobs 3-5) holds the clash
    assert len(info.value.stored) == 3
    assert sorted(str(doc["_id"]) for doc in adapter2.sync.find()) == sorted(
        [*(job.id for job in jobs[:3]), jobs[4].id]
    )


@pytest.mark.parametrize("name", ["", "  ", "a$b", "nul\x00", "system.jobs"])
def test_mongodb_refuses_collection_names_the_server_would(name: str) -> None:
    with pytest.raises(InvalidCollectionNameError, match="Collection name"):
        check_collection_name("mongodb://db.example/app", name)
    with pytest.raises(InvalidCollectionNameError):
        MongoStore.check_collection_name(name)


def test_mongodb_accepts_names_sqlite_would_not() -> None:
    assert check_collection_name("mongodb://db.example/app", "jobs-v2.eu") == "jobs-v2.eu"


def test_a_mongodb_url_is_located_without_connecting() -> None:
    location = locate_store("mongodb://user:pw@unreachable.invalid:27017/app")  # no server: never contacted
    assert (location.kind, location.path, location.exists, location.collections) == ("mongodb", None, None, None)
    with pytest.raises(InvalidStoreUrlError):
        locate_store("mongodb:///app")

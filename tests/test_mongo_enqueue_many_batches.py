"""``enqueue_many`` on MongoDB at scale (issue 27 items 5 and 12). FAKES: the documents are
evaluated by mongomock; transactions by a fake session that runs ``with_transaction``'s
callback and, when it raises, removes what it inserted (what a server's abort does).
Transaction limits themselves (60 s, the cache) would need a server."""

from __future__ import annotations

from typing import Any

import pytest
from test_mongo_evaluator import evaluator_store, new_job, oid

from monque_engine.errors import ConnectionError, PartialInsertError


class _Session:
    def __init__(self, sync: Any, log: list[int]) -> None:
        self._sync = sync
        self._log = log

    async def __aenter__(self) -> _Session:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None

    async def with_transaction(self, callback: Any) -> Any:
        before = {doc["_id"] for doc in self._sync.find({}, {"_id": 1})}
        self._log.append(0)
        try:
            return await callback(self)
        except BaseException:
            self._sync.delete_many({"_id": {"$nin": list(before)}})  # the abort
            raise


class _Client:
    def __init__(self, sync: Any) -> None:
        self.sync = sync
        self.transactions: list[int] = []

    def start_session(self) -> _Session:
        return _Session(self.sync, self.transactions)


def _transactional_store() -> tuple[Any, Any, _Client]:
    store, adapter = evaluator_store(transactions=True)
    client = _Client(adapter.sync)
    adapter.database = type("Db", (), {"client": client})()  # type: ignore[attr-defined]
    store.TRANSACTION_BATCH = 3
    return store, adapter, client


async def test_a_large_batch_is_written_in_bounded_transactions() -> None:
    store, adapter, client = _transactional_store()
    jobs = await store.insert_many([new_job(oid(n)) for n in range(1, 9)])
    assert [j.id for j in jobs] == [oid(n) for n in range(1, 9)]
    assert len(client.transactions) == 3  # 3 + 3 + 2
    sizes = [len(args[0]) for name, args, _ in adapter.calls if name == "insert_many"]
    assert sizes == [3, 3, 2]


async def test_a_failing_batch_keeps_the_earlier_ones_and_says_how_many() -> None:
    store, adapter, _ = _transactional_store()
    await store.insert(new_job(oid(99)))
    batch = [new_job(oid(n)) for n in range(1, 8)] + [new_job(oid(99))]  # the 3rd transaction collides
    with pytest.raises(PartialInsertError) as info:
        await store.insert_many(batch)
    error = info.value
    assert isinstance(error, ConnectionError) and error.total == 8
    assert [j.id for j in error.stored] == [oid(n) for n in range(1, 7)]
    assert "the first 6 of 8 jobs were stored" in str(error) and "from index 6" in str(error)
    assert sorted(str(d["_id"]) for d in adapter.sync.find()) == sorted([oid(n) for n in range(1, 7)] + [oid(99)])


async def test_a_batch_within_one_transaction_is_still_all_or_nothing() -> None:
    store, adapter, _ = _transactional_store()
    await store.insert(new_job(oid(99)))
    with pytest.raises(ConnectionError) as info:
        await store.insert_many([new_job(oid(1)), new_job(oid(99))])
    assert not isinstance(info.value, PartialInsertError)
    assert [str(d["_id"]) for d in adapter.sync.find()] == [oid(99)]


async def test_standalone_undo_leaves_jobs_another_worker_already_claimed() -> None:
    """Item 12: between the inserts and the undo another worker claimed job 1; the undo
    deletes only the jobs still pending and untouched."""
    store, adapter = evaluator_store(transactions=False)
    await store.insert(new_job(oid(9), run_at=5_000))  # not due: the claim takes job 1
    original = adapter.delete_many

    async def claim_first_then_delete(filter: Any, **kw: Any) -> Any:
        await store.claim("email", "other-worker", 2_000, 1, 30_000)  # job 1 is due at 1,000
        return await original(filter, **kw)

    adapter.delete_many = claim_first_then_delete  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        await store.insert_many([new_job(oid(1)), new_job(oid(2)), new_job(oid(9))])  # oid(9) collides
    left = {str(d["_id"]): d["status"] for d in adapter.sync.find()}
    assert left == {oid(1): "processing", oid(9): "pending"}

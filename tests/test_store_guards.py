"""The guards (which statuses cancel, retry and reschedule may touch) are defined once, in
``store/guards.py``, and the scheduler, the SQLite statements and the MongoDB filters all
agree with that definition (issue 35, design item 2).

Each backend is driven for real, one job in every status per action (a SQLite file; the
MongoDB store over the filter evaluator, as the other ``test_mongo_*`` files do): the
action writes exactly when the status is in the shared guard. And no module of the
scheduler's management or of either store spells a guard's statuses on its own any more.
"""

from __future__ import annotations

import ast
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_mongo_evaluator import evaluator_collection, evaluator_store, new_job, oid

import monque_engine
from monque_engine.job import JobStatus
from monque_engine.scheduler import manager
from monque_engine.store import guards
from monque_engine.store.base import JobStore, StoreOpenOptions
from monque_engine.store.mongo import documents as q
from monque_engine.store.mongo import management as mongo_management
from monque_engine.store.sqlite import statements
from monque_engine.store.sqlite.schema import Tables
from monque_engine.store.sqlite.store import SqliteStore

ENGINE = Path(monque_engine.__file__).resolve().parent
NOW = 5_000

#: Each guarded action as a store call on one job; True when it wrote.
ACTIONS: dict[str, Callable[[JobStore, str], Awaitable[bool]]] = {
    "cancel": lambda store, job_id: _wrote(store.cancel(job_id, NOW)),
    "retry": lambda store, job_id: _wrote(store.retry(job_id, NOW)),
    "reschedule": lambda store, job_id: _wrote(store.reschedule(job_id, 90_000, NOW)),
}


async def _wrote(call: Awaitable[Any]) -> bool:
    return await call is not None


def test_the_guards_are_the_ones_upstream_defines() -> None:
    assert dict(guards.GUARDS) == {
        "cancel": (JobStatus.PENDING,),
        "retry": (JobStatus.FAILED, JobStatus.CANCELLED),
        "reschedule": (JobStatus.PENDING,),
        # Ours (issue 37): a stop request reaches running jobs only; its write is guarded by
        # the claim as well (owner and lockedAt: test_multiprocess_running_jobs.py).
        "stop": (JobStatus.PROCESSING,),
    }
    assert "delete" not in guards.GUARDS  # any job may be deleted


def test_the_scheduler_and_both_stores_read_the_one_definition() -> None:
    assert manager._GUARDS is guards.GUARDS
    for action, sqlite_guard, mongo_guard in (
        ("cancel", statements.CANCEL_GUARD, mongo_management.CANCEL_GUARD),
        ("retry", statements.RETRY_GUARD, mongo_management.RETRYABLE),
        ("reschedule", statements.RESCHEDULE_GUARD, mongo_management.RESCHEDULE_GUARD),
    ):
        assert sqlite_guard == mongo_guard == guards.values(guards.GUARDS[action]), action
    # The retry's read-before-write carries the same statuses as its write.
    assert "status IN ('failed','cancelled')" in statements.retry_before(Tables("jobs"))


@pytest.mark.parametrize("action", sorted(ACTIONS))
async def test_sqlite_writes_exactly_the_statuses_the_guard_allows(tmp_path: Path, action: str) -> None:
    store = SqliteStore.from_url(f"sqlite:///{tmp_path / 'guards.db'}")
    await store.open(StoreOpenOptions())
    try:
        wrote: dict[JobStatus, bool] = {}
        for n, status in enumerate(JobStatus, start=1):
            job = await store.insert(replace(new_job(oid(n)), data_json='{"n": 1}'))  # the JSON SQLite stores
            await store.execute_write(
                lambda conn, job_id=job.id, value=status.value: conn.execute(
                    "UPDATE monque_jobs SET status = ? WHERE id = ?", (value, job_id)
                )
            )
            wrote[status] = await ACTIONS[action](store, job.id)
    finally:
        await store.close()
    assert {status for status, done in wrote.items() if done} == set(guards.GUARDS[action])


@pytest.mark.parametrize("action", sorted(ACTIONS))
async def test_mongodb_writes_exactly_the_statuses_the_guard_allows(action: str) -> None:
    collection = evaluator_collection()
    store, _ = evaluator_store(collection)
    wrote: dict[JobStatus, bool] = {}
    for n, status in enumerate(JobStatus, start=1):
        await store.insert(new_job(oid(n)))
        collection.update_one({"_id": q.oid(oid(n))}, {"$set": {"status": status.value}})
        wrote[status] = await ACTIONS[action](store, oid(n))
    assert {status for status, done in wrote.items() if done} == set(guards.GUARDS[action])


#: Where a guard used to be written out by hand (three times over).
GUARDED_MODULES = (
    "scheduler/manager.py",
    "store/sqlite/store.py",
    "store/sqlite/management.py",
    "store/sqlite/statements.py",
    "store/mongo/management.py",
)
_STATUS_VALUES = {status.value for status in JobStatus}
_STATUS_NAMES = {status.name for status in JobStatus}


def _is_status(node: ast.expr) -> bool:
    """A status spelled out: ``"pending"``, ``JobStatus.PENDING``, or ``q.PENDING`` / ``PENDING``."""
    if isinstance(node, ast.Constant):
        return node.value in _STATUS_VALUES
    if isinstance(node, ast.Attribute):
        return node.attr in _STATUS_NAMES
    return isinstance(node, ast.Name) and node.id in _STATUS_NAMES


def _hand_written_guards(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Tuple | ast.List) and node.elts and all(_is_status(e) for e in node.elts):
            found.append(ast.unparse(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "IN ('failed','cancelled')" in node.value:
            found.append(node.value)
    return found


def test_no_module_writes_a_guard_of_its_own() -> None:
    """The class of fault: a guard changed in one place and not in the other two."""
    spelled = {path: _hand_written_guards((ENGINE / path).read_text()) for path in GUARDED_MODULES}
    assert {path: found for path, found in spelled.items() if found} == {}


def test_the_check_finds_a_guard_written_by_hand() -> None:
    assert _hand_written_guards('GUARD = ("failed", "cancelled")') == ["('failed', 'cancelled')"]
    assert _hand_written_guards("GUARD = (JobStatus.PENDING,)") == ["(JobStatus.PENDING,)"]
    assert _hand_written_guards("x = f(job_id, (q.PENDING,))") == ["(q.PENDING,)"]
    assert _hand_written_guards("SQL = \"WHERE status IN ('failed','cancelled')\"") != []

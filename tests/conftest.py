"""Shared fixtures for the single-process contract suite (``tests/contract/<port>/``, ADR 0018).

Every contract test takes ``store_url`` and runs once per store: the SQLite store always,
the MongoDB store when ``MONQUE_TEST_MONGODB_URI`` names a replica set (otherwise that
parameter is skipped with a reason). Synchronisation is by events and cheap polled
conditions with an overall timeout, never by fixed sleeps.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from monque_engine import Monque

MONGODB_ENV = "MONQUE_TEST_MONGODB_URI"
MONGODB_SKIP_REASON = "MONQUE_TEST_MONGODB_URI not set: MongoDB contract tests need a replica set (see README)"

#: Short intervals so the suite stays fast; tests override what they exercise.
SHORT_INTERVALS: dict[str, Any] = {
    "poll_interval": 0.05,
    "safety_poll_interval": 0.5,
    "base_retry_interval": 0.01,
    "max_backoff_delay": 1.0,
    "heartbeat_interval": 0.05,
    "shutdown_timeout": 2.0,
    "stats_cache_ttl": 0,
}

DEFAULT_TIMEOUT = 5.0

# camelCase document field -> SQLite column, for raw test set-up writes.
_COLUMNS = {
    "status": "status",
    "nextRunAt": "next_run_at",
    "lockedAt": "locked_at",
    "claimedBy": "claimed_by",
    "lastHeartbeat": "last_heartbeat",
    "heartbeatInterval": "heartbeat_interval",
    "failCount": "fail_count",
    "failReason": "fail_reason",
    "createdAt": "created_at",
    "updatedAt": "updated_at",
}
_DATE_FIELDS = {"nextRunAt", "lockedAt", "lastHeartbeat", "createdAt", "updatedAt"}


def _mongo_url_with_db(uri: str, db: str) -> str:
    parts = urlsplit(uri)
    return urlunsplit((parts.scheme, parts.netloc, "/" + db, parts.query, parts.fragment))


@pytest.fixture(params=["sqlite", "mongodb"])
def store_url(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/jobs.db"
        return
    uri = os.environ.get(MONGODB_ENV)
    if not uri:
        pytest.skip(MONGODB_SKIP_REASON)
    db = f"monque_test_{uuid.uuid4().hex[:12]}"
    yield _mongo_url_with_db(uri, db)
    try:  # best effort: leave the server as we found it
        import pymongo

        client: Any = pymongo.MongoClient(uri, serverSelectionTimeoutMS=2000)
        client.drop_database(db)
        client.close()
    except Exception:  # noqa: BLE001 - cleanup only
        pass


async def poll_until(predicate: Callable[[], Any], timeout: float = DEFAULT_TIMEOUT, message: str = "") -> Any:
    """Poll a cheap condition (sync or async) every few ms until it is truthy; return its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout:g} s: {message or predicate!r}")
        await asyncio.sleep(0.005)


@pytest.fixture
def wait_until() -> Callable[..., Awaitable[Any]]:
    """``await wait_until(predicate, timeout)``: see ``poll_until``."""
    return poll_until


class EventRecorder:
    """Records events from one Monque; ``wait_for`` awaits a condition over the records."""

    def __init__(self) -> None:
        self.records: list[tuple[str, Any]] = []
        self._changed = asyncio.Event()

    def attach(self, m: Monque, *events: str) -> EventRecorder:
        for event in events:
            m.on(event, lambda payload, _event=event: self._record(_event, payload))
        return self

    def _record(self, event: str, payload: Any) -> None:
        self.records.append((event, payload))
        self._changed.set()

    def of(self, event: str) -> list[Any]:
        return [payload for name, payload in self.records if name == event]

    def names(self) -> list[str]:
        return [name for name, _ in self.records]

    async def wait_for(
        self, event: str, count: int = 1, where: Callable[[Any], bool] | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> list[Any]:
        """Wait until ``count`` matching ``event`` payloads were recorded; return them."""

        def matching() -> list[Any]:
            return [p for p in self.of(event) if where is None or where(p)]

        async def loop() -> list[Any]:
            while len(found := matching()) < count:
                self._changed.clear()
                await self._changed.wait()
            return found

        try:
            return await asyncio.wait_for(loop(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"expected {count} {event!r} event(s) within {timeout:g} s, got {len(matching())}; "
                f"recorded: {self.names()}"
            ) from None


ALL_EVENTS = (
    "job:start", "job:complete", "job:fail", "job:error", "stale:recovered",
    "job:cancelled", "job:retried", "job:deleted", "jobs:cancelled", "jobs:retried", "jobs:deleted",
)  # fmt: skip


@pytest.fixture
def recorder() -> Callable[..., EventRecorder]:
    """``rec = recorder(m)`` records every job/bulk event of ``m`` (or only the ones named)."""

    def make(m: Monque, *events: str) -> EventRecorder:
        return EventRecorder().attach(m, *(events or ALL_EVENTS))

    return make


@pytest.fixture
async def monque(store_url: str) -> Any:
    """Factory: ``m = await monque(**options)`` builds, initialises and always closes a Monque."""
    created: list[Monque] = []

    async def make(*, initialize: bool = True, url: str | None = None, **options: Any) -> Monque:
        m = Monque(url or store_url, **{**SHORT_INTERVALS, **options})
        created.append(m)
        if initialize:
            await m.initialize()
        return m

    yield make
    for m in reversed(created):
        try:
            await asyncio.wait_for(m.close(), 10)
        except Exception:  # noqa: BLE001 - one bad close must not hide the others
            pass


class RawAccess:
    """Test set-up writes that bypass the engine (to fake other instances, old locks, …)."""

    def __init__(self, m: Monque) -> None:
        self.m = m

    async def set(self, job_id: str, **fields: Any) -> None:
        """Set stored fields by their document (camelCase) names; dates as aware datetimes or ms."""
        store: Any = self.m.store
        if store.kind == "sqlite":
            assignments: list[str] = []
            params: list[Any] = []
            for key, value in fields.items():
                if key in _DATE_FIELDS and isinstance(value, datetime):
                    value = int(value.timestamp() * 1000)
                assignments.append(f"{_COLUMNS[key]} = ?")
                params.append(value)
            table = self.m.options.collection_name
            sql = f"UPDATE {table} SET {', '.join(assignments)} WHERE id = ?"
            journal = store._j  # the store's own bookkeeping (kept counts) follows the fake write

            def write(conn: Any) -> int:
                journal.tally(conn, "id = ?", (job_id,), -1)
                count: int = conn.execute(sql, (*params, job_id)).rowcount
                journal.tally(conn, "id = ?", (job_id,), 1)
                return count

            count = await store.execute_write(write)
            assert count == 1, f"raw update matched {count} rows"
            return
        # MongoDB: write the document directly with PyMongo.
        from bson import ObjectId
        from pymongo import AsyncMongoClient

        doc: dict[str, Any] = {}
        unset: dict[str, Any] = {}
        for key, value in fields.items():
            if key in _DATE_FIELDS and isinstance(value, int):
                value = datetime.fromtimestamp(value / 1000, UTC)
            if value is None:
                unset[key] = ""
            else:
                doc[key] = value
        url = self.m._url
        assert url is not None
        client: Any = AsyncMongoClient(url)
        try:
            coll = client.get_default_database()[self.m.options.collection_name]
            update: dict[str, Any] = {}
            if doc:
                update["$set"] = doc
            if unset:
                update["$unset"] = unset
            result = await coll.update_one({"_id": ObjectId(job_id)}, update)
            assert result.matched_count == 1
        finally:
            await client.close()


@pytest.fixture
def raw() -> Callable[[Monque], RawAccess]:
    return RawAccess


def ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


#: Modules of many quick single-process tests (milliseconds each): the contract suite and the
#: MongoDB fakes. Under pytest-xdist they run last, so that the tests which start apps or
#: processes (seconds each) start first and the quick ones fill the workers in around them,
#: instead of one long test ending the run alone.
CONTRACT_DIR = Path(__file__).parent / "contract"
_QUICK_MODULE_PREFIX = "test_mongo_"


def _quick(item: pytest.Item) -> bool:
    return CONTRACT_DIR in item.path.parents or item.path.name.startswith(_QUICK_MODULE_PREFIX)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist (each worker collects, in the same order), put the slow kinds first."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    items.sort(key=_quick)  # stable


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say plainly, once, whether the MongoDB contract tests ran, instead of a wall of skips."""
    skipped = terminalreporter.stats.get("skipped", [])
    mongo = sum(1 for report in skipped if MONGODB_SKIP_REASON in str(report.longrepr))
    other = len(skipped) - mongo
    if mongo:
        terminalreporter.write_line(
            f"MongoDB contract tests: {mongo} skipped, not passed — {MONGODB_SKIP_REASON}", yellow=True, bold=True
        )
    elif os.environ.get(MONGODB_ENV):
        terminalreporter.write_line("MongoDB contract tests: ran against MONQUE_TEST_MONGODB_URI", green=True)
    if other:
        terminalreporter.write_line(f"Other skipped tests: {other} (run with -rs to list them)", yellow=True)


# -- multi-process fixtures (tests/test_multiprocess.py, tests/test_fleet_multiprocess.py) -------
@pytest.fixture
def procs(tmp_path: Any) -> Any:
    """Real worker / producer processes, all stopped at the end of the test."""
    from tests.procs.harness import Launcher

    launcher = Launcher(tmp_path)
    try:
        yield launcher
    finally:
        launcher.close_all()


@pytest.fixture
def db(tmp_path: Any) -> Any:
    return tmp_path / "jobs.db"


@pytest.fixture
def runs_dir(tmp_path: Any) -> Any:
    path = tmp_path / "runs"
    path.mkdir()
    return path


@pytest.fixture
def probe(db: Any) -> Any:
    """A read connection on the processes' SQLite file, for checking what they wrote."""
    from tests.procs.harness import StoreProbe

    p = StoreProbe(db)
    try:
        yield p
    finally:
        p.close()

"""``stop()`` and ``close()`` are bounded whatever the store does (issue 27 item 15). FAKES.

On MongoDB with the primary partitioned away, every store step of a stop waited for server
selection (30 s) or a socket: closing the change stream (killCursors), ``fleet.leave()``
waiting without limit for an in-flight counter write and then writing twice more; a stop
took about ``shutdown_timeout`` + 95 s. Now each store step gets ``STOP_STEP_TIMEOUT`` and
all of them ``STOP_STORE_BUDGET`` (stop_budget.py), and MongoStore bounds its own closes.

The scheduler tests run a real Monque on a real SQLite file whose store *hangs* where asked
(an awaited event that never comes, as a write stuck on an unreachable server); the budget
is shrunk so the test takes a fraction of a second. The MongoDB tests use PyMongo's
``AsyncChangeStream`` with a cursor whose ``close()`` waits for server selection as the
driver does (until the ``pymongo.timeout`` deadline, else serverSelectionTimeoutMS), and
one that ignores every deadline. The 30 s guard only turns a hang into a failure.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from pymongo import _csot
from pymongo.errors import ServerSelectionTimeoutError
from test_mongo_watch import BLOCK, DriverStream, ScriptedCursor, _open

from monque_engine import Monque
from monque_engine.job import ChangeEvent
from monque_engine.scheduler import stop_budget
from monque_engine.scheduler.resilient_watch import ResilientWatch, WatchEvent
from monque_engine.store import open_store
from monque_engine.store.mongo import plumbing as mongo_plumbing
from monque_engine.store.sqlite import SqliteStore
from tests.conftest import poll_until

GUARD_S = 30.0  # a hang guard, not a timing threshold
STEP_S = 0.05


class HangingStore(SqliteStore):
    """A SQLite store whose named operations never return once ``hang`` lists them."""

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.hang: set[str] = set()
        self.entered = {what: asyncio.Event() for what in ("counters", "record", "stream close")}
        self._never = asyncio.Event()

    async def _maybe_hang(self, what: str) -> None:
        if what in self.hang:
            self.entered[what].set()
            await self._never.wait()

    def release(self) -> None:
        self._never.set()

    async def add_outcome_counts(self, counts: Any, batch: str | None = None) -> None:
        await self._maybe_hang("counters")
        await super().add_outcome_counts(counts, batch)

    async def remove_instance(self, instance_id: str) -> None:
        await self._maybe_hang("record")
        await super().remove_instance(instance_id)

    async def open_watch(self, *args: Any, **kwargs: Any) -> Any:
        return _HangOnClose(await super().open_watch(*args, **kwargs), self)


class _HangOnClose:
    def __init__(self, events: Any, store: HangingStore) -> None:
        self._events = events
        self._store = store

    def __aiter__(self) -> _HangOnClose:
        return self

    async def __anext__(self) -> ChangeEvent:
        return await self._events.__anext__()  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        await self._store._maybe_hang("stream close")
        await self._events.aclose()


@pytest.fixture
def short_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stop_budget, "STOP_STEP_TIMEOUT", STEP_S)
    monkeypatch.setattr(stop_budget, "STOP_STORE_BUDGET", 4 * STEP_S)


async def _completed(m: Monque, name: str) -> None:
    """A job run, and its outcome in this process's counter tally."""
    await m.enqueue(name, None)
    await poll_until(lambda: m._processor._tally, GUARD_S, "the completed job's count")


async def test_stop_gives_up_on_every_store_step_that_hangs(
    tmp_path: Path, short_budget: None, caplog: pytest.LogCaptureFixture
) -> None:
    """An in-flight counter write, the final flush, the record's removal and the stream's
    close all hang: stop() returns anyway, naming each step it gave up on."""
    store = HangingStore(open_store(f"sqlite:///{tmp_path}/jobs.db").settings)  # type: ignore[attr-defined]
    m = Monque(store, heartbeat_interval=60.0, lock_timeout=300.0, shutdown_timeout=1.0)
    m.register("work", lambda job: None)
    await m.initialize()
    await m.start()
    try:
        await _completed(m, "work")
        store.hang = {"counters", "record", "stream close"}
        in_flight = asyncio.ensure_future(m._fleet.flush_counts())  # the heartbeat tick's write
        await asyncio.wait_for(store.entered["counters"].wait(), GUARD_S)
        await _completed(m, "work")  # counts for the final flush too
        caplog.set_level(logging.WARNING, logger="monque_engine")
        async with asyncio.timeout(GUARD_S):
            await m.stop()
        gave_up = [r.getMessage() for r in caplog.records if "gave up on it" in r.getMessage()]
        assert [w.split(" did not finish")[0] for w in gave_up] == [
            "stop(): closing the change stream",
            "stop(): waiting for the last counter write",
            "stop(): flushing the counters",
            "stop(): removing this instance's registry record",
        ]
        assert not in_flight.done()  # left running, never cancelled: its counts must not count twice
    finally:
        store.release()
        await asyncio.wait_for(m.close(), GUARD_S)


async def test_the_budget_bounds_all_steps_together(short_budget: None) -> None:
    """Once the total is spent, the remaining steps get no time at all (not one step each)."""
    budget = stop_budget.StopBudget(total=STEP_S, step=STEP_S)
    never = asyncio.Event()
    finished, _ = await budget.run("first", never.wait(), "-")
    assert not finished and budget.remaining() == 0.0
    finished, _ = await budget.run("second", never.wait(), "-")
    assert not finished and budget.abandoned == ["first", "second"]
    finished, value = await budget.run("quick", asyncio.sleep(0, "ok"), "-")
    assert (finished, value) == (False, None)  # even an instant step: nothing is left


async def test_a_step_that_raises_its_own_timeout_is_not_taken_for_the_budgets(short_budget: None) -> None:
    async def own_timeout() -> None:
        raise TimeoutError("the step's own")

    with pytest.raises(TimeoutError, match="the step's own"):
        await stop_budget.StopBudget().run("step", own_timeout(), "-")


async def test_the_watch_reports_closed_even_when_its_close_is_given_up_on(short_budget: None) -> None:
    """The consumer hears changestream:closed and the state is ``stopped``, bounded stop or not."""

    class Store:
        async def open_watch(self, *args: Any, **kwargs: Any) -> Any:
            return _Stuck()

    class _Stuck:
        def __aiter__(self) -> _Stuck:
            return self

        async def __anext__(self) -> ChangeEvent:
            await asyncio.Event().wait()
            raise StopAsyncIteration

        async def aclose(self) -> None:
            await asyncio.Event().wait()  # killCursors waiting for a server that never comes

    events: list[WatchEvent] = []
    watch = ResilientWatch(Store(), lambda change: None, events.append)  # type: ignore[arg-type]
    await watch.start()
    while watch.state != "live":
        await asyncio.sleep(0)
    budget = stop_budget.StopBudget()
    async with asyncio.timeout(GUARD_S):
        finished, _ = await budget.run("closing the change stream", watch.stop(), "-")
    assert not finished
    assert watch.state == "stopped" and [e.kind for e in events] == ["connected", "closed"]


class SelectingCursor(ScriptedCursor):
    """A cursor whose close sends killCursors: server selection with no server, as PyMongo's
    ``Topology._select_servers_loop`` waits: until the ``pymongo.timeout`` deadline when one
    is set (``get_server_selection_timeout`` returns ``_csot.remaining()``), else for
    serverSelectionTimeoutMS (30 s), then ServerSelectionTimeoutError."""

    def __init__(self, *steps: Any) -> None:
        super().__init__(*steps)
        self.deadlines: list[float | None] = []

    async def close(self) -> None:
        self._closed_event.set()  # a getMore in flight ends with the cursor
        remaining = _csot.remaining()
        self.deadlines.append(remaining)
        await asyncio.sleep(30.0 if remaining is None else max(0.0, remaining))
        raise ServerSelectionTimeoutError("No primary available for writes, Timeout: 30s")


class DeafCursor(ScriptedCursor):
    """A close that honours no deadline at all (a socket write stuck in the kernel)."""

    async def close(self) -> None:
        self._closed_event.set()
        await asyncio.Event().wait()


@pytest.mark.parametrize("cursor", [SelectingCursor, DeafCursor])
async def test_closing_a_mongo_store_is_bounded_when_killcursors_cannot_reach_a_server(
    cursor: type[ScriptedCursor], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mongo_plumbing, "CLOSE_TIMEOUT_S", STEP_S)
    stream = DriverStream(cursor(BLOCK))
    store, events, _ = await _open(stream)
    reading = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0)
    async with asyncio.timeout(GUARD_S):
        await store.close()
    if isinstance(stream._cursor, SelectingCursor):
        # The driver's own deadline bounded server selection: no cancellation was needed.
        assert stream._cursor.deadlines and stream._cursor.deadlines[0] is not None
        assert stream._cursor.deadlines[0] <= STEP_S
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)


async def test_an_iteration_ended_by_its_consumer_closes_its_stream_within_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ResilientWatch.stop() cancels the loop, whose iterator then closes its stream: the
    same bound applies there (it used to be an unbounded ``await stream.close()``)."""
    monkeypatch.setattr(mongo_plumbing, "CLOSE_TIMEOUT_S", STEP_S)
    stream = DriverStream(DeafCursor(BLOCK))
    store, events, _ = await _open(stream)
    async with asyncio.timeout(GUARD_S):
        await events.aclose()
    await store.close()

"""The scheduler's change-feed state machine with a store whose feed fails like MongoDB's can.

The store is a real SQLite store (jobs, claims and polling work) whose ``open_watch`` is
replaced by a controllable fake: it fails synchronously at open (a standalone MongoDB
server: code 40573) or asynchronously during iteration (a replica set stepping down under
an open stream), and can be told to recover. The lifecycle must emit
``changestream:error`` for each failure, ``changestream:fallback`` after three in a row,
keep processing jobs by polling, and emit ``changestream:connected`` when the feed works
again — for both kinds of failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from monque_engine import Monque
from monque_engine.errors import ConnectionError
from monque_engine.job import ChangeEvent, JobStatus
from monque_engine.store.sqlite import SqliteStore

STANDALONE = "Change streams are not available on MongoDB h:1/db: it is a standalone server"


class FlakyFeedStore(SqliteStore):
    """SQLite for jobs; the change feed fails in the chosen way until ``healthy`` is set."""

    mode = "sync"  # "sync" | "async"
    healthy = False
    opens = 0

    async def open_watch(
        self,
        resume_after: Any = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
        names: tuple[str, ...] | None = None,
    ) -> AsyncIterator[ChangeEvent]:
        self.opens += 1
        if self.healthy:
            return await super().open_watch(resume_after, full_document=full_document, statuses=statuses, names=names)
        if self.mode == "sync":
            raise ConnectionError(STANDALONE)
        return self._breaks_later()

    async def _breaks_later(self) -> AsyncIterator[ChangeEvent]:
        await asyncio.sleep(0.01)  # watch() returned fine; the error comes while iterating
        raise ConnectionError("MongoDB could not read the change stream on h:1/db: connection reset")
        yield  # pragma: no cover - makes this an async generator


async def _run(tmp_path: Any, mode: str) -> None:
    store = FlakyFeedStore.from_url(f"sqlite:///{tmp_path}/jobs.db")
    assert isinstance(store, FlakyFeedStore)
    store.mode = mode
    m = Monque(store, poll_interval=0.05, safety_poll_interval=5.0)
    m._lifecycle.reconnect_delays = (0.01, 0.02, 0.03)
    m._lifecycle.fallback_retry_interval = 0.1
    seen: list[str] = []
    for name in ("changestream:connected", "changestream:error", "changestream:fallback", "changestream:closed"):
        m.on(name, lambda payload, name=name: seen.append(name))
    done = asyncio.Event()
    m.register("work", lambda job: done.set())
    await m.initialize()
    await m.start()
    try:

        async def until(predicate: Any) -> None:
            async with asyncio.timeout(5):
                while not predicate():
                    await asyncio.sleep(0.01)

        await until(lambda: "changestream:fallback" in seen)
        # sync: errors only; async: each open first "connects", then the stream breaks
        failures = [e for e in seen if e in ("changestream:error", "changestream:fallback")]
        assert failures == ["changestream:error"] * 4 + ["changestream:fallback"]
        if mode == "async":
            assert seen.count("changestream:connected") == 4 and store.opens == 4
        assert m.feed_state == "fallback"
        await m.enqueue("work", {"n": 1})  # polling still processes work while the feed is down
        async with asyncio.timeout(5):
            await done.wait()
        mark = len(seen)
        store.healthy = True
        await until(lambda: "changestream:connected" in seen[mark:] and m.feed_state == "live")
        await asyncio.sleep(0.2)  # stays live: no further errors once the feed works
        assert "changestream:error" not in seen[seen.index("changestream:connected", mark) :]
        assert m.feed_state == "live"
        if mode == "sync":
            assert seen.count("changestream:fallback") == 1
    finally:
        await m.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_feed_falls_back_after_three_failures_then_recovers(tmp_path: Any, mode: str) -> None:
    await _run(tmp_path, mode)

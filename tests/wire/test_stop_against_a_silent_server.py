"""``stop()`` and ``close()`` against a server that stops answering.

DRIVER LEVEL: a real ``Monque`` worker on a real ``MongoStore`` over the scripted wire
server (jobs in a mongomock database behind it), until the server stops answering every
request on every connection, sockets left open: a primary partitioned away. Each store
step of ``stop()`` then waits on PyMongo's real paths (``killCursors`` for the change
stream, the counter ``update``, the registry ``delete``, ``endSessions`` at client close),
and the test checks that the store's and the scheduler's bounds end each of them. The
budgets are shrunk (as in ``test_stop_bounded_store_steps.py``) so the test is short; the
guard only turns a hang into a failure.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from monque_engine import Monque
from monque_engine.scheduler import stop_budget
from monque_engine.store.mongo import plumbing as mongo_plumbing
from tests.conftest import poll_until
from wire import WireServer
from wire.backend import MongomockBackend
from wire.store import JOBS, script_collection

GUARD_S = 30.0  # a hang guard, not a timing threshold
STEP_S = 0.2


@pytest.fixture
def short_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stop_budget, "STOP_STEP_TIMEOUT", STEP_S)
    monkeypatch.setattr(stop_budget, "STOP_STORE_BUDGET", 6 * STEP_S)
    monkeypatch.setattr(mongo_plumbing, "CLOSE_TIMEOUT_S", STEP_S)


async def test_stop_returns_when_the_server_stops_answering_and_names_what_it_left(
    wire_server: WireServer, short_budget: None, caplog: pytest.LogCaptureFixture
) -> None:
    backend = MongomockBackend()
    script_collection(wire_server)
    backend.serve(wire_server)
    jobs = backend.client["monque"][JOBS]
    m = Monque(wire_server.url(), heartbeat_interval=60.0, lock_timeout=300.0, shutdown_timeout=1.0)
    m.register("work", lambda job: None)
    await m.initialize()
    await m.start()
    try:
        await m.enqueue("work", None)
        await poll_until(lambda: jobs.find_one({"status": "completed"}), GUARD_S, "the job completed")
        await poll_until(lambda: m._processor._tally, GUARD_S, "its count in the tally")
        await wire_server.wait_for("getMore")  # the worker's change stream is open and waiting
        wire_server.stop_answering()
        caplog.set_level(logging.WARNING, logger="monque_engine")
        async with asyncio.timeout(GUARD_S):
            await m.stop()
        gave_up = [r.getMessage().split(" did not finish")[0] for r in caplog.records if "gave up" in r.getMessage()]
        assert "stop(): flushing the counters" in gave_up
        assert "stop(): removing this instance's registry record" in gave_up
    finally:
        async with asyncio.timeout(GUARD_S):
            await m.close()  # endSessions and killCursors unanswered too: bounded by CLOSE_TIMEOUT_S
    assert wire_server.commands("update")  # the counter write was sent, and never answered
    assert not wire_server.handler_errors

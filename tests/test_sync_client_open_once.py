"""``SyncMonque``'s first open, from many threads at once, against a store that fails it.

The threads of a pool (gunicorn's ``--threads``, a ``ThreadPoolExecutor``) reach a fresh
client together. They took turns on its lock and each tried the open again, so against an
unreachable MongoDB (5 s of server selection) the eighth thread answered after 40 s. The
threads that waited for a failing open now raise its error; a later call tries again.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from monque_engine import ConnectionError, Monque, SyncMonque

THREADS = 5


class CountingLock:
    """A lock that tells how many threads have come to it (holding or waiting)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrivals = threading.Condition()
        self.arrived = 0

    def __enter__(self) -> CountingLock:
        with self._arrivals:
            self.arrived += 1
            self._arrivals.notify_all()
        self._lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def wait_for(self, count: int) -> None:
        with self._arrivals:
            assert self._arrivals.wait_for(lambda: self.arrived >= count, timeout=30)


def test_threads_waiting_for_a_failing_open_share_its_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    opens: list[int] = []

    async def unreachable(self: Monque) -> None:
        opens.append(1)
        await asyncio.to_thread(gate.wait, 30)
        raise ConnectionError("Failed to initialize Monque: Cannot reach MongoDB at db:27017 within 5000 ms")

    monkeypatch.setattr(Monque, "initialize", unreachable)
    client = SyncMonque(f"sqlite:///{tmp_path / 'jobs.db'}")
    lock = CountingLock()
    client._lock = lock  # type: ignore[assignment]
    errors: list[BaseException] = []

    def call() -> None:
        try:
            client.count_jobs()
        except BaseException as error:  # noqa: BLE001 - looked at below
            errors.append(error)

    threads = [threading.Thread(target=call) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    lock.wait_for(THREADS)  # one opening, the others waiting for it
    gate.set()
    for thread in threads:
        thread.join(30)
    assert len(errors) == THREADS and all(isinstance(error, ConnectionError) for error in errors), errors
    assert len(opens) == 1, "each waiting thread tried the open again"

    with pytest.raises(ConnectionError):  # a later call tries again
        client.count_jobs()
    assert len(opens) == 2


def test_an_open_that_succeeds_after_a_failure_serves_every_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Monque.initialize
    outcomes: list[Any] = [ConnectionError("Cannot reach the store")]

    async def once_failing(self: Monque) -> None:
        if outcomes:
            raise outcomes.pop()
        await real(self)

    monkeypatch.setattr(Monque, "initialize", once_failing)
    client = SyncMonque(f"sqlite:///{tmp_path / 'jobs.db'}")
    with pytest.raises(ConnectionError):
        client.enqueue("first")
    assert client.enqueue("second").name == "second"
    assert client.count_jobs() == 1
    client.close()

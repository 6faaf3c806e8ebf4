"""``wait()`` when its change feed breaks or its client closes (issue 38 probe).

A feed that breaks after it opened (a MongoDB failover, a dropped connection: the port's
iteration raises ``ConnectionError``, and callers are to reopen it) failed the wait, so a
``wait(job_id, timeout=30)`` in a web request failed on a blip. It reopens now and reads the
job again. A client closed while a wait runs said "the change feed closed; wait again":
waiting again on a closed client cannot work, so it says the client was closed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from monque_engine import ConnectionError, InvalidJobQueryError, JobStatus, Monque, SyncMonque
from monque_engine.job import ChangeEvent, Job
from monque_engine.scheduler.waiting import wait_for_final

JOB_ID = "6b1570b45d2cfcdb8d72ca67"


def make_job(status: JobStatus) -> Job:
    return Job(JOB_ID, "report", None, status, 0, 0, 0)


def _streams_open(monque: Monque) -> bool:
    feed = getattr(monque.store, "_feed", None)
    return feed is not None and bool(feed._subscribers)


class BreakingFeed:
    """A feed whose first stream breaks after it opened; the job turns final meanwhile.
    The next stream is quiet (the change it would have carried was lost in the break)."""

    def __init__(self) -> None:
        self.opened = 0
        self.job = make_job(JobStatus.PROCESSING)

    async def open_watch(self, resume_after: Any = None, **options: Any) -> AsyncIterator[ChangeEvent]:
        self.opened += 1
        return self._changes(self.opened)

    async def _changes(self, which: int) -> AsyncIterator[ChangeEvent]:
        if which == 1:
            await asyncio.sleep(0)
            self.job = make_job(JobStatus.COMPLETED)
            raise ConnectionError("connection closed (the primary stepped down)")
        await asyncio.Event().wait()  # quiet: nothing more comes
        yield self._never()  # pragma: no cover - makes this an async generator

    def _never(self) -> ChangeEvent:
        raise AssertionError("the quiet stream yields nothing")

    async def get(self, job_id: str) -> Job | None:
        return self.job if job_id == JOB_ID else None


async def test_a_feed_that_breaks_after_it_opened_is_opened_again_and_the_job_read() -> None:
    feed = BreakingFeed()
    job = await wait_for_final(feed, feed, JOB_ID, timeout=30)  # type: ignore[arg-type]
    assert job.status is JobStatus.COMPLETED
    assert feed.opened == 2


async def test_a_feed_that_cannot_open_raises_at_once() -> None:
    class Unreachable(BreakingFeed):
        async def open_watch(self, resume_after: Any = None, **options: Any) -> AsyncIterator[ChangeEvent]:
            raise ConnectionError("Cannot reach MongoDB at db:27017")

    feed = Unreachable()
    with pytest.raises(ConnectionError, match="Cannot reach MongoDB"):
        await wait_for_final(feed, feed, JOB_ID, timeout=30)  # type: ignore[arg-type]


async def test_an_async_client_closed_while_it_waits_says_so(tmp_path: Path) -> None:
    monque = Monque(f"sqlite:///{tmp_path / 'jobs.db'}")
    await monque.initialize()
    job = await monque.enqueue("report")
    waiting = asyncio.ensure_future(monque.wait(job.id))
    while not _streams_open(monque):  # the wait's stream subscribes within a few loop turns
        await asyncio.sleep(0)
    await monque.close()
    with pytest.raises(ConnectionError, match="the client was closed"):
        await waiting


def test_a_sync_client_closed_while_another_thread_waits_says_so(tmp_path: Path) -> None:
    client = SyncMonque(f"sqlite:///{tmp_path / 'jobs.db'}")
    job = client.enqueue("report")
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            client.wait(job.id)
        except BaseException as error:  # noqa: BLE001 - looked at below
            outcome.append(error)

    waiter = threading.Thread(target=wait)
    waiter.start()
    opened = client._opened
    assert opened is not None
    assert opened.monque.store._feed._watched.wait(30)  # type: ignore[attr-defined]  # the wait's stream is open
    client.close()
    waiter.join(30)
    assert not waiter.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], ConnectionError), outcome
    assert "the client was closed" in str(outcome[0])


async def test_waiting_on_a_recurring_job_is_a_clear_error_at_once(tmp_path: Path) -> None:
    """Each run of a schedule returns it to pending, so the wait lasted until its timeout and
    then said "check that a worker runs its name", or, without a timeout, for ever."""
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        job = await monque.schedule("*/5 * * * *", "report.hourly")
        with pytest.raises(InvalidJobQueryError, match="is recurring"):
            await monque.wait(job.id, timeout=30)
        await monque.cancel_job(job.id)
        assert (await monque.wait(job.id, timeout=30)).status is JobStatus.CANCELLED  # final: returned

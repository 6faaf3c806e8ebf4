"""The SQLite row feed (``open_watch_rows``, ``Monque.resilient_watch_rows``): every change, a pull
at a time as plain rows, saying what the ``ChangeEvent`` stream says, with exact resumption.

The console follows ~15,000 changes a second beside a drain through it (issue 40); a row
dropped, repeated or out of order would leave a shown row or the meter wrong."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from monque_engine import ChangeEvent, ChangeFeedHistoryLostError, JobStatus, Monque
from monque_engine.change_rows import STOP_OP, ChangeRows, EventsAsRows, event_row
from monque_engine.scheduler.resilient_watch import WatchEvent
from monque_engine.store.sqlite import feed as sqlite_feed


async def _rows_until(stream: AsyncIterator[ChangeRows], count: int) -> list[ChangeRows]:
    batches: list[ChangeRows] = []
    while sum(len(b) for b in batches) < count:
        batches.append(await asyncio.wait_for(stream.__anext__(), 5))
    return batches


async def _events_until(stream: AsyncIterator[ChangeEvent], count: int) -> list[ChangeEvent]:
    return [await asyncio.wait_for(stream.__anext__(), 5) for _ in range(count)]


async def _history(monque: Monque) -> str:
    """Inserts, a claim-free cancel, an update, a delete: each kind of row the console reads."""
    jobs = await monque.enqueue_many([{"name": f"n{i % 2}", "data": {"i": i}} for i in range(5)])
    await monque.cancel_job(jobs[0].id)
    await monque.retry_job(jobs[0].id)
    await monque.delete_job(jobs[1].id)
    return jobs[2].id


async def test_rows_say_what_the_events_say_in_commit_order(tmp_path: Path) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        rows_stream = await monque.store.open_watch_rows()  # type: ignore[attr-defined]
        events_stream = await monque.open_watch(full_document=False)
        await _history(monque)
        events = await _events_until(events_stream, 8)
        batches = await _rows_until(rows_stream, 8)
        rows = [row for batch in batches for row in batch.rows]
        assert [e for b in batches for e in b.events()] == events
        assert rows == [event_row(e) for e in events]
        assert [r[1] for r in rows] == ["insert"] * 5 + ["update", "update", "delete"]
        assert rows[-1][4] == JobStatus.PENDING.value  # a delete keeps the job's last status
        assert batches[-1].token == rows[-1][0]  # resumes just after the last row


async def test_a_token_resumes_exactly_and_a_full_page_reads_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_feed, "ROWS_PULL_LIMIT", 3)
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        stream = await monque.store.open_watch_rows()  # type: ignore[attr-defined]
        await monque.enqueue_many([{"name": "n", "data": {"i": i}} for i in range(10)])
        batches = await _rows_until(stream, 10)
        assert all(len(b) <= 3 for b in batches) and len(batches) >= 4  # pages of three, read on at once
        tokens = [row[0] for b in batches for row in b.rows]
        assert tokens == list(range(tokens[0], tokens[0] + 10))  # no gap, no repeat
        resumed = await monque.store.open_watch_rows(batches[1].token)  # type: ignore[attr-defined]
        rest = await _rows_until(resumed, 10 - sum(len(b) for b in batches[:2]))
        assert [row[0] for b in rest for row in b.rows] == tokens[sum(len(b) for b in batches[:2]) :]


async def test_a_stop_request_is_a_stop_row(tmp_path: Path) -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:

        async def handler(job: Any) -> None:
            started.set()
            await release.wait()

        monque.register("slow", handler)
        await monque.start()
        stream = await monque.store.open_watch_rows()  # type: ignore[attr-defined]
        job = await monque.enqueue("slow")
        await asyncio.wait_for(started.wait(), 5)
        await monque.cancel_job(job.id, running=True)
        found: list[Any] = []
        while not any(row[1] == STOP_OP for row in found):
            found.extend((await asyncio.wait_for(stream.__anext__(), 5)).rows)
        stop = next(row for row in found if row[1] == STOP_OP)
        assert stop[2] == job.id and stop[4] == JobStatus.PROCESSING.value
        assert ChangeRows([stop], stop[0]).events()[0].stop_requested is True
        release.set()


async def test_pruned_history_is_lost_not_skipped(tmp_path: Path) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}?feed_retention=1000") as monque:
        stream = await monque.store.open_watch_rows()  # type: ignore[attr-defined]
        await monque.enqueue("first")
        (early,) = await _rows_until(stream, 1)
        await monque.enqueue_many([{"name": "filler", "data": i} for i in range(1200)])
        assert await monque.store.prune_feed() > 0  # type: ignore[attr-defined]
        with pytest.raises(ChangeFeedHistoryLostError):
            await monque.store.open_watch_rows(early.token)  # type: ignore[attr-defined]


async def test_the_resilient_row_watch_delivers_every_change_and_its_token(tmp_path: Path) -> None:
    got: list[ChangeRows] = []
    seen: list[WatchEvent] = []
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        watch = monque.resilient_watch_rows(got.append, seen.append)
        await watch.start()
        await _history(monque)
        for _ in range(500):
            if sum(len(b) for b in got) >= 8:
                break
            await asyncio.sleep(0.01)
        assert [row[1] for b in got for row in b.rows] == ["insert"] * 5 + ["update", "update", "delete"]
        assert watch.token == got[-1].token and watch.state == "live"
        await watch.stop()
    assert [e.kind for e in seen] == ["connected", "closed"]


async def test_a_store_without_a_row_feed_gives_one_change_a_batch() -> None:
    """MongoDB has no row feed: its events, one each, with the stream's own resume token."""
    change = ChangeEvent("update", "j1", None, {"_data": "t1"}, "n", JobStatus.COMPLETED, 5, False)

    class Events:
        resume_token: ClassVar[dict[str, str]] = {"_data": "later"}

        def __init__(self) -> None:
            self.left = [change]

        def __aiter__(self) -> Events:
            return self

        async def __anext__(self) -> ChangeEvent:
            if not self.left:
                raise StopAsyncIteration
            return self.left.pop()

    rows = EventsAsRows(Events())
    (batch,) = [b async for b in rows]
    assert batch.rows == [({"_data": "t1"}, "update", "j1", "n", "completed", 5)] and batch.token == {"_data": "t1"}
    assert batch.events() == [change] and rows.resume_token == {"_data": "later"}


def test_a_row_watch_takes_every_change() -> None:
    from monque_engine.scheduler.resilient_watch import ResilientWatch

    with pytest.raises(ValueError, match="every change"):
        ResilientWatch(object(), lambda c: None, on_rows=lambda b: None, statuses=(JobStatus.PENDING,))  # type: ignore[arg-type]

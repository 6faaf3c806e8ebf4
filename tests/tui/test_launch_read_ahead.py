"""The launch opens the store and reads the first page before Textual starts (issue 40: launch
to first rows), and the first ``load_top`` shows that page without reading it again.

Opened from ``on_mount``, the store's reads waited behind Textual's start-up work on the
event loop, and the table painted "Loading…" for two or three frames before its rows. What
must hold: the page read ahead is used once, only for the view it was read for, nothing that
changes after it is lost (the feed is on before the read), and the app opens the store once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from monque_engine import JobStatus, Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.session import ConsoleSession
from monque_tui.console.session.events import WindowLoaded

from .conftest import SEED_NOW_MS, console_session, flush_until, frozen_clock, table_ids, wait_for


def _count_page_reads(session: ConsoleSession, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every ``get_jobs_with_cursor`` the session's Monque answers from now on."""
    monque = session.monque
    assert monque is not None
    reads: list[object] = []
    real = monque.get_jobs_with_cursor

    async def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args)
        return await real(*args, **kwargs)

    monkeypatch.setattr(monque, "get_jobs_with_cursor", counted)
    return reads


async def test_the_first_load_shows_the_page_read_ahead_without_reading_again(
    seeded_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with console_session(seeded_url) as (session, events):
        reads = _count_page_reads(session, monkeypatch)
        await session.read_ahead_top()
        assert len(reads) == 1
        assert await session.load_top()
        assert len(reads) == 1  # the page read ahead, not a second read
        loaded = [event for event in events if isinstance(event, WindowLoaded)]
        assert len(loaded) == 1 and loaded[0].window.rows
        ahead = [job.id for job in session.window.rows]
        assert await session.load_top()  # used once: the next load reads the store
        assert len(reads) == 2
        assert [job.id for job in session.window.rows] == ahead


async def test_a_page_read_ahead_for_another_view_is_not_shown(
    seeded_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with console_session(seeded_url) as (session, _):
        reads = _count_page_reads(session, monkeypatch)
        await session.read_ahead_top()
        session.set_query(session.query.with_status(JobStatus.FAILED))
        assert await session.load_top()
        assert len(reads) == 2
        assert session.window.rows and all(job.status is JobStatus.FAILED for job in session.window.rows)


async def test_a_job_added_after_the_read_ahead_still_arrives(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, _):
        await session.read_ahead_top()
        producer = Monque(seeded_url, recover_stale_jobs=False)
        await producer.initialize()
        try:
            job = await producer.enqueue("after-the-read", {"n": 1})
        finally:
            await producer.close()
        assert await session.load_top()
        assert job.id not in [row.id for row in session.window.rows]  # the page is from before it
        await flush_until(session, lambda: job.id in [row.id for row in session.window.rows])


async def test_the_app_opens_the_store_once_and_shows_the_rows_read_ahead(
    seeded_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = MonqueConsole(ConsoleConfig(url=seeded_url), clock=frozen_clock(SEED_NOW_MS))
    opens: list[None] = []
    real_open = app.session.open

    async def counted_open() -> None:
        opens.append(None)
        await real_open()

    monkeypatch.setattr(app.session, "open", counted_open)
    await app.start_opening()  # what launch.py does before Textual starts
    reads = _count_page_reads(app.session, monkeypatch)
    async with app.run_test(size=(120, 30)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        await wait_for(lambda: bool(table_ids(app)))
        await pilot.pause()
        assert opens == [None]
        assert reads == []  # the first page on screen is the one read ahead
        assert app.first_paint_at is not None

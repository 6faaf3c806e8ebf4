"""The session core without Textual or Pilot: paging with generations, marks, live changes, bulk plans."""

from __future__ import annotations

import asyncio
from typing import Any

from monque_engine import JobStatus, Monque
from monque_tui.console.actions import ActionKind
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.session import ConsoleSession
from monque_tui.console.session.events import MarksChanged, Notice, StatsChanged, WindowChanged, WindowLoaded
from monque_tui.console.window import PAGE_SIZE

from .conftest import wait_for


async def _session(url: str, **config: Any) -> tuple[ConsoleSession, list[object]]:
    events: list[object] = []
    session = ConsoleSession(ConsoleConfig(url=url, **config), emit=events.append)
    await session.open()
    return session, events


async def test_paging_marks_and_bulk_planning(store_url: str) -> None:
    seed = Monque(store_url, recover_stale_jobs=False)
    await seed.initialize()
    await seed.enqueue_many([{"name": "page", "data": {"i": i}} for i in range(PAGE_SIZE * 2 + 10)])
    await seed.close()
    session, events = await _session(store_url)
    try:
        assert await session.load_top()
        assert len(session.window) == PAGE_SIZE and session.window.has_after
        session.cursor_row = PAGE_SIZE - 1
        assert await session.load_edge("after")
        assert len(session.window) == PAGE_SIZE * 2
        assert await session.load_bottom()
        assert not session.window.has_after and session.window.has_before
        # a query change supersedes a slower load of the old query (generation check)
        old = asyncio.ensure_future(session.load_top())
        await asyncio.sleep(0)  # the old load has taken its generation and awaits its page
        session.set_query(session.query.with_status(JobStatus.CANCELLED))
        fresh = await session.load_top()
        assert fresh and not await old and session.window.query.status is JobStatus.CANCELLED
        assert [e for e in events if isinstance(e, WindowLoaded)][-1].window is session.window
        # marks
        session.set_query(session.query.with_status(JobStatus.PENDING))
        await session.load_top()
        session.mark_loaded()
        assert len(session.marks) == PAGE_SIZE and isinstance(events[-1], MarksChanged)
        session.clear_marks()
        assert session.marks == {}
        # bulk planning: count, bound, act
        plan = await session.plan_bulk(ActionKind.CANCEL)
        assert plan is not None and plan.count == PAGE_SIZE * 2 + 10 and plan.as_of_ms is not None
        assert await session.run_plan(plan) is None
        assert any(isinstance(e, Notice) and e.message.startswith("Cancelled 410 jobs") for e in events)
        assert any(isinstance(e, StatsChanged) for e in events)
        assert await session.plan_bulk(ActionKind.CANCEL) is None  # nothing pending any more
    finally:
        await session.close()


async def test_live_changes_reach_the_window_and_read_only_refuses(store_url: str) -> None:
    creator = Monque(store_url, recover_stale_jobs=False)  # a read-only console never creates the store
    await creator.initialize()
    await creator.close()
    session, events = await _session(store_url, read_only=True)
    try:
        await session.load_top()
        await wait_for(lambda: session.feed_state == "live")
        other = Monque(store_url, recover_stale_jobs=False)
        await other.initialize()
        job = await other.enqueue("live-one")
        await other.close()

        async def flushed() -> bool:
            await session.flush()
            return session.window.get(job.id) is not None

        for _ in range(250):
            if await flushed():
                break
            await asyncio.sleep(0.02)
        assert session.window.get(job.id) is not None
        assert any(isinstance(e, WindowChanged) and job.id in e.diff.inserted for e in events)
        session.cursor = session.window.get(job.id)
        assert session.plan_for_targets(ActionKind.DELETE) is None
        assert await session.plan_bulk(ActionKind.DELETE) is None
        assert sum(isinstance(e, Notice) and "Read-only" in e.message for e in events) == 2
    finally:
        await session.close()
    assert session.feed_state == "stopped"

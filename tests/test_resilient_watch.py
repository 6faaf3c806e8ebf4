"""The engine's one resilient watch, without Textual: a fake store whose feed fails or ends on demand.

The fake stands in for a store's ``open_watch`` only (it is not MongoDB): each open takes the
next scripted behaviour — raise at open, deliver some changes then raise, deliver then end,
or stay open until released.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from monque_engine import ChangeEvent, ChangeFeedHistoryLostError, ChangeFeedUnsupportedError, JobStatus, Monque
from monque_engine.errors import ConnectionError
from monque_engine.scheduler.resilient_watch import ResilientWatch, StreamEndedError, WatchEvent

FAST = {"reconnect_delays": (0.0, 0.0, 0.0), "fallback_retry_interval": 0.01}


def change(n: int) -> ChangeEvent:
    return ChangeEvent(operation="update", job_id=f"{n:024x}", job=None, token=n, name="work", status=JobStatus.PENDING)


class ScriptedFeed:
    """``open_watch`` following a script: "fail-open", "fail-later", "end", "open", "unsupported", "lost"."""

    def __init__(self, *script: str, then: str = "open") -> None:
        self.script = list(script)
        self.then = then
        self.opens: list[Any] = []  # the resume token of each open
        self.release = asyncio.Event()

    async def open_watch(
        self, resume_after: Any = None, *, full_document: bool = True, statuses: tuple[JobStatus, ...] | None = None
    ) -> AsyncIterator[ChangeEvent]:
        self.opens.append(resume_after)
        step = self.script.pop(0) if self.script else self.then
        if step == "fail-open":
            raise ConnectionError("connection refused")
        if step == "unsupported":
            raise ChangeFeedUnsupportedError("h:1/db is a standalone server")
        if step == "lost":
            raise ChangeFeedHistoryLostError("resume token is too old")
        return self._stream(step, len(self.opens))

    async def _stream(self, step: str, n: int) -> AsyncIterator[ChangeEvent]:
        yield change(n)
        if step == "fail-later":
            raise ConnectionError("connection reset")
        if step == "end":
            return
        await self.release.wait()


class Recorder:
    def __init__(self) -> None:
        self.changes: list[ChangeEvent] = []
        self.events: list[WatchEvent] = []

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


async def until(predicate: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.005)


def make(feed: ScriptedFeed, **tuning: Any) -> tuple[ResilientWatch, Recorder]:
    seen = Recorder()
    watch = ResilientWatch(feed, seen.changes.append, seen.events.append, **{**FAST, **tuning})  # type: ignore[arg-type]
    return watch, seen


async def test_a_stream_that_opens_then_breaks_still_ends_in_fallback() -> None:
    feed = ScriptedFeed("fail-later", "fail-later", "fail-later", "fail-later", then="open")
    watch, seen = make(feed, proven_after=60.0)
    await watch.start()
    await until(lambda: "fallback" in seen.kinds())
    # each open "connected" and delivered a change, yet the failures counted: 4 errors, then fallback
    assert seen.kinds()[: seen.kinds().index("fallback") + 1].count("error") == 4
    await until(lambda: watch.state == "live")
    assert seen.events[-1].kind == "connected" and seen.events[-1].previous == "fallback"
    assert feed.opens[1:] == [1, 2, 3, 4]  # reopened after the last token seen
    await watch.stop()
    assert watch.state == "stopped" and seen.kinds()[-1] == "closed"


async def test_a_stream_that_proved_itself_resets_the_count() -> None:
    feed = ScriptedFeed(*["fail-later"] * 6, then="open")
    watch, seen = make(feed, proven_after=0.0)
    await watch.start()
    await until(lambda: len(feed.opens) >= 7 and watch.state == "live")
    assert "fallback" not in seen.kinds()
    await watch.stop()


async def test_failures_at_open_reconnect_then_fall_back_then_recover() -> None:
    feed = ScriptedFeed("fail-open", "fail-open", "fail-open", "fail-open", then="open")
    watch, seen = make(feed)
    await watch.start()
    await until(lambda: watch.state == "live")
    states = [e.state for e in seen.events]
    assert "reconnecting" in states and "fallback" in states
    assert seen.kinds().count("fallback") == 1
    await watch.stop()


async def test_history_lost_reopens_without_the_token_and_says_reload() -> None:
    feed = ScriptedFeed("fail-later", "lost", then="open")
    watch, seen = make(feed)
    await watch.start()
    await until(lambda: "history_lost" in seen.kinds() and watch.state == "live")
    assert feed.opens == [None, 1, None]  # after the loss: no token
    await watch.stop()


async def test_an_unsupported_deployment_falls_back_once_for_good() -> None:
    feed = ScriptedFeed("unsupported", then="unsupported")
    watch, seen = make(feed)
    await watch.start()
    await until(lambda: watch.state == "fallback")
    await watch.wait()  # the watch stops trying: no retry every interval
    assert seen.kinds() == ["error", "fallback"]
    assert seen.events[-1].permanent and "standalone" in (seen.events[-1].reason or "")
    assert len(feed.opens) == 1
    await watch.stop()
    assert seen.kinds() == ["error", "fallback"]  # never live: no "closed"


async def test_an_unexpected_end_of_stream_is_a_failure_not_a_close() -> None:
    feed = ScriptedFeed("end", then="open")
    watch, seen = make(feed)
    await watch.start()
    await until(lambda: len(feed.opens) == 2 and watch.state == "live")
    error_event = next(e for e in seen.events if e.kind == "error")
    assert isinstance(error_event.error, StreamEndedError)
    assert seen.kinds()[:4] == ["connected", "error", "closed", "connected"]
    assert [c.token for c in seen.changes] == [1, 2]
    await watch.stop()


async def test_stop_reports_closed_only_when_live() -> None:
    feed = ScriptedFeed(then="open")
    watch, seen = make(feed)
    await watch.start()
    await until(lambda: watch.state == "live")
    await watch.stop()
    assert seen.kinds() == ["connected", "closed"] and watch.state == "stopped"
    await watch.stop()  # twice is harmless and says nothing more
    assert seen.kinds() == ["connected", "closed"]


async def test_a_consumer_that_raises_does_not_break_the_feed() -> None:
    feed = ScriptedFeed(then="open")
    events: list[str] = []

    def bad(_: ChangeEvent) -> None:
        raise RuntimeError("consumer bug")

    watch = ResilientWatch(feed, bad, lambda e: events.append(e.kind), **FAST)  # type: ignore[arg-type]
    await watch.start()
    await until(lambda: watch.state == "live")
    await asyncio.sleep(0)
    assert events == ["connected"]
    await watch.stop()


async def test_monque_stop_emits_changestream_closed_when_live(tmp_path: Any) -> None:
    """Upstream emits changestream:closed on stop; so does the processor's feed now (issue 9 item 4)."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    seen: list[str] = []
    for name in ("changestream:connected", "changestream:closed"):
        m.on(name, lambda _payload, name=name: seen.append(name))
    m.register("work", lambda job: None)
    await m.initialize()
    await m.start()
    await until(lambda: m.feed_state == "live")
    await m.stop()
    assert seen == ["changestream:connected", "changestream:closed"]
    assert m.feed_state == "stopped"
    await m.close()


async def test_the_facade_builds_a_resilient_watch_on_its_store(tmp_path: Any) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        seen = Recorder()
        watch = m.resilient_watch(seen.changes.append, seen.events.append)
        await watch.start()
        await until(lambda: watch.state == "live")
        job = await m.enqueue("work")
        await until(lambda: any(c.job_id == job.id for c in seen.changes))
        await watch.stop()
        assert seen.kinds() == ["connected", "closed"]
    finally:
        await m.close()


@pytest.mark.parametrize("kind", ["connected", "error", "closed", "fallback"])
def test_watch_event_kinds_are_engine_event_names(kind: str) -> None:
    from monque_engine.events import EVENT_NAMES

    assert f"changestream:{kind}" in EVENT_NAMES

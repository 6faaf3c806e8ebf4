"""One resilient change feed: the reconnect-and-fallback state machine, used by the
processor's lifecycle and by any consumer (the console) through ``Monque.resilient_watch``.

States (one vocabulary for everyone, ``FeedState``):

- ``connecting``: opening the first stream;
- ``live``: a stream is open and changes are delivered;
- ``reconnecting``: the stream failed; reopening after 1, 2, 4 s (``reconnect_delays``);
- ``fallback``: it failed more times in a row than there are delays; consumers poll
  instead, and the watch keeps trying every ``fallback_retry_interval`` until a stream
  works again (then ``live``), or, when the deployment cannot have a feed at all
  (``ChangeFeedUnsupportedError``: a standalone MongoDB server), for good, said once;
- ``stopped``: ``stop()`` was called (or never started).

Rules kept here so every consumer gets them:

- a failure counts until the stream has proved itself by staying up ``proven_after``
  seconds (time, not "open_watch returned": a stream that opens and then breaks at once,
  over and over, must still end in fallback rather than reconnect forever);
- ``ChangeFeedHistoryLostError`` (resume token too old, or the feed was invalidated):
  reopen without the token, and tell the consumer (``history_lost``) to reload what it
  shows, since changes were missed;
- a stream that ends while not stopping is a failure (the store went away under it),
  not a clean close;
- ``stop()`` reports ``closed`` when the stream was live, as upstream emits
  ``changestream:closed`` on stop.

Consumers get two plain callbacks, run on the event loop: ``on_change(ChangeEvent)`` and
``on_event(WatchEvent)``. Their names match the engine's ``changestream:*`` events. In row
mode (``on_rows``, ``Monque.resilient_watch_rows``) every change comes instead a pull at a
time as ``ChangeRows``: from the store's row feed where it has one (SQLite), else one change
per call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..change_rows import ChangeRows, EventsAsRows
from ..errors import ChangeFeedHistoryLostError, ChangeFeedUnsupportedError
from ..errors import ConnectionError as StoreConnectionError
from ..job import ChangeEvent, JobStatus
from ..store import ports

log = logging.getLogger("monque_engine.watch")

FeedState = Literal["connecting", "live", "reconnecting", "fallback", "stopped"]
WatchEventKind = Literal["connected", "error", "closed", "fallback", "history_lost"]

RECONNECT_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0)
FALLBACK_RETRY_INTERVAL = 30.0
STREAM_PROVEN_AFTER = 10.0


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """A transition of the watch. ``kind`` names the matching ``changestream:*`` event
    (``history_lost`` has none: it only tells a consumer to reload)."""

    kind: WatchEventKind
    state: FeedState
    #: The state before this event (a consumer polling in fallback re-arms on the way back).
    previous: FeedState
    error: BaseException | None = None
    reason: str | None = None
    #: Fallback for good: the deployment has no change feed, and no retry will follow.
    permanent: bool = False


class StreamEndedError(StoreConnectionError):
    """The change stream ended although nobody stopped it: the store went away under it."""


class ResilientWatch:
    def __init__(
        self,
        store: ports.Feed,
        on_change: Callable[[ChangeEvent], None],
        on_event: Callable[[WatchEvent], None] | None = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
        names: Callable[[], tuple[str, ...]] | None = None,
        reconnect_delays: tuple[float, ...] = RECONNECT_DELAYS,
        fallback_retry_interval: float = FALLBACK_RETRY_INTERVAL,
        proven_after: float = STREAM_PROVEN_AFTER,
        on_rows: Callable[[ChangeRows], None] | None = None,
    ) -> None:
        self._store = store
        self._on_change = on_change
        #: Row mode: every change (no filter, no documents), a pull per call; ``on_change`` unused.
        self._on_rows = on_rows
        if on_rows is not None and (statuses is not None or names is not None or full_document):
            raise ValueError("a row watch takes every change, without documents: no statuses, names or full_document")
        self._on_event = on_event
        self._full_document = full_document
        self._statuses = statuses
        #: Read at each open: the names the stream is narrowed to (``refilter`` reopens it
        #: when they change).
        self._names = names
        #: A reopen for a new filter (``refilter``): the stream was live and stays so, so no
        #: ``connected`` is reported for it.
        self._quiet_reopen = False
        self.reconnect_delays = reconnect_delays
        self.fallback_retry_interval = fallback_retry_interval
        self.proven_after = proven_after
        self.state: FeedState = "stopped"
        #: The last failure, for display ("reconnecting: connection reset").
        self.error: BaseException | None = None
        self.token: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._first: AsyncIterator[Any] | None = None
        self._first_error: BaseException | None = None

    @property
    def live(self) -> bool:
        return self.state == "live"

    # -- start / stop ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Open the first stream now (so every commit after start() returns is heard), then follow it.

        Never raises for a feed failure: that is the watch's own business (reconnect, fallback).
        """
        if self._task is not None:
            return
        self._stopping = False
        self.state = "connecting"
        try:
            self._first = await self._open()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - goes down the loop's failure path
            self._first_error = error
        self._task = asyncio.get_running_loop().create_task(self._run(), name="monque-resilient-watch")

    async def stop(self) -> None:
        """Stop following; reports ``closed`` if the stream was live."""
        self._stopping = True
        task, self._task = self._task, None
        first, self._first = self._first, None
        try:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            if first is not None:
                await _close_stream(first)
        finally:
            # Stopped even when the caller gave up on closing (a bounded stop(): closing a
            # MongoDB stream waits for a server): the loop is cancelled either way.
            was_live = self.state == "live"
            previous = self.state
            self.state = "stopped"
            if was_live:
                self._emit(WatchEvent("closed", "stopped", previous))

    async def refilter(self) -> None:
        """Reopen the stream from where it got to, so a changed filter (``names``) applies.

        Resuming from the token with the new pipeline replays what happened since under the
        new filter, so a name registered while the stream ran misses none of its changes.
        When the stream is not live (reconnecting, fallback) the next open applies it anyway.
        """
        task = self._task
        if task is None or self._stopping or self.state != "live":
            return
        first, self._first = self._first, None
        self._quiet_reopen = True
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if first is not None:
            await _close_stream(first)
        if self._stopping or self._task is not task:
            self._quiet_reopen = False
            return
        self._task = asyncio.get_running_loop().create_task(self._run(), name="monque-resilient-watch")

    async def wait(self) -> None:
        """Until the watch stops following (stop(), or a permanent fallback)."""
        task = self._task
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    # -- the loop ---------------------------------------------------------------------------------
    async def _open(self) -> AsyncIterator[Any]:
        if self._on_rows is not None:
            open_rows = getattr(self._store, "open_watch_rows", None)  # ports.RowFeed, where the store has it
            if open_rows is not None:
                rows: AsyncIterator[ChangeRows] = await open_rows(self.token)
                return rows
            return EventsAsRows(await self._store.open_watch(self.token, full_document=False))
        if self._names is None:
            return await self._store.open_watch(self.token, full_document=self._full_document, statuses=self._statuses)
        return await self._store.open_watch(
            self.token, full_document=self._full_document, statuses=self._statuses, names=self._names()
        )

    def _set(
        self,
        kind: WatchEventKind,
        state: FeedState,
        error: BaseException | None = None,
        reason: str | None = None,
        permanent: bool = False,
    ) -> None:
        previous, self.state = self.state, state
        self._emit(WatchEvent(kind, state, previous, error, reason, permanent))

    def _emit(self, event: WatchEvent) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(event)
        except Exception:  # an observer must never break the feed
            log.exception("resilient watch listener raised on %s", event.kind)

    async def _run(self) -> None:
        failures = 0
        while True:
            opened_at = time.monotonic()
            stream: AsyncIterator[Any] | None = None
            quiet, self._quiet_reopen = self._quiet_reopen, False
            try:
                if self._first_error is not None:
                    error, self._first_error = self._first_error, None
                    raise error
                if self._first is not None:
                    stream, self._first = self._first, None
                else:
                    stream = await self._open()
                self.error = None
                if not (quiet and self.state == "live"):  # refilter(): still live, nothing to report
                    self._set("connected", "live")
                if self._on_rows is not None:
                    await self._follow_rows(stream, self._on_rows)
                else:
                    async for change in stream:
                        self.token = change.token
                        try:
                            self._on_change(change)
                        except Exception:
                            log.exception("resilient watch consumer raised on a change")
                if self._stopping:
                    return
                raise StreamEndedError("the change stream ended unexpectedly (the store closed or went away)")
            except asyncio.CancelledError:
                if stream is not None:
                    self._advance_token(stream)  # refilter() resumes from here
                    await _close_stream(stream)
                raise
            except Exception as error:  # noqa: BLE001 - every feed failure goes down one path
                if stream is not None:
                    self._advance_token(stream)
                    await _close_stream(stream)
                if self._stopping:
                    return
                before = self.state
                was_live = before == "live"
                self.error = error
                if isinstance(error, ChangeFeedUnsupportedError):
                    # Permanent: fall back once, say why once, and stop trying.
                    self._set("error", before, error)
                    reason = f"the change feed is not available here, polling instead: {error}"
                    self._emit(WatchEvent("fallback", "fallback", before, error, reason, permanent=True))
                    self.state = "fallback"
                    return
                # Only time proves a stream: one that delivers an event and then breaks, over
                # and over, must still end up in fallback rather than reconnect forever.
                if time.monotonic() - opened_at >= self.proven_after:
                    failures = 0
                failures += 1
                if failures <= len(self.reconnect_delays):
                    state: FeedState = "reconnecting"
                    delay = self.reconnect_delays[failures - 1]
                else:
                    state = "fallback"
                    delay = self.fallback_retry_interval
                self._set("error", "reconnecting" if before != "fallback" else "fallback", error)
                if was_live:
                    self._set("closed", self.state, error)
                if isinstance(error, ChangeFeedHistoryLostError):
                    self.token = None  # history lost: start from now
                    self._set("history_lost", self.state, error, "changes were missed: reload what is shown")
                if state == "fallback" and before != "fallback":
                    self._emit(
                        WatchEvent(
                            "fallback",
                            "fallback",
                            before,
                            error,
                            # Upstream's words lead ("Exhausted … reconnection attempts").
                            f"Exhausted {len(self.reconnect_delays)} reconnection attempts "
                            f"(the change feed failed {failures} times in a row): {error}",
                        )
                    )
                self.state = state
                await asyncio.sleep(delay)

    async def _follow_rows(self, stream: AsyncIterator[ChangeRows], on_rows: Callable[[ChangeRows], None]) -> None:
        async for batch in stream:
            self.token = batch.token
            try:
                on_rows(batch)
            except Exception:
                log.exception("resilient watch consumer raised on a batch of changes")

    def _advance_token(self, stream: AsyncIterator[Any]) -> None:
        """Resume from where the stream got to, not from the last event delivered: a store
        whose iterator knows a later position (MongoDB's ``resume_token``, advanced over
        empty batches) offers it as ``resume_token``."""
        latest = getattr(stream, "resume_token", None)
        if latest is not None:
            self.token = latest


async def _close_stream(stream: AsyncIterator[Any]) -> None:
    close = getattr(stream, "aclose", None) or getattr(stream, "close", None)
    if close is None:
        return
    try:
        result = close()
        if asyncio.iscoroutine(result):
            await result
    except Exception:  # noqa: BLE001 - best effort: the stream is being abandoned
        pass

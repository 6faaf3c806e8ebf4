"""A small typed event emitter with upstream's event names.

Listeners may be plain functions or coroutine functions. A listener that raises is logged
and does not disturb the scheduler or the other listeners: an observer must never be able
to break job processing.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("monque_engine.events")

EVENT_NAMES = frozenset({
    "job:start", "job:complete", "job:fail", "job:error", "stale:recovered",
    "changestream:connected", "changestream:error", "changestream:closed", "changestream:fallback",
    "job:cancelled", "job:retried", "job:deleted",
    "jobs:cancelled", "jobs:retried", "jobs:deleted",
    "queue:paused", "queue:resumed",
})  # fmt: skip

Listener = Callable[[Any], Any]


class EventEmitter:
    def __init__(self) -> None:
        self._listeners: dict[str, list[tuple[Listener, bool]]] = {}
        self._pending: set[asyncio.Task[Any]] = set()

    def on(self, event: str, listener: Listener) -> Listener:
        self._check(event)
        self._listeners.setdefault(event, []).append((listener, False))
        return listener

    def once(self, event: str, listener: Listener) -> Listener:
        self._check(event)
        self._listeners.setdefault(event, []).append((listener, True))
        return listener

    def off(self, event: str, listener: Listener | None = None) -> None:
        """Remove one listener, or every listener of the event when none is given."""
        if listener is None:
            self._listeners.pop(event, None)
            return
        entries = self._listeners.get(event, [])
        for index, (existing, _) in enumerate(entries):
            if existing is listener:
                del entries[index]
                break

    def has_listeners(self, event: str) -> bool:
        return bool(self._listeners.get(event))

    def emit(self, event: str, payload: Any = None) -> bool:
        entries = self._listeners.get(event)
        if not entries:
            return False
        for listener, once in list(entries):
            if once:
                self.off(event, listener)
            try:
                result = listener(payload)
            except Exception:
                log.exception("listener for %r raised", event)
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._pending.add(task)
                task.add_done_callback(self._listener_done)
        return True

    def _listener_done(self, task: asyncio.Task[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("async listener raised", exc_info=task.exception())

    @staticmethod
    def _check(event: str) -> None:
        if event not in EVENT_NAMES:
            known = ", ".join(sorted(EVENT_NAMES))
            raise ValueError(f"Unknown event {event!r}; known events: {known}")


# -- event payloads (attribute names are upstream's, in snake_case) ------------------------------
from dataclasses import dataclass  # noqa: E402


@dataclass(frozen=True, slots=True)
class JobEvent:
    """job:cancelled."""

    job: Any


@dataclass(frozen=True, slots=True)
class JobCompleteEvent:
    job: Any
    duration: float  # milliseconds, as upstream


@dataclass(frozen=True, slots=True)
class JobFailEvent:
    job: Any
    error: BaseException
    will_retry: bool


@dataclass(frozen=True, slots=True)
class JobErrorEvent:
    error: BaseException
    job: Any = None


@dataclass(frozen=True, slots=True)
class JobRetriedEvent:
    job: Any
    previous_status: str


@dataclass(frozen=True, slots=True)
class JobDeletedEvent:
    job_id: str


@dataclass(frozen=True, slots=True)
class CountEvent:
    """stale:recovered and jobs:cancelled|retried|deleted."""

    count: int


@dataclass(frozen=True, slots=True)
class ChangeStreamEvent:
    """changestream:connected|error|closed|fallback."""

    error: BaseException | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class QueueControlEvent:
    """queue:paused and queue:resumed: this process saw claiming of ``name`` paused or resumed
    in the store (by itself or by another process), so its workers now follow it."""

    name: str

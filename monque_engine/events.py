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
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, overload

from .errors import InvalidEventError, StoreLostError
from .exception_text import describe_exception
from .forwarded import forwarder

if TYPE_CHECKING:
    from .job import Job

log = logging.getLogger("monque_engine.events")

#: Events whose payload is a ``CountEvent``; the ``changestream:*`` ones carry a
#: ``ChangeStreamEvent`` and the ``queue:*`` ones a ``QueueControlEvent``.
CountEventName = Literal["stale:recovered", "jobs:cancelled", "jobs:retried", "jobs:deleted"]
ChangeStreamEventName = Literal[
    "changestream:connected", "changestream:error", "changestream:closed", "changestream:fallback"
]
QueueControlEventName = Literal["queue:paused", "queue:resumed"]
#: Every event name (upstream's); mypy rejects any other in ``emit``/``on``/``once``/``off``.
EventName = Literal[
    "job:start", "job:complete", "job:fail", "job:error", "job:cancelled", "job:retried", "job:deleted",
    CountEventName, ChangeStreamEventName, QueueControlEventName,
]  # fmt: skip


def _names(alias: Any) -> frozenset[str]:
    """The strings of a (possibly nested) Literal alias."""
    out: set[str] = set()
    for arg in get_args(alias):
        out |= {arg} if isinstance(arg, str) else _names(arg)
    return frozenset(out)


EVENT_NAMES: frozenset[str] = _names(EventName)

#: Listeners get the payload of their event (see ``MonqueEventMap``); they may be coroutine
#: functions. ``on``/``once`` are overloaded per event (as ``emit`` is), so a type checker
#: matches a listener's parameter to its event's payload; this alias is the run-time shape.
Listener = Callable[[Any], Any]


class Subscribe(Protocol):
    """``on`` and ``once``: one overload per event, so a type checker matches a listener's
    parameter to its event's payload (as upstream's ``MonqueEventMap`` does). One set serves
    the emitter and the ``Monque`` facade."""

    @overload
    def __call__(self, event: Literal["job:start"], listener: Callable[[Job], Any]) -> Callable[[Job], Any]: ...
    @overload
    def __call__(
        self, event: Literal["job:complete"], listener: Callable[[JobCompleteEvent], Any]
    ) -> Callable[[JobCompleteEvent], Any]: ...
    @overload
    def __call__(
        self, event: Literal["job:fail"], listener: Callable[[JobFailEvent], Any]
    ) -> Callable[[JobFailEvent], Any]: ...
    @overload
    def __call__(
        self, event: Literal["job:error"], listener: Callable[[JobErrorEvent], Any]
    ) -> Callable[[JobErrorEvent], Any]: ...
    @overload
    def __call__(
        self, event: Literal["job:cancelled"], listener: Callable[[JobEvent], Any]
    ) -> Callable[[JobEvent], Any]: ...
    @overload
    def __call__(
        self, event: Literal["job:retried"], listener: Callable[[JobRetriedEvent], Any]
    ) -> Callable[[JobRetriedEvent], Any]: ...
    @overload
    def __call__(
        self, event: Literal["job:deleted"], listener: Callable[[JobDeletedEvent], Any]
    ) -> Callable[[JobDeletedEvent], Any]: ...
    @overload
    def __call__(self, event: CountEventName, listener: Callable[[CountEvent], Any]) -> Callable[[CountEvent], Any]: ...
    @overload
    def __call__(
        self, event: ChangeStreamEventName, listener: Callable[[ChangeStreamEvent], Any]
    ) -> Callable[[ChangeStreamEvent], Any]: ...
    @overload
    def __call__(
        self, event: QueueControlEventName, listener: Callable[[QueueControlEvent], Any]
    ) -> Callable[[QueueControlEvent], Any]: ...
    def __call__(self, event: EventName, listener: Listener) -> Listener: ...


class EventEmitter:
    def __init__(self) -> None:
        self._listeners: dict[str, list[tuple[Listener, bool]]] = {}
        self._pending: set[asyncio.Task[Any]] = set()
        #: A ``StoreLostError`` went to ``job:error`` listeners (reset when the store is opened again).
        self.store_loss_reported = False
        #: Add a listener (``once``: removed after its first call); typed per event by ``Subscribe``.
        self.on: Subscribe = self._subscribe
        self.once: Subscribe = self._subscribe_once

    def _subscribe(self, event: EventName, listener: Listener) -> Listener:
        self._check(event, listener)
        self._listeners.setdefault(event, []).append((listener, False))
        return listener

    def _subscribe_once(self, event: EventName, listener: Listener) -> Listener:
        self._check(event, listener)
        self._listeners.setdefault(event, []).append((listener, True))
        return listener

    def off(self, event: EventName, listener: Listener | None = None) -> None:
        """Remove one listener, or every listener of the event when none is given."""
        if listener is None:
            self._listeners.pop(event, None)
            return
        entries = self._listeners.get(event, [])
        for index, (existing, _) in enumerate(entries):
            if existing is listener:
                del entries[index]
                break

    def has_listeners(self, event: EventName) -> bool:
        return bool(self._listeners.get(event))

    def listener_count(self, event: EventName) -> int:
        """How many listeners ``event`` has (Node's ``listenerCount``, which upstream's
        Monque inherits from its EventEmitter)."""
        return len(self._listeners.get(event, ()))

    def remove_all_listeners(self, event: EventName | None = None) -> None:
        """Remove every listener of ``event``, or of every event (Node's ``removeAllListeners``)."""
        if event is None:
            self._listeners.clear()
        else:
            self._listeners.pop(event, None)

    @overload
    def emit(self, event: Literal["job:start"], payload: Job) -> bool: ...
    @overload
    def emit(self, event: Literal["job:complete"], payload: JobCompleteEvent) -> bool: ...
    @overload
    def emit(self, event: Literal["job:fail"], payload: JobFailEvent) -> bool: ...
    @overload
    def emit(self, event: Literal["job:error"], payload: JobErrorEvent) -> bool: ...
    @overload
    def emit(self, event: Literal["job:cancelled"], payload: JobEvent) -> bool: ...
    @overload
    def emit(self, event: Literal["job:retried"], payload: JobRetriedEvent) -> bool: ...
    @overload
    def emit(self, event: Literal["job:deleted"], payload: JobDeletedEvent) -> bool: ...
    @overload
    def emit(self, event: CountEventName, payload: CountEvent) -> bool: ...
    @overload
    def emit(self, event: ChangeStreamEventName, payload: ChangeStreamEvent) -> bool: ...
    @overload
    def emit(self, event: QueueControlEventName, payload: QueueControlEvent) -> bool: ...
    def emit(self, event: EventName, payload: Any = None) -> bool:
        entries = self._listeners.get(event)
        if not entries:
            return False
        if event == "job:error" and isinstance(getattr(payload, "error", None), StoreLostError):
            # Final and the same for every caller: the poll loop, the heartbeat, each in-flight
            # job's completion and the idle check all met it, and a worker's log got a line
            # from each, several a second, until it was stopped.
            if self.store_loss_reported:
                return False
            self.store_loss_reported = True
        for listener, once in list(entries):
            if once:
                self.off(event, listener)
            try:
                result = listener(payload)
            except Exception as error:  # noqa: BLE001 - an observer must not break processing
                _log_listener_error(f"listener for {event!r} raised", error)
                continue
            if result is not None and inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._pending.add(task)
                task.add_done_callback(self._listener_done)
        return True

    def _listener_done(self, task: asyncio.Task[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            _log_listener_error("async listener raised", error)

    @staticmethod
    def _check(event: object, listener: object) -> None:
        # Kept at run time: callers without a type checker (and tests) pass anything.
        if not isinstance(event, str) or event not in EVENT_NAMES:
            known = ", ".join(sorted(EVENT_NAMES))
            raise InvalidEventError(f"Unknown event {event!r}; known events: {known}")
        if not callable(listener):
            # Accepted, it would fail (and be logged) on every emit, far from the mistake.
            raise InvalidEventError(
                f"The listener for {event!r} must be callable (a function taking the event's payload), "
                f"got {type(listener).__name__}"
            )


def _log_listener_error(what: str, error: BaseException) -> None:
    """Log a listener's exception from its description, not with ``exc_info``: logging
    formats ``exc_info`` itself, and an exception whose ``__notes__`` or attributes raise
    made that raise out of ``emit``, into the scheduler duty that emitted (a heartbeat or
    poll loop would end). A listener may well re-raise a handler's hostile exception."""
    described = describe_exception(error)
    log.error("%s %s: %s\n%s", what, described.type, described.message, described.traceback.rstrip("\n"))


# -- event payloads: in ``event_payloads``, loaded on first use (issue 40) ---------------------------
if TYPE_CHECKING:
    from .event_payloads import ChangeStreamEvent as ChangeStreamEvent
    from .event_payloads import CountEvent as CountEvent
    from .event_payloads import JobCompleteEvent as JobCompleteEvent
    from .event_payloads import JobDeletedEvent as JobDeletedEvent
    from .event_payloads import JobErrorEvent as JobErrorEvent
    from .event_payloads import JobEvent as JobEvent
    from .event_payloads import JobFailEvent as JobFailEvent
    from .event_payloads import JobRetriedEvent as JobRetriedEvent
    from .event_payloads import MonqueEventMap as MonqueEventMap
    from .event_payloads import QueueControlEvent as QueueControlEvent

#: Names this module still answers for, defined in ``event_payloads``.
_PAYLOADS = frozenset(
    {
        "MonqueEventMap",
        "JobEvent",
        "JobCompleteEvent",
        "JobFailEvent",
        "JobErrorEvent",
        "JobRetriedEvent",
        "JobDeletedEvent",
        "CountEvent",
        "ChangeStreamEvent",
        "QueueControlEvent",
    }
)


_forwarded = forwarder(__name__, ".event_payloads", _PAYLOADS)


def __getattr__(name: str) -> Any:
    return _forwarded(name)

"""The events' payloads (attribute names are upstream's, in snake_case).

Apart from the emitter (``events``): every ``Monque`` builds an emitter, but a console or a
producer emits nothing before its first rows or its first job, and creating these nine
dataclasses cost ~4 ms of every launch (issue 40). The scheduler imports them where it emits;
``monque_engine.events`` and ``monque_engine`` still name them (loaded on first use), and
``MonqueEventMap`` with them: ``get_type_hints`` resolves its names in this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from .job import Job  # named in MonqueEventMap


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


#: The payload each event carries, as upstream's ``MonqueEventMap`` (for annotating listeners;
#: ``emit`` checks the same pairs statically through its overloads).
MonqueEventMap = TypedDict(
    "MonqueEventMap",
    {
        "job:start": "Job",
        "job:complete": "JobCompleteEvent",
        "job:fail": "JobFailEvent",
        "job:error": "JobErrorEvent",
        "job:cancelled": "JobEvent",
        "job:retried": "JobRetriedEvent",
        "job:deleted": "JobDeletedEvent",
        "stale:recovered": "CountEvent",
        "jobs:cancelled": "CountEvent",
        "jobs:retried": "CountEvent",
        "jobs:deleted": "CountEvent",
        "changestream:connected": "ChangeStreamEvent",
        "changestream:error": "ChangeStreamEvent",
        "changestream:closed": "ChangeStreamEvent",
        "changestream:fallback": "ChangeStreamEvent",
        "queue:paused": "QueueControlEvent",
        "queue:resumed": "QueueControlEvent",
    },
)

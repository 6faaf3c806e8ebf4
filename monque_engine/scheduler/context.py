"""What every scheduler service shares: the options, the events, the identity, the wake-up hooks.

Not the store: each service is handed its own port of it (store/ports.py, ADR 0018) by the
``Monque`` facade, so no service can reach a store call its port does not declare."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..events import EventEmitter
from ..options import MonqueOptions


def _no_wake_at(name: str, due_ms: int) -> None:
    return None


def _no_poll() -> None:
    return None


@dataclass(slots=True)
class SchedulerContext:
    """What the scheduler's parts share: the options, the events, and how to wake the local workers."""

    options: MonqueOptions
    events: EventEmitter
    #: Tell this process's processor that a job of ``name`` is due at ``due_ms``. Writes made
    #: here wake the local workers directly (as upstream does), so polling or fallback mode
    #: never adds a poll interval to work this process itself created.
    wake_at: Callable[[str, int], None] = field(default=_no_wake_at)
    #: Ask for a poll round now (after bulk writes whose due times this process does not know).
    poll_soon: Callable[[], None] = field(default=_no_poll)

    @property
    def instance_id(self) -> str:
        return self.options.scheduler_instance_id

"""What every scheduler service shares: the store, the options, the events, the identity."""

from __future__ import annotations

from dataclasses import dataclass

from ..events import EventEmitter
from ..options import MonqueOptions
from ..store.base import JobStore


@dataclass(slots=True)
class SchedulerContext:
    store: JobStore
    options: MonqueOptions
    events: EventEmitter

    @property
    def instance_id(self) -> str:
        return self.options.scheduler_instance_id

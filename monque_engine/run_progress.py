"""A running job's progress report: how far its handler says it has got (ADR 0019).

Stored on the job as a field of ours (MongoDB ``progress: {fraction, message, at}``, SQLite
a ``progress`` JSON column), which Node workers carry along unread. Like ``overLimitAt`` it
speaks for the running attempt only when it was written after that attempt's claim
(``at >= lockedAt``), so a retried job never shows the last run's 90 %.

Read leniently: a value another program or a hand edit wrote that is not a usable report
reads as no report, so one odd field never makes a job unreadable.
"""

from __future__ import annotations

import contextvars
import json
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from .timeutil import ms_to_datetime

#: The longest progress message kept; longer ones are refused at the call (a progress line
#: is a status, not a log).
MAX_PROGRESS_MESSAGE = 200
#: At most one progress write per job per this many seconds; reports in between keep only
#: the latest, written when the second is up (the engine throttles, the handler need not).
PROGRESS_INTERVAL_S = 1.0


class ProgressSink(Protocol):
    """Where a running handler's reports go: the processor running it."""

    # ``job`` is the running ``Job`` (typed Any: job.py imports this module, not the reverse).
    def take_progress(self, job: Any, report: Progress) -> Awaitable[None] | None: ...

    def take_progress_threadsafe(self, job: Any, report: Progress) -> None: ...


#: The processor and job id whose handler runs in this context: set by each run's task, and
#: so seen by the handler, by a sync handler's thread (it runs in a copy of the context) and
#: by whatever they schedule on the loop. Kept here, below the scheduler, so ``Job`` can
#: find its run's processor for ``report_progress`` at no cost to jobs that never report.
RUNNING_JOB: contextvars.ContextVar[tuple[ProgressSink, str] | None] = contextvars.ContextVar(
    "monque_running_job", default=None
)


class InvalidProgressError(ValueError):
    """A progress report that is not one (fraction outside 0..1, NaN, a message too long),
    or one made outside the job's own handler."""


def checked_progress(fraction: object, message: object, at_ms: int) -> Progress:
    """``fraction`` / ``message`` as a report, or ``InvalidProgressError`` saying what is wrong."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise InvalidProgressError(
            f"progress must be a number from 0 to 1, got {type(fraction).__name__} {fraction!r:.40}"
        )
    if not math.isfinite(fraction) or not 0 <= fraction <= 1:
        raise InvalidProgressError(f"progress must be a number from 0 to 1 (0.25 for 25 %), got {fraction!r}")
    if message is not None:
        if not isinstance(message, str):
            raise InvalidProgressError(f"progress message must be text or None, got {type(message).__name__}")
        if len(message) > MAX_PROGRESS_MESSAGE:
            raise InvalidProgressError(
                f"progress message must be at most {MAX_PROGRESS_MESSAGE} characters, got {len(message)}; "
                "a progress line is a status, not a log"
            )
    return Progress(float(fraction), message, at_ms)


@dataclass(frozen=True, slots=True)
class Progress:
    """``fraction`` in 0..1, an optional short ``message``, and when it was reported."""

    fraction: float
    message: str | None
    at_ms: int

    @property
    def at(self) -> datetime:
        return ms_to_datetime(self.at_ms)

    @property
    def percent(self) -> int:
        """The fraction as a whole percentage, rounded down (99.9 % is not yet 100)."""
        return int(self.fraction * 100)

    def as_mapping(self, instant: Callable[[int], Any]) -> dict[str, Any]:
        """The stored and shown shape, ``{fraction, message, at}``, with ``at`` written by
        ``instant`` (a BSON date, ISO text, or epoch ms as SQLite keeps it): the inverse of
        ``from_mapping``."""
        return {"fraction": self.fraction, "message": self.message, "at": instant(self.at_ms)}

    def to_json(self) -> str:
        return json.dumps(self.as_mapping(int), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: object) -> Progress | None:
        if not isinstance(text, str):
            return None
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
        return cls.from_mapping(value, lambda at: at if type(at) is int else None)

    @classmethod
    def from_mapping(cls, value: object, instant: Callable[[object], int | None]) -> Progress | None:
        """A stored report (JSON object or MongoDB subdocument, whose ``at`` ``instant``
        turns into epoch ms or None), or None if it is not one."""
        if not isinstance(value, Mapping):
            return None
        fraction, message, at = value.get("fraction"), value.get("message"), value.get("at")
        if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not math.isfinite(fraction):
            return None
        if not 0 <= fraction <= 1 or (message is not None and not isinstance(message, str)):
            return None
        at_ms = instant(at)
        if at_ms is None:
            return None
        return cls(float(fraction), message, at_ms)

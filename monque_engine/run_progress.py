"""A running job's progress report: how far its handler says it has got (ADR 0019).

Stored on the job as a field of ours (MongoDB ``progress: {fraction, message, at}``, SQLite
a ``progress`` JSON column), which Node workers carry along unread. Like ``overLimitAt`` it
speaks for the running attempt only when it was written after that attempt's claim
(``at >= lockedAt``), so a retried job never shows the last run's 90 %.

Read leniently: a value another program or a hand edit wrote that is not a usable report
reads as no report, so one odd field never makes a job unreadable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from .timeutil import ms_to_datetime

#: The longest progress message kept; longer ones are refused at the call (a progress line
#: is a status, not a log).
MAX_PROGRESS_MESSAGE = 200


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

    def to_json(self) -> str:
        return json.dumps({"fraction": self.fraction, "message": self.message, "at": self.at_ms}, separators=(",", ":"))

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

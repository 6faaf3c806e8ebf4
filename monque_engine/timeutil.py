"""Instants as integer epoch milliseconds: the precision both stores keep (BSON dates are ms).

Working in ints on the hot path avoids building datetimes nobody reads; the public `Job`
turns them into timezone-aware UTC datetimes on access.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: The instants every part of the system can hold: Python datetimes (years 1-9999), which
#: both stores hand back (SQLite as int64 ms, MongoDB as BSON dates decoded by PyMongo).
MIN_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


def now_ms() -> int:
    return time.time_ns() // 1_000_000


#: Below this many ms from the epoch (about the years 1830-2109), ``ms / 1000`` as a float is
#: within half a microsecond of the true instant, so ``fromtimestamp`` rounds to it exactly.
_FLOAT_EXACT_MS = 2**42


def ms_to_datetime(ms: int) -> datetime:
    """Exactly ``ms`` as an aware UTC datetime: the float fast path where it is exact, integer
    arithmetic beyond (a far-future ``run_at`` must read back as the instant stored)."""
    if -_FLOAT_EXACT_MS < ms < _FLOAT_EXACT_MS:
        return datetime.fromtimestamp(ms / 1000, UTC)
    return _EPOCH + timedelta(milliseconds=ms)


def datetime_to_ms(value: datetime) -> int:
    """Convert an aware datetime to ms; naive datetimes are read as UTC (as PyMongo returns them)."""
    if value.tzinfo is None or value.utcoffset() is None:  # a tzinfo without an offset is naive too
        value = value.replace(tzinfo=UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def optional_ms_to_datetime(ms: int | None) -> datetime | None:
    return None if ms is None else ms_to_datetime(ms)


def timedelta_ms(value: timedelta) -> int:
    """Whole milliseconds of a timedelta, exactly (no float rounding for large values)."""
    return (value.days * 86_400 + value.seconds) * 1000 + value.microseconds // 1000


def in_range(ms: int) -> bool:
    return MIN_MS <= ms <= MAX_MS

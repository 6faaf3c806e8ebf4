"""Instants as integer epoch milliseconds: the precision both stores keep (BSON dates are ms).

Working in ints on the hot path avoids building datetimes nobody reads; the public `Job`
turns them into timezone-aware UTC datetimes on access.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def ms_to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def datetime_to_ms(value: datetime) -> int:
    """Convert an aware datetime to ms; naive datetimes are read as UTC (as PyMongo returns them)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def optional_ms_to_datetime(ms: int | None) -> datetime | None:
    return None if ms is None else ms_to_datetime(ms)

"""Retry delay: exponential with ±25% jitter, as upstream computes it.

``backoff_delay_ms`` is what the processor uses (milliseconds, as stored). The public
helpers below are upstream's exported utilities (``calculateBackoffDelay``,
``calculateBackoff``, ``applyJitter``, ``DEFAULT_BASE_INTERVAL``,
``DEFAULT_MAX_BACKOFF_DELAY``) in snake_case and, like every option of ours, in seconds:
a caller can show or plan the delay a failure will get without copying the formula.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

JITTER = 0.25

#: Upstream's defaults, in seconds: 1 s base, 24 h cap (the ``base_retry_interval`` and
#: ``max_backoff_delay`` option defaults).
DEFAULT_BASE_INTERVAL = 1.0
DEFAULT_MAX_BACKOFF_DELAY = 86_400.0


def _round_half_up(value: float) -> int:
    """JavaScript's ``Math.round`` (halves go up), which upstream rounds the delay with."""
    return math.floor(value + 0.5)


def _jittered_ms(delay_ms: float, factor: float, rand: random.Random | None) -> int:
    """``delay`` spread uniformly over ``delay × (1 ± factor)``, whole ms, never negative.

    A factor of zero or less, or a zero delay, leaves the delay as it is. The draw is
    ``rand.uniform(-factor, factor)``, or without ``rand`` one ``random.random()`` looked up
    at call time (so a test can pin it, as upstream's tests pin ``Math.random``).
    """
    if factor <= 0 or delay_ms <= 0:
        return _round_half_up(delay_ms)
    spread = rand.uniform(-factor, factor) if rand is not None else factor * (2 * random.random() - 1)
    return max(0, _round_half_up(delay_ms * (1 + spread)))


def backoff_delay_ms(
    fail_count: int, base_ms: float, max_ms: float, rand: random.Random | None = None, jitter: float = JITTER
) -> int:
    """Delay before the next attempt after ``fail_count`` failures.

    min(2^fail_count × base, max), then ±25% jitter, rounded half up, floored at 0 and
    capped at max again, so a burst of failures does not retry in lockstep and no delay
    exceeds the cap.
    """
    exponent = min(fail_count, 1023)  # 2**1024 overflows a float; the cap applies long before
    delay = min(float(2**exponent) * base_ms, max_ms)
    return min(_jittered_ms(delay, jitter, rand), _round_half_up(max_ms))


def _seconds_to_ms(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be zero or more seconds (a finite number), got {value!r}")
    return float(value) * 1000


def apply_jitter(delay: float, factor: float = JITTER) -> float:
    """``delay`` (seconds) spread uniformly over ``delay × (1 ± factor)``, rounded to whole
    milliseconds and never below zero; ``factor <= 0`` or a zero delay returns it unchanged."""
    if factor <= 0 or delay == 0:
        return delay
    return _jittered_ms(_seconds_to_ms("delay", delay), factor, None) / 1000


def calculate_backoff_delay(
    fail_count: int,
    base_interval: float | None = None,
    max_delay: float | None = None,
    jitter: float = JITTER,
) -> float:
    """The retry delay, in seconds, a job gets after ``fail_count`` failures.

    ``min(2^fail_count × base_interval, max_delay)`` with ``jitter`` (±25 % by default; 0
    turns it off), rounded to whole milliseconds and capped at ``max_delay`` again.
    Defaults: 1 s base, 24 h cap (``None`` means the default, as ``undefined`` upstream).
    """
    base_ms = _seconds_to_ms("base_interval", DEFAULT_BASE_INTERVAL if base_interval is None else base_interval)
    max_ms = _seconds_to_ms("max_delay", DEFAULT_MAX_BACKOFF_DELAY if max_delay is None else max_delay)
    return backoff_delay_ms(fail_count, base_ms, max_ms, jitter=jitter) / 1000


def calculate_backoff(
    fail_count: int,
    base_interval: float | None = None,
    max_delay: float | None = None,
    jitter: float = JITTER,
) -> datetime:
    """When the next attempt runs: now (UTC) plus ``calculate_backoff_delay(...)``."""
    delay = calculate_backoff_delay(fail_count, base_interval, max_delay, jitter)
    return datetime.now(UTC) + timedelta(seconds=delay)

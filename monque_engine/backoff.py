"""Retry delay: exponential with ±25% jitter, as upstream computes it."""

from __future__ import annotations

import random

JITTER = 0.25


def backoff_delay_ms(fail_count: int, base_ms: float, max_ms: float, rand: random.Random | None = None) -> int:
    """Delay before the next attempt after ``fail_count`` failures.

    min(2^fail_count × base, max), then ±25% jitter, capped at max again and floored at 0,
    so a burst of failures does not retry in lockstep and no delay exceeds the cap.
    """
    exponent = min(fail_count, 1023)  # 2**1024 overflows a float; the cap applies long before
    delay = min(float(2**exponent) * base_ms, max_ms)
    jitter = (rand or random).uniform(-JITTER, JITTER) * delay
    return round(max(0.0, min(delay + jitter, max_ms)))

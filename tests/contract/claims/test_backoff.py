"""Retry backoff: min(2^n × base, max) with ±25% jitter, capped at max, never negative."""

from __future__ import annotations

import random

import pytest

from monque_engine.backoff import JITTER, backoff_delay_ms


class Fixed(random.Random):
    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * self.value


@pytest.mark.parametrize("fail_count", [0, 1, 2, 3, 5, 8])
def test_delay_within_jitter_window(fail_count):
    base, cap = 1000.0, 86_400_000.0
    nominal = min(2**fail_count * base, cap)
    rng = random.Random(fail_count)
    samples = [backoff_delay_ms(fail_count, base, cap, rng) for _ in range(2000)]
    assert all(round(0.75 * nominal) <= s <= round(1.25 * nominal) for s in samples)
    # the jitter really spreads: both halves of the window are used
    assert min(samples) < nominal * 0.85 and max(samples) > nominal * 1.15


def test_jitter_extremes_exactly():
    assert JITTER == 0.25
    assert backoff_delay_ms(3, 1000, 10**9, Fixed(0.0)) == 6000  # 8000 × 0.75
    assert backoff_delay_ms(3, 1000, 10**9, Fixed(1.0)) == 10000  # 8000 × 1.25
    assert backoff_delay_ms(3, 1000, 10**9, Fixed(0.5)) == 8000


def test_cap_applies_before_and_after_jitter():
    cap = 15_000
    # nominal capped at 15 s; +25% jitter must not exceed the cap
    assert backoff_delay_ms(10, 1000, cap, Fixed(1.0)) == cap
    assert backoff_delay_ms(10, 1000, cap, Fixed(0.0)) == 11_250
    rng = random.Random(7)
    assert all(11_250 <= backoff_delay_ms(10, 1000, cap, rng) <= cap for _ in range(1000))


def test_huge_fail_counts_do_not_overflow():
    for fail_count in (60, 1023, 1024, 5000, 10**6):
        delay = backoff_delay_ms(fail_count, 1000, 86_400_000)
        assert 64_800_000 <= delay <= 86_400_000


def test_never_negative_and_integer():
    for fail_count in range(12):
        delay = backoff_delay_ms(fail_count, 0.3, 5000)
        assert isinstance(delay, int) and delay >= 0
    assert backoff_delay_ms(4, 0, 1000) == 0


def test_grows_exponentially_until_the_cap():
    mid = [backoff_delay_ms(n, 100, 10**9, Fixed(0.5)) for n in range(6)]
    assert mid == [100, 200, 400, 800, 1600, 3200]

"""The Queues screen's done/m and failed/m: per minute over the time the window covers so far.

The rate summed the last five minutes, the current one included, and divided by five whole
minutes, so a queue doing a steady 1,000 a minute read 800 at the start of a minute and
rose to 1,000 by its end. These are the counters such a queue leaves, read at several
seconds of the current minute.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monque_engine import MinuteCount, QueueHealth
from monque_tui.console.session.fleet import recent_rate

MINUTE_MS = 60_000
T0 = 1_768_478_400_000  # a minute's start


def steady(now_ms: int, per_minute: int, failed: int = 0) -> QueueHealth:
    """Counters of a queue doing ``per_minute`` a minute for the last hour, up to ``now_ms``."""
    counts = []
    for minute in range(now_ms // MINUTE_MS - 60, now_ms // MINUTE_MS + 1):
        start = minute * MINUTE_MS
        share = min(1.0, (now_ms - start) / MINUTE_MS)  # the current minute only so far
        counts.append(
            MinuteCount(
                "report",
                datetime.fromtimestamp(start / 1000, UTC),
                round(per_minute * share),
                round(failed * share),
            )
        )
    return QueueHealth("report", 0, 0, 0, None, False, counts)


@pytest.mark.parametrize("second", [1, 5, 30, 59])
def test_a_steady_queue_reads_its_rate_at_any_second_of_the_minute(second: int) -> None:
    now = T0 + second * 1000
    done, failed = recent_rate(steady(now, 1_000, failed=60), now)
    assert done == pytest.approx(1_000, rel=0.01)
    assert failed == pytest.approx(60, rel=0.02)


def test_a_queue_that_stopped_reads_lower_as_its_minutes_leave_the_window() -> None:
    stopped = T0 - 150_000  # half way through a minute
    health = steady(stopped, 1_000)
    rates = [recent_rate(health, T0 + 10_000 + k * MINUTE_MS)[0] for k in range(3)]
    assert rates[0] > rates[1] > 0 and rates[2] == 0


def test_no_counters_reads_zero() -> None:
    assert recent_rate(QueueHealth("report", 0, 0, 0, None, False, []), T0) == (0.0, 0.0)

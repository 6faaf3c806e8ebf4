"""The console's notion of "now": injected, so snapshots and tests can freeze it."""

from __future__ import annotations

import time
from collections.abc import Callable

#: Returns the current instant as epoch milliseconds.
Clock = Callable[[], int]


def system_clock() -> int:
    return time.time_ns() // 1_000_000


def frozen_clock(at_ms: int) -> Clock:
    """A clock stuck at ``at_ms`` (snapshot tests, screenshots)."""

    def now() -> int:
        return at_ms

    return now

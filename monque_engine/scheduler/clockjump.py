"""Notice the wall clock jumping ahead of elapsed time, so stale recovery can wait it out.

Liveness is a heartbeat's age on the wall clock (ADR 0004). When the wall clock moves ahead
faster than time really passes (stepped forward by NTP or by hand, or the machine slept:
Linux's monotonic clock stops during suspend, the wall clock does not), every heartbeat
written before the jump looks old at once. A recovery round that runs before the owners'
next heartbeat (on a laptop that wakes up, both timers fire together) would hand live jobs
to another worker, or to the same process, and run them twice. After such a jump, recovery
waits until every live owner has had time to heartbeat on the new clock.

A jump smaller than one heartbeat interval cannot make a live job look stale while
``lock_timeout`` is at least two heartbeat intervals (the engine warns when it is not), so
that is the tolerance.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("monque_engine.lifecycle")


class WallClockJumps:
    def __init__(
        self,
        wall_ms: Callable[[], int],
        tolerance_ms: int,
        settle_seconds: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._wall_ms = wall_ms
        self._monotonic = monotonic
        self._tolerance_ms = tolerance_ms
        self._settle_seconds = settle_seconds
        self._last: tuple[int, float] | None = None
        self._settled_at: float | None = None

    def settling(self) -> bool:
        """Call once per recovery round: True while a jump seen now or lately is settling."""
        wall, mono = self._wall_ms(), self._monotonic()
        last, self._last = self._last, (wall, mono)
        if last is not None:
            ahead_ms = (wall - last[0]) - (mono - last[1]) * 1000
            if ahead_ms > self._tolerance_ms:
                self._settled_at = mono + self._settle_seconds
                log.warning(
                    "The wall clock moved %.1f s ahead of the time that passed (set forward, or the machine "
                    "slept): stale recovery waits %g s so that running jobs heartbeat on the new clock first",
                    ahead_ms / 1000,
                    self._settle_seconds,
                )
        if self._settled_at is None:
            return False
        if mono < self._settled_at:
            return True
        self._settled_at = None
        return False

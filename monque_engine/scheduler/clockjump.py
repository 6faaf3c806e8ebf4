"""Judge heartbeats by the clock they were written on, across a jump of the wall clock.

Liveness is a heartbeat's age on the wall clock (ADR 0004). When the wall clock moves ahead
faster than time really passes (stepped forward by NTP or by hand, or the machine slept:
Linux's monotonic clock stops during suspend, the wall clock does not), every heartbeat
written before the jump looks old at once, and a recovery round that runs before the
owners' next heartbeat would hand live jobs to another worker and run them twice.

So after such a jump, for ``lock_timeout`` of monotonic time, heartbeats are judged against
the wall clock *as it would read without the jump* (the reading before it, advanced by the
monotonic time since). A live owner beat within its heartbeat interval before the jump and
beats on the new clock within one interval after it, so it never looks stale; an owner that
was already dead is recovered on time, however often the clock jumps (ADR 0012). Once
``lock_timeout`` has passed every live owner has beaten on the new clock, and the wall clock
is used again. Differences under ``tolerance_ms`` (drift, a slow round) are not jumps.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("monque_engine.lifecycle")


class WallClockJumps:
    def __init__(
        self, tolerance_ms: int, settle_seconds: float, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._monotonic = monotonic
        self._tolerance_ms = tolerance_ms
        self._settle_seconds = settle_seconds
        self._last: tuple[int, float] | None = None
        self._offset_ms = 0  # how far the wall clock is ahead of the clock heartbeats were judged by
        self._settled_at: float | None = None

    def judging_now(self, wall_ms: int) -> int:
        """The wall-clock instant to judge heartbeat ages against now (once per recovery round)."""
        mono = self._monotonic()
        last, self._last = self._last, (wall_ms, mono)
        if last is not None:
            ahead_ms = (wall_ms - last[0]) - (mono - last[1]) * 1000
            if ahead_ms > self._tolerance_ms:
                self._offset_ms += int(ahead_ms)
                self._settled_at = mono + self._settle_seconds
                log.warning(
                    "The wall clock moved %.1f s ahead of the time that passed (set forward, or the machine "
                    "slept): for the next %g s stale recovery judges heartbeats by the clock they were "
                    "written on, so running jobs are not taken as dead",
                    ahead_ms / 1000,
                    self._settle_seconds,
                )
            elif ahead_ms < -self._tolerance_ms and self._offset_ms:
                self._offset_ms = max(0, self._offset_ms + int(ahead_ms))  # set back again: less to undo
        if self._settled_at is not None and mono >= self._settled_at:
            self._settled_at = None
            self._offset_ms = 0
        return wall_ms - self._offset_ms

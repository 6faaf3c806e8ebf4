"""A time budget for the store steps of ``stop()``.

Handlers get ``shutdown_timeout`` and then ``SHUTDOWN_GRACE``; what stop() does with the
store around them (closing the change stream, releasing the retention lease, waiting for
the last counter write, flushing the counters, removing the registry record) had no bound
of its own. On MongoDB each can wait for server selection (30 s by default) and a socket
(60 s): with the primary partitioned away a stop took about ``shutdown_timeout`` + 95 s
(issue 27 item 15), longer than a deploy tool or systemd waits before it kills the process.

Each step gets at most ``STOP_STEP_TIMEOUT`` and all of them together ``STOP_STORE_BUDGET``;
a step that runs out is cancelled, logged once with what it leaves behind, and stop()
goes on. Everything such a step leaves is repaired without this process: a registry
record expires (shown dead after two heartbeat intervals, deleted by TTL), a lease runs
out, a server cursor is reaped by the server after its idle timeout (10 min), and the
counters of the last tick are the only thing that can be lost (statistics, not jobs).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TypeVar

log = logging.getLogger("monque_engine")

T = TypeVar("T")

#: The longest one store step of stop() may take.
STOP_STEP_TIMEOUT = 5.0
#: The longest all store steps of one stop() may take together.
STOP_STORE_BUDGET = 15.0


class StopBudget:
    """``run`` each store step of one stop() through this."""

    def __init__(self, total: float | None = None, step: float | None = None) -> None:
        loop = asyncio.get_running_loop()
        self._time = loop.time
        self._ends = loop.time() + (STOP_STORE_BUDGET if total is None else total)
        self._step = STOP_STEP_TIMEOUT if step is None else step
        #: The steps that ran out of time, in order (for tests and diagnostics).
        self.abandoned: list[str] = []

    def remaining(self) -> float:
        return max(0.0, self._ends - self._time())

    def allowance(self) -> float:
        """How long the next step may take."""
        return min(self._step, self.remaining())

    async def run(self, step: str, work: Awaitable[T], leaves: str) -> tuple[bool, T | None]:
        """(finished, result): ``work`` within the allowance, else cancelled and logged
        (``leaves``: what the abandoned step leaves behind, for the log)."""
        allowance = self.allowance()
        deadline = asyncio.timeout(allowance)
        try:
            async with deadline:
                return True, await work
        except TimeoutError:
            if not deadline.expired():
                raise  # the step's own timeout, not ours: the caller's to report
            self.abandoned.append(step)
            log.warning(
                "stop(): %s did not finish within %.1f s (the store is unreachable or slow); gave up on it: %s",
                step,
                allowance,
                leaves,
            )
            return False, None

"""The body of ``bench.processes``' CPU-bound handler, shared by its monque and huey sides
(a module of its own, so neither side imports the other)."""

from __future__ import annotations

import time

#: CPU each handler run uses, in seconds.
BURN_SECONDS = 0.002


def burn(seconds: float = BURN_SECONDS) -> None:
    """Use ``seconds`` of this thread's CPU (its own clock: time spent waiting for the GIL does
    not count towards it)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass

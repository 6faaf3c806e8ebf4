"""Apps whose setup blocks the event loop for ever (a sync client without a timeout): the
worker's stop signals reach it through the loop, so a stop must still interrupt the setup."""

from __future__ import annotations

import sys
import time

from monque_engine import Job, Monque


async def _never(job: Job) -> None:  # pragma: no cover - never claimed
    pass


def setup(monque: Monque) -> None:
    monque.register("never", _never)
    print("blocking_setup_app: setting up", file=sys.stderr, flush=True)
    time.sleep(3600)


async def async_setup(monque: Monque) -> None:
    """An ``async def`` that calls a blocking client: the loop is blocked all the same."""
    monque.register("never", _never)
    print("blocking_setup_app: setting up", file=sys.stderr, flush=True)
    time.sleep(3600)

"""An app whose async ``setup`` never ends (it awaits a server that does not answer): a
stop while it runs must end the worker at once, as nothing is claimed before it returns."""

from __future__ import annotations

import asyncio
import sys

from monque_engine import Job, Monque


async def _never(job: Job) -> None:  # pragma: no cover - never claimed
    pass


async def setup(monque: Monque) -> None:
    monque.register("never", _never)
    print("hanging_setup_app: setting up", file=sys.stderr, flush=True)
    await asyncio.Event().wait()

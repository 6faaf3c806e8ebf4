"""Add jobs at a steady rate: ``python -m bench.tui_producer URL RATE`` (jobs per second, 4 names)."""

from __future__ import annotations

import asyncio
import sys
import time

from monque_engine import Monque

from .tui_soak_app import NAMES


async def main(url: str, rate: int) -> None:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    tick = 0.1
    per_tick = max(1, int(rate * tick))
    n = 0
    next_at = time.monotonic()
    try:
        while True:
            await monque.enqueue_many(
                [{"name": NAMES[(n + i) % len(NAMES)], "data": {"n": n + i}} for i in range(per_tick)]
            )
            n += per_tick
            next_at += tick
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    finally:
        await monque.close()


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    except KeyboardInterrupt:
        pass

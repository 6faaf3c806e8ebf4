"""Add jobs at a steady rate: ``python -m bench.tui_producer URL RATE [single]`` (jobs per second, 4 names).

Every 100 ms it adds a tick's share: in one ``enqueue_many``, or with ``single`` as a loop of
awaited ``enqueue`` calls, which past the first 32 of a tick go through the SQLite inbox
(ADR 0014), so a soak with it has the console's and the worker's watchers absorb them.
"""

from __future__ import annotations

import asyncio
import sys
import time

from monque_engine import Monque

from .tui_soak_app import NAMES


async def main(url: str, rate: int, single: bool = False) -> None:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    tick = 0.1
    per_tick = max(1, int(rate * tick))
    n = 0
    next_at = time.monotonic()
    try:
        while True:
            if single:
                for i in range(per_tick):
                    await monque.enqueue(NAMES[(n + i) % len(NAMES)], {"n": n + i})
            else:
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
        asyncio.run(main(sys.argv[1], int(sys.argv[2]), single=sys.argv[3:] == ["single"]))
    except KeyboardInterrupt:
        pass

"""A producer the test drives: ``python -m apps.burst_producer URL``.

For each line on stdin it makes a burst of ``BURST`` awaited ``enqueue`` calls in one loop
turn (past the store's inbox streak, so most are appends to the inbox, as a script's loop of
enqueues is) and prints one JSON line: how many succeeded, and the error that stopped the
burst (its class and message), if any. Ends at end of input.
"""

from __future__ import annotations

import asyncio
import json
import sys

from monque_engine import Monque, MonqueError

BURST = 40


async def main(url: str) -> None:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        while await asyncio.to_thread(sys.stdin.readline):
            done, error = 0, None
            try:
                for n in range(BURST):
                    await monque.enqueue("produced", {"n": n})
                    done += 1
            except MonqueError as failure:
                error = {"type": type(failure).__name__, "message": str(failure)}
            print(json.dumps({"ok": done, "error": error}), flush=True)
    finally:
        await monque.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))

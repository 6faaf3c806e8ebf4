"""A writer that never pauses: ``python -m tests.procs.wal_writer --db PATH --batch N --count M``

Writes ``--count`` jobs, ``--batch`` per call (1: awaited single enqueues), after a line on
stdin (so two writers start together), with the checkpoint threshold lowered to
``--frames``. Records the largest WAL file it saw after each call and ends with
``done`` carrying it (``max_wal`` bytes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from monque_engine import Monque
from monque_engine.store.sqlite import checkpointer

from ._common import emit, sqlite_url


async def main(args: argparse.Namespace) -> None:
    checkpointer.CHECKPOINT_FRAMES = args.frames
    m = Monque(sqlite_url(args.db))
    await m.initialize()
    emit("ready")
    await asyncio.to_thread(sys.stdin.readline)
    wal = args.db + "-wal"
    largest = written = 0
    while written < args.count:
        if args.batch == 1:
            await m.enqueue("single", {"i": written})
        else:
            await m.enqueue_many([{"name": "bulk", "data": {"i": written + i}} for i in range(args.batch)])
        written += args.batch
        try:
            largest = max(largest, os.path.getsize(wal))
        except FileNotFoundError:
            pass
    await m.close()
    emit("done", written=written, max_wal=largest)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", required=True)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--frames", type=int, default=checkpointer.CHECKPOINT_FRAMES)
    asyncio.run(main(parser.parse_args()))

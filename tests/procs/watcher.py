"""A watcher process: ``python -m tests.procs.watcher --db PATH [--resume-after TOKEN]``

Opens ``monque.open_watch()`` (so a bad token fails here, before ``ready``), prints
``ready`` with the feed open, then one ``change`` line per event: operation, job id,
status written, name and resume token. SIGTERM / SIGINT end it with exit status 0.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from monque_engine import Monque

from ._common import emit, sqlite_url


async def run(db: str, resume_after: int | None) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    monque = Monque(sqlite_url(db), recover_stale_jobs=False)
    await monque.initialize()
    try:
        try:
            stream = await monque.open_watch(resume_after)
        except Exception as error:  # noqa: BLE001 - reported to the test
            emit("open_error", error_type=type(error).__name__, message=str(error))
            return 2
        emit("ready", resume_after=resume_after)

        async def pump() -> None:
            async for change in stream:
                emit(
                    "change",
                    op=change.operation,
                    job_id=change.job_id,
                    status=change.status.value if change.status else None,
                    name=change.name,
                    token=change.token,
                )

        task = asyncio.ensure_future(pump())
        stopper = asyncio.ensure_future(stop.wait())
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if task.done() and task.exception() is not None:
            emit("stream_error", error_type=type(task.exception()).__name__, message=str(task.exception()))
            return 3
        task.cancel()
        stopper.cancel()
        await asyncio.gather(task, stopper, return_exceptions=True)
        emit("exit")
        return 0
    finally:
        await monque.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--db", required=True)
    p.add_argument("--resume-after", type=int, default=None)
    args = p.parse_args()
    sys.exit(asyncio.run(run(args.db, args.resume_after)))


if __name__ == "__main__":
    main()

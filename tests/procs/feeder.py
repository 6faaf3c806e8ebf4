"""A feeder that keeps enqueueing through faults: ``python -m tests.procs.feeder --db PATH``

Enqueues one job at a time (``--pause`` seconds apart) until a line arrives on stdin. An
enqueue that returned prints ``acked`` with the job id: that job is *acknowledged* and
must never be lost. An enqueue that raised prints ``enqueue_error`` (error type, one-line
message) and the feeder carries on. ``init_error`` and exit 3 when the store cannot be
opened at all. Ends with ``done`` (acked and error counts) and exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from monque_engine import Monque

from ._common import emit, sqlite_url


async def run(args: argparse.Namespace) -> int:
    url = sqlite_url(args.db) + (f"?{args.url_query}" if args.url_query else "")
    monque = Monque(url, recover_stale_jobs=False)
    try:
        await monque.initialize()
    except Exception as error:  # noqa: BLE001 - reported to the test
        emit("init_error", error_type=type(error).__name__, message=str(error))
        return 3
    stop = asyncio.Event()

    async def watch_stdin() -> None:
        await asyncio.to_thread(sys.stdin.readline)
        stop.set()

    stdin_task = asyncio.ensure_future(watch_stdin())
    emit("ready")
    acked = errors = n = 0
    pad = "x" * args.pad
    try:
        while not stop.is_set():
            n += 1
            try:
                data = {"n": n, "pad": pad, "fail": bool(args.fail_every) and n % args.fail_every == 0}
                job = await monque.enqueue(args.name, data)
            except Exception as error:  # noqa: BLE001 - the point is to see these
                errors += 1
                emit("enqueue_error", error_type=type(error).__name__, message=str(error))
                await asyncio.sleep(args.error_pause)
            else:
                acked += 1
                emit("acked", job_id=job.id)
            if args.pause > 0:
                try:
                    await asyncio.wait_for(stop.wait(), args.pause)
                except TimeoutError:
                    pass
        emit("done", acked=acked, errors=errors)
        return 0
    finally:
        stdin_task.cancel()
        await monque.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True)
    p.add_argument("--name", default="task")
    p.add_argument("--pause", type=float, default=0.005)
    p.add_argument("--error-pause", type=float, default=0.05)
    p.add_argument("--pad", type=int, default=0, help="characters of padding in each payload")
    p.add_argument("--url-query", default="")
    p.add_argument("--fail-every", type=int, default=0, help="mark every Nth job with fail=true")
    sys.exit(asyncio.run(run(p.parse_args())))


if __name__ == "__main__":
    main()

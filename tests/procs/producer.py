"""A producer process: ``python -m tests.procs.producer --db PATH --name task --count N``

Enqueues ``--count`` jobs one call at a time (or ``--batch`` at a time with enqueue_many),
printing ``enqueued`` with each job id. With ``--keys k1,k2,...`` it enqueues each key (in a
per-process shuffled order, ``--rounds`` times) as a unique key instead (with ``--cron``, as
``schedule()`` of that cron expression). With ``--barrier``
it prints ``ready`` and waits for a line on stdin before starting, so several producers can
be released at the same instant. Ends with ``done`` and exit status 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys

from monque_engine import Monque

from ._common import emit, sqlite_url


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--db", required=True)
    p.add_argument("--name", default="task")
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--keys", default="", help="comma-separated unique keys to enqueue")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--barrier", action="store_true")
    p.add_argument("--tag", default="", help="stored in each job's data")
    p.add_argument("--quiet", action="store_true", help="print only a summary")
    p.add_argument("--cron", default="", help="with --keys: schedule(cron, ...) each key instead of enqueue")
    return p.parse_args()


async def run(args: argparse.Namespace) -> int:
    monque = Monque(sqlite_url(args.db), recover_stale_jobs=False)
    await monque.initialize()
    try:
        if args.barrier:
            emit("ready")
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                emit("fatal", message="stdin closed before the barrier opened")
                return 2
        ids: list[str] = []
        if args.keys:
            keys = args.keys.split(",")
            rng = random.Random(os.getpid())
            for _ in range(args.rounds):
                order = keys[:]
                rng.shuffle(order)
                for key in order:
                    data = {"key": key, "by": os.getpid()}
                    if args.cron:
                        job = await monque.schedule(args.cron, args.name, data, unique_key=key)
                    else:
                        job = await monque.enqueue(args.name, data, unique_key=key)
                    ids.append(job.id)
                    emit("enqueued", job_id=job.id, key=key, status=job.status.value)
        else:
            sent = 0
            while sent < args.count:
                size = min(args.batch, args.count - sent)
                if size == 1:
                    jobs = [await monque.enqueue(args.name, {"n": sent, "tag": args.tag})]
                else:
                    jobs = await monque.enqueue_many(
                        [{"name": args.name, "data": {"n": sent + i, "tag": args.tag}} for i in range(size)]
                    )
                sent += size
                for job in jobs:
                    ids.append(job.id)
                    if not args.quiet:
                        emit("enqueued", job_id=job.id)
        emit("done", count=len(ids), ids=ids if args.quiet else None)
        return 0
    finally:
        await monque.close()


def main() -> None:
    sys.exit(asyncio.run(run(parse_args())))


if __name__ == "__main__":
    main()

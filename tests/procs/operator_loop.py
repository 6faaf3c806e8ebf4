"""An operator process: ``python -m tests.procs.operator_loop --db PATH --seed N [--ops N]``

Does what an operator at the console does, as fast as it can, while workers drain: bulk
cancel / retry / delete through ``JobSelector`` (including selectors whose statuses the
guards must ignore) and single cancel / retry / reschedule / delete on ids picked from a
listing. Prints one ``op`` line per call (what was asked, what came back) and one ``event``
line per engine event it receives, so the test can check every result and event against
the change feed. Stops after ``--ops`` calls or at a line on stdin; prints ``done``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from monque_engine import JobSelector, JobStateError, Monque

from ._common import emit, sqlite_url

CANCEL_STATUSES: list[Any] = [
    None,
    "pending",
    ["pending", "processing"],
    "processing",
    "completed",
    ["completed", "failed"],
]
RETRY_STATUSES: list[Any] = [None, "failed", "cancelled", ["failed", "completed"], "processing", "pending"]
DELETE_STATUSES: list[Any] = [
    "cancelled",
    "failed",
    "completed",
    ["cancelled", "failed"],
    "pending",
    "processing",
    None,
]
LIST_STATUSES: list[Any] = [None, "pending", "processing", "failed", "cancelled", "completed"]


async def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    monque = Monque(sqlite_url(args.db), recover_stale_jobs=False)
    await monque.initialize()
    names = args.names.split(",")

    def on(event: str, describe: Any) -> None:
        monque.on(event, lambda payload: emit("event", name=event, **describe(payload)))

    on("job:cancelled", lambda e: {"job_id": e.job.id, "status": e.job.status.value})
    on(
        "job:retried",
        lambda e: {"job_id": e.job.id, "status": e.job.status.value, "previous_status": e.previous_status},
    )
    on("job:deleted", lambda e: {"job_id": e.job_id})
    for bulk in ("jobs:cancelled", "jobs:retried", "jobs:deleted"):
        on(bulk, lambda e: {"count": e.count})

    def selector(status: Any, name: str | None, *, narrow: bool) -> JobSelector:
        """Mostly a narrow window of recent jobs (as an operator selects what just went wrong);
        sometimes older ones; rarely, with ``narrow`` False, everything of the status."""
        now = datetime.now(UTC)
        roll = rng.random()
        if narrow or roll < 0.6:
            return JobSelector(name=name, status=status, newer_than=now - timedelta(seconds=rng.uniform(0.05, 0.5)))
        if roll < 0.9:
            return JobSelector(name=name, status=status, older_than=now - timedelta(seconds=rng.uniform(0.5, 3)))
        return JobSelector(name=name, status=status)

    stop = asyncio.Event()

    async def watch_stdin() -> None:
        await asyncio.to_thread(sys.stdin.readline)
        stop.set()

    stdin_task = asyncio.ensure_future(watch_stdin()) if args.until_stdin else None
    emit("ready")
    done = 0
    try:
        while not stop.is_set() and (args.ops <= 0 or done < args.ops):
            done += 1
            roll = rng.random()
            name = rng.choice([None, *names])
            if roll < 0.12:
                status = rng.choice(CANCEL_STATUSES)
                result = await monque.cancel_jobs(selector(status, name, narrow=False))
                emit("op", op="cancel_jobs", name=name, status=status, count=result.count)
            elif roll < 0.24:
                status = rng.choice(RETRY_STATUSES)
                result = await monque.retry_jobs(selector(status, name, narrow=False))
                emit("op", op="retry_jobs", name=name, status=status, count=result.count)
            elif roll < 0.30:
                status = rng.choice(DELETE_STATUSES)
                # Deleting live work is done on narrow windows only; finished jobs on any.
                live = status is None or status in ("pending", "processing")
                result = await monque.delete_jobs(selector(status, name, narrow=live))
                emit("op", op="delete_jobs", name=name, status=status, count=result.count)
            else:
                listed = await monque.get_jobs(
                    name=name, status=rng.choice(LIST_STATUSES), limit=20, skip=rng.randrange(0, 40)
                )
                if not listed:
                    continue
                job = rng.choice(listed)
                verb = rng.choice(("cancel", "retry", "reschedule", "delete", "cancel", "retry"))
                try:
                    if verb == "cancel":
                        after = await monque.cancel_job(job.id)
                        outcome: Any = after.status.value if after else None
                    elif verb == "retry":
                        after = await monque.retry_job(job.id)
                        outcome = after.status.value if after else None
                    elif verb == "reschedule":
                        after = await monque.reschedule_job(job.id, timedelta(milliseconds=rng.randrange(-500, 800)))
                        outcome = after.status.value if after else None
                    else:
                        outcome = await monque.delete_job(job.id)
                    emit("op", op=verb, job_id=job.id, seen_status=job.status.value, result=outcome)
                except JobStateError as error:
                    emit(
                        "op",
                        op=verb,
                        job_id=job.id,
                        seen_status=job.status.value,
                        result="refused",
                        current_status=error.current_status,
                        attempted=error.attempted_action,
                    )
            if args.pause > 0:
                await asyncio.sleep(rng.random() * args.pause)
        emit("done", ops=done)
        return 0
    finally:
        if stdin_task is not None:
            stdin_task.cancel()
        await monque.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ops", type=int, default=0, help="stop after this many calls (0: until stdin)")
    p.add_argument("--until-stdin", action="store_true", help="also stop at a line on stdin")
    p.add_argument("--names", default="task")
    p.add_argument("--pause", type=float, default=0.004, help="up to this many seconds between calls")
    args = p.parse_args()
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()

"""An actor process that changes jobs: ``python -m tests.procs.actor --db PATH OP [OP ...]``

Operations, applied in order:
  ``enqueue:NAME=LABEL``  enqueue a job named NAME and remember its id as LABEL
  ``cancel:REF``          cancel a job (REF is a label from this run or a job id)
  ``delete:REF``          delete a job
  ``retry:REF``           retry a failed / cancelled job
Each operation prints one ``op`` line (op, job_id, result); then ``done`` and exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from monque_engine import Monque

from ._common import emit, sqlite_url


async def run(db: str, ops: list[str]) -> int:
    monque = Monque(sqlite_url(db), recover_stale_jobs=False)
    await monque.initialize()
    labels: dict[str, str] = {}
    try:
        for spec in ops:
            verb, _, arg = spec.partition(":")
            result: Any
            if verb == "enqueue":
                name, _, label = arg.partition("=")
                job = await monque.enqueue(name, {"label": label})
                labels[label or job.id] = job.id
                emit("op", op=verb, job_id=job.id, label=label, result=job.status.value)
                continue
            job_id = labels.get(arg, arg)
            if verb == "cancel":
                job = await monque.cancel_job(job_id)
                result = job.status.value if job else None
            elif verb == "delete":
                result = await monque.delete_job(job_id)
            elif verb == "retry":
                job = await monque.retry_job(job_id)
                result = job.status.value if job else None
            else:
                emit("fatal", message=f"unknown operation {spec!r}")
                return 2
            emit("op", op=verb, job_id=job_id, label=arg if arg in labels else None, result=result)
        emit("done")
        return 0
    finally:
        await monque.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True)
    p.add_argument("ops", nargs="+")
    args = p.parse_args()
    sys.exit(asyncio.run(run(args.db, args.ops)))


if __name__ == "__main__":
    main()

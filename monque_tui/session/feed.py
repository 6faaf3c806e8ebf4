"""Coalesce the change feed for the screen, and count throughput from it.

Changes arrive one by one from any process (through the engine's ``ResilientWatch``); the
console applies them a few times a second. Between flushes only the latest state of each
job is kept, so a burst of thousands of changes per second costs one dict write each and
one window diff per flush. If too many distinct jobs change between flushes the batch is
dropped and the screen reloads its window instead (cheaper than diffing, and never behind).
Memory is bounded: at most ``MAX_PENDING`` jobs per batch and ``HISTORY_SECONDS`` buckets.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from monque_engine import ChangeEvent, Job, JobStatus

from ..clock import Clock

#: Distinct changed jobs kept between flushes before switching to a reload.
MAX_PENDING = 2000
#: Seconds of per-second throughput kept (the line shows the last ``GRAPH_SECONDS``).
HISTORY_SECONDS = 60
#: Jobs remembered as claimed, to tell a worker's outcome from an operator's action.
MAX_CLAIMED = 20_000


@dataclass(slots=True)
class ChangeBatch:
    jobs: dict[str, Job | None] = field(default_factory=dict)
    #: Too much changed (or history was lost): reload instead of diffing.
    reload: bool = False
    events: int = 0

    def __bool__(self) -> bool:
        return bool(self.jobs) or self.reload


class Throughput:
    """Per second: jobs that completed, and attempts that failed (final or to be retried).

    Only transitions a worker makes count: a completion is a change that leaves a job
    ``completed``; a failed attempt is one that leaves it ``failed``, or back in ``pending``
    with a higher fail count (it will be retried). Deletes, cancels and retries by an operator
    are not throughput (deleting 33,884 jobs once drew a 6,776/s completion spike).
    """

    def __init__(self, clock: Clock, seconds: int = HISTORY_SECONDS) -> None:
        self._clock = clock
        self._seconds = seconds
        self._buckets: deque[tuple[int, list[int]]] = deque(maxlen=seconds)
        #: The next run of jobs last seen being claimed (bounded). Only a worker moves a claimed
        #: job back to pending with a later next run: a failed attempt that will be retried (or a
        #: recurring job's completion, told apart by its reset fail count).
        self._claimed: dict[str, int | None] = {}

    def record(self, change: ChangeEvent) -> None:
        if change.operation == "delete":
            self._claimed.pop(change.job_id, None)
            return
        status = change.status if change.status is not None else (change.job.status if change.job else None)
        if status is JobStatus.PROCESSING:
            claimed = self._claimed
            claimed[change.job_id] = change.next_run_at_ms
            if len(claimed) > MAX_CLAIMED:
                del claimed[next(iter(claimed))]
            return
        before = self._claimed.pop(change.job_id, "unseen")
        if status is JobStatus.COMPLETED:
            slot = 0  # only a worker completes a job
        elif status is JobStatus.FAILED:
            slot = 1  # only a worker fails a job (an operator cancels)
        elif (
            status is JobStatus.PENDING
            and isinstance(before, int)
            and change.next_run_at_ms is not None
            and change.next_run_at_ms > before
        ):
            job = change.job
            slot = 1 if job is None or job.fail_count > 0 else 0
        else:
            return  # an operator's cancel, retry or reschedule, a stale recovery, a new job
        second = self._clock() // 1000
        if not self._buckets or self._buckets[-1][0] != second:
            self._buckets.append((second, [0, 0]))
        self._buckets[-1][1][slot] += 1

    def series(self, width: int) -> tuple[list[float], list[float]]:
        """Per-second completed and failed-attempt counts for the last ``width`` whole seconds."""
        now = self._clock() // 1000
        by_second = dict(self._buckets)
        seconds = range(now - width, now)
        completed = [float(by_second.get(s, (0, 0))[0]) for s in seconds]
        failed = [float(by_second.get(s, (0, 0))[1]) for s in seconds]
        return completed, failed

    @property
    def bucket_count(self) -> int:
        return len(self._buckets)


class ChangeBuffer:
    """What the feed delivered since the last flush; bounded."""

    def __init__(self, throughput: Throughput) -> None:
        self.throughput = throughput
        self._batch = ChangeBatch()

    def add(self, change: ChangeEvent) -> None:
        batch = self._batch
        batch.events += 1
        self.throughput.record(change)
        if batch.reload:
            return
        batch.jobs[change.job_id] = change.job if change.operation != "delete" else None
        if len(batch.jobs) > MAX_PENDING:
            batch.jobs.clear()
            batch.reload = True

    def must_reload(self) -> None:
        self._batch.jobs.clear()
        self._batch.reload = True

    def take(self) -> ChangeBatch:
        batch, self._batch = self._batch, ChangeBatch()
        return batch

    @property
    def pending(self) -> int:
        return len(self._batch.jobs)

"""Coalesce the change feed for the screen, and count throughput from it.

Changes arrive a pull at a time from any process, as plain rows (the engine's
``Monque.resilient_watch_rows``, ``ChangeRows``); the console applies them a few times a second.
Beside a drain of 5,000 jobs/s that is ~15,000 changes a second: one ``ChangeEvent``, one
generator step and one callback each were over half of the UI thread's CPU (issue 40), so a
batch is taken in one call, its rows as the store read them, and each loop here is one pass. Between flushes only the latest change of each
job is kept, so a burst of thousands of changes per second costs one dict write each and
one window diff per flush. The feed carries no documents: at a flush the session reads the
jobs it needs (those the view can show, shown or marked) in one ``get_many``. A busy queue
changes each job about three times within a flush (insert, claim, completion), and reading
and decoding the job with every change was most of the console's CPU on such a queue.
If too many distinct jobs change between flushes the batch is dropped and the screen
reloads its window instead (cheaper than diffing, and never behind). Memory is bounded: at
most ``MAX_PENDING`` jobs per batch, ``MAX_UNDECIDED`` outcomes waiting for their job, and
``HISTORY_SECONDS`` buckets.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from monque_engine import ChangeEvent, Job, JobStatus
from monque_engine.change_rows import ChangeRow, ChangeRows, event_row

from ..clock import Clock

#: The rows carry statuses as their values (``ChangeRows``).
_PENDING, _PROCESSING, _COMPLETED, _FAILED = (
    JobStatus.PENDING.value,
    JobStatus.PROCESSING.value,
    JobStatus.COMPLETED.value,
    JobStatus.FAILED.value,
)
_DELETE = "delete"
_job_id = operator.itemgetter(2)  # ChangeRows' ROW_JOB_ID
#: Distinct changed jobs kept between flushes before switching to a reload.
MAX_PENDING = 2000
#: Seconds of per-second throughput kept (the line shows the last ``GRAPH_SECONDS``).
HISTORY_SECONDS = 60
#: Jobs remembered as claimed, to tell a worker's outcome from an operator's action.
MAX_CLAIMED = 20_000
#: Outcomes waiting for their job's fail count (read at the next flush); beyond this (a
#: paused console on a retrying queue) the oldest count as failed attempts.
MAX_UNDECIDED = 2_000


@dataclass(slots=True)
class ChangeBatch:
    """The changes gathered between two flushes of the feed into the window."""

    #: The latest change of each changed job, as its row (``ChangeRows``; op "delete": deleted);
    #: its job is read at the flush.
    changes: dict[str, ChangeRow] = field(default_factory=dict)
    #: Too much changed (or history was lost): reload instead of diffing.
    reload: bool = False
    events: int = 0

    def __bool__(self) -> bool:
        return bool(self.changes) or self.reload


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
        #: (second, job id) of jobs back in pending with a later run after a claim, while the
        #: job is not known yet: a failed attempt to retry, or a recurring job's completion.
        self._undecided: deque[tuple[int, str]] = deque()

    def record(self, change: ChangeEvent) -> None:
        """One change (``record_rows`` takes the feed's batches)."""
        self.record_rows((event_row(change),))

    def record_rows(self, rows: Iterable[ChangeRow]) -> None:
        # Called for every change the feed delivers (~15,000 a second beside a drain of 5,000
        # jobs/s), a pull at a time: one pass, the common outcomes first, counted per batch.
        claimed = self._claimed
        completed = failed = 0
        second: int | None = None
        for _, op, job_id, _, status, next_run in rows:
            if op == _DELETE:
                claimed.pop(job_id, None)
                continue
            if status == _PROCESSING:
                claimed[job_id] = next_run
                continue
            before = claimed.pop(job_id, None)
            if status == _COMPLETED:
                completed += 1  # only a worker completes a job
            elif status == _FAILED:
                failed += 1  # only a worker fails a job (an operator cancels)
            elif status == _PENDING and before is not None and next_run is not None and next_run > before:
                # A failed attempt to retry, or a recurring job's completion: its fail count
                # tells (a completion resets it), decided when the job is read (``settle``).
                if second is None:
                    second = self._clock() // 1000
                if len(self._undecided) >= MAX_UNDECIDED:
                    self._count(self._undecided.popleft()[0], 1)
                self._undecided.append((second, job_id))
            # else: an operator's cancel, retry or reschedule, a stale recovery, a new job
        while len(claimed) > MAX_CLAIMED:
            del claimed[next(iter(claimed))]
        if completed or failed:
            now = self._clock() // 1000 if second is None else second
            if completed:
                self._count(now, 0, completed)
            if failed:
                self._count(now, 1, failed)

    @property
    def undecided(self) -> list[str]:
        """Jobs whose last outcome waits for the job (``settle``)."""
        return [job_id for _, job_id in self._undecided]

    def settle(self, jobs: Mapping[str, Job]) -> None:
        """Count the waiting outcomes, now their jobs are read: a fail count above zero is a
        failed attempt to retry, zero a recurring job's completion; a job gone meanwhile
        counts as a failed attempt (the likelier of the two on a busy queue)."""
        undecided, self._undecided = self._undecided, deque()
        for second, job_id in undecided:
            job = jobs.get(job_id)
            self._count(second, 0 if job is not None and job.fail_count == 0 else 1)

    def _count(self, second: int, slot: int, n: int = 1) -> None:
        buckets = self._buckets
        if buckets:
            last_second, counts = buckets[-1]
            if last_second == second:  # the usual case: this second's bucket
                counts[slot] += n
                return
        if not buckets or buckets[-1][0] < second:
            buckets.append((second, [0, 0]))
        for bucket_second, counts in reversed(buckets):
            # Its own second; a settled outcome whose second had no other one goes to the
            # nearest earlier second shown (one that left the history is dropped).
            if bucket_second <= second:
                counts[slot] += n
                return

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
        """One change (``add_rows`` takes the feed's batches)."""
        self.add_rows(ChangeRows((event_row(change),), change.token))

    def add_rows(self, rows: ChangeRows) -> None:
        """A pull's changes: the meter counts them, and the latest change of each job is kept
        (the dict's update is one pass in C; a later row of a job replaces an earlier one)."""
        batch = self._batch
        batch.events += len(rows.rows)
        self.throughput.record_rows(rows.rows)
        if batch.reload:
            return
        changes = batch.changes
        changes.update(zip(map(_job_id, rows.rows), rows.rows, strict=True))
        if len(changes) > MAX_PENDING:
            changes.clear()
            batch.reload = True

    def must_reload(self) -> None:
        self._batch.changes.clear()
        self._batch.reload = True

    def take(self) -> ChangeBatch:
        batch, self._batch = self._batch, ChangeBatch()
        return batch

    @property
    def pending(self) -> int:
        """Distinct jobs changed since the last flush."""
        return len(self._batch.changes)

    @property
    def events(self) -> int:
        """Changes delivered since the last flush (several per job on a busy queue)."""
        return self._batch.events

"""Tail the store's change feed and coalesce it for the screen.

Events from any process arrive here one by one; the console applies them a few times a
second. Between flushes only the latest state of each job is kept, so a burst of
thousands of events per second costs one dict write each and one window diff per flush.
If too many distinct jobs change between flushes the batch is dropped and the screen
reloads its window instead (cheaper than diffing, and never behind).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from monque_engine import ChangeFeedHistoryLostError, Job, JobStatus, Monque

from .clock import Clock

#: Distinct changed jobs kept between flushes before switching to a reload.
MAX_PENDING = 5000
RECONNECT_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)
#: After this many failed reconnects in a row the console polls instead (and keeps trying).
FALLBACK_AFTER = 3
HISTORY_SECONDS = 120

FeedState = str  # "connecting" | "live" | "reconnecting" | "polling" | "off"


@dataclass(slots=True)
class ChangeBatch:
    jobs: dict[str, Job | None] = field(default_factory=dict)
    #: Too much changed (or history was lost): reload instead of diffing.
    reload: bool = False
    events: int = 0

    def __bool__(self) -> bool:
        return bool(self.jobs) or self.reload


class Throughput:
    """Completed and failed transitions per second over the last few minutes."""

    def __init__(self, clock: Clock, seconds: int = HISTORY_SECONDS) -> None:
        self._clock = clock
        self._seconds = seconds
        self._buckets: deque[tuple[int, list[int]]] = deque()

    def record(self, status: JobStatus | None) -> None:
        if status is not JobStatus.COMPLETED and status is not JobStatus.FAILED:
            return
        second = self._clock() // 1000
        if not self._buckets or self._buckets[-1][0] != second:
            self._buckets.append((second, [0, 0]))
            while self._buckets and self._buckets[0][0] <= second - self._seconds:
                self._buckets.popleft()
        self._buckets[-1][1][0 if status is JobStatus.COMPLETED else 1] += 1

    def series(self, width: int = 60) -> tuple[list[float], list[float]]:
        """Per-second completed and failed counts for the last ``width`` whole seconds."""
        now = self._clock() // 1000
        by_second = dict(self._buckets)
        seconds = range(now - width, now)
        completed = [float(by_second.get(s, (0, 0))[0]) for s in seconds]
        failed = [float(by_second.get(s, (0, 0))[1]) for s in seconds]
        return completed, failed


class LiveFeed:
    def __init__(self, monque: Monque, clock: Clock, on_state: Callable[[FeedState], None] | None = None) -> None:
        self._monque = monque
        self._on_state = on_state
        self.throughput = Throughput(clock)
        self.state: FeedState = "connecting"
        self.error: str | None = None
        self._batch = ChangeBatch()
        self._token: object = None

    def _set_state(self, state: FeedState, error: str | None = None) -> None:
        changed = state != self.state or error != self.error
        self.state, self.error = state, error
        if changed and self._on_state is not None:
            self._on_state(state)

    def take(self) -> ChangeBatch:
        batch, self._batch = self._batch, ChangeBatch()
        return batch

    def _record(self, job_id: str, job: Job | None, status: JobStatus | None) -> None:
        batch = self._batch
        batch.events += 1
        self.throughput.record(status)
        if batch.reload:
            return
        batch.jobs[job_id] = job
        if len(batch.jobs) > MAX_PENDING:
            batch.jobs.clear()
            batch.reload = True

    async def run(self) -> None:
        """Follow the feed until cancelled, reconnecting (and reporting it) when it breaks."""
        failures = 0
        while True:
            try:
                stream = await self._monque.open_watch(resume_after=self._token, full_document=True)
                self._set_state("live")
                failures = 0
                async for change in stream:
                    self._token = change.token
                    self._record(change.job_id, change.job if change.operation != "delete" else None, change.status)
                # The stream ends only when the store closes.
                self._set_state("off", "the store was closed")
                return
            except asyncio.CancelledError:
                raise
            except ChangeFeedHistoryLostError as error:
                self._token = None
                self._batch.reload = True
                self._set_state("reconnecting", str(error))
            except Exception as error:  # noqa: BLE001 - reported on screen, then retried
                failures += 1
                state = "polling" if failures >= FALLBACK_AFTER else "reconnecting"
                self._set_state(state, f"{type(error).__name__}: {error}")
                self._batch.reload = True
                await asyncio.sleep(RECONNECT_DELAYS[min(failures, len(RECONNECT_DELAYS)) - 1])

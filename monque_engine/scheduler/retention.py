"""Retention at fleet scale: one purger at a time, in bounded batches with a pause between.

Twenty processes each running the same unbounded delete under one long deadline meant
write conflicts, an oplog burst and replica lag on MongoDB (issue 27). Now each round:

* takes the store's ``retention`` lease (``ports.Retention.acquire_lease``); a process that does
  not get it skips the round. The holder keeps the lease between rounds (it renews it each
  round, for ``2 × interval + LEASE_MARGIN_S``), so one process does the purging while it
  lives; when it stops it gives the lease up, and when it dies the lease expires and the
  next process to tick takes over;
* deletes at most ``batch_size`` jobs per write (``ports.Retention.purge_finished_batch``), and
  sleeps ``pause`` seconds between writes, renewing the lease each time; a lease lost
  meanwhile (it expired during a stall and another process took it) ends the round.

The cutoff is fixed when the round starts, so a round ends even while jobs keep finishing.
A store that cannot share a lease between processes grants it always (the Retention port's
default), and one without a batched delete deletes everything in one write (also the default).
``Monque.purge_expired_jobs()`` (an explicit call) purges in the same batches but does
not wait for the lease: an operator asked for it now.
"""

from __future__ import annotations

import asyncio
import logging

from ..job import JobStatus
from ..options import JobRetention
from ..store import ports
from ..timeutil import now_ms

log = logging.getLogger("monque_engine.retention")

LEASE = "retention"
#: Jobs deleted per write: small enough for one oplog burst and one short write on MongoDB
#: (each deleted document is one oplog entry and one change event on unfiltered streams).
PURGE_BATCH = 1000
#: Seconds between two batch writes, so replicas and other writers keep up.
PURGE_PAUSE = 0.2
#: Added to the lease's lifetime beyond two intervals (seconds).
LEASE_MARGIN_S = 60.0


class Retention:
    def __init__(
        self,
        store: ports.Retention,
        retention: JobRetention,
        holder: str,
        *,
        batch_size: int = PURGE_BATCH,
        pause: float = PURGE_PAUSE,
    ) -> None:
        self._store = store
        self._retention = retention
        self._holder = holder
        self.batch_size = batch_size
        self.pause = pause
        self._holding = False

    @property
    def lease_ttl_ms(self) -> int:
        return int((2 * self._retention.interval + LEASE_MARGIN_S) * 1000)

    async def _lease(self) -> bool:
        self._holding = await self._store.acquire_lease(LEASE, self._holder, now_ms(), self.lease_ttl_ms)
        return self._holding

    async def round(self) -> int:
        """One scheduled round: purge if this process holds (or gets) the lease."""
        if not await self._lease():
            return 0
        return await self._purge(leased=True)

    async def now(self) -> int:
        """An explicit purge (``Monque.purge_expired_jobs``): batched, without the lease."""
        return await self._purge(leased=False)

    async def _purge(self, leased: bool) -> int:
        now = now_ms()
        removed = 0
        for status, age in (
            (JobStatus.COMPLETED, self._retention.completed),
            (JobStatus.FAILED, self._retention.failed),
        ):
            if age is None:
                continue
            cutoff = now - int(age * 1000)
            while True:
                deleted = await self._store.purge_finished_batch(status, cutoff, self.batch_size)
                removed += deleted
                if deleted < self.batch_size:
                    break
                await asyncio.sleep(self.pause)
                if leased and not await self._lease():
                    log.info("retention lease taken over by another process after %d deletions; stopping", removed)
                    return removed
        return removed

    async def release(self) -> None:
        """Give the lease up (on stop), so another process takes over at its next tick."""
        if not self._holding:
            return
        self._holding = False
        await self._store.release_lease(LEASE, self._holder)

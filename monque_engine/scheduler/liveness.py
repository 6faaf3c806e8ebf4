"""Is an owner dead? Watch its records move, on this process's monotonic clock (ADR 0007).

Why not the age of its heartbeat: an owner's stamps are instants on *its* wall clock. Judged
against the caller's, a caller an hour ahead (a stepped clock, or another machine's) saw a
worker beating every second as an hour silent and released its running job, which then ran
twice; an hour behind, a killed worker looked fresh for an hour. What no clock can fake is
change: a live owner rewrites its registry record and its jobs' ``lastHeartbeat`` every
heartbeat interval. So the owner's records are read, read again at least twice its own
interval (plus a margin) later by the monotonic clock (which no wall-clock step moves, and
which stops rather than races while this machine sleeps), and the owner is dead only if
nothing moved meanwhile. The release is then a compare-and-set in the store on the records
last read, so a beat that lands between that look and the write keeps every job.

A watch is kept per owner between calls: the count that asks the operator starts it, and the
release that follows (or a second count) continues it instead of waiting again, as long as
nothing moved; if something did, the owner was alive since, and the watch starts again. The wait is never longer than ``lock_timeout``: an owner silent that long is
dead by stale recovery's own rule (ADR 0004).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..fleet_records import OwnerCheck, OwnerRecords

#: Added to twice the owner's interval: a beat delayed by a busy write lock or a slow event
#: loop still lands inside the watch.
WATCH_MARGIN_S = 1.0
#: While watching, look again this often (at most one interval apart), so a live owner is
#: told apart at its next beat rather than at the end of the watch.
LOOK_EVERY_MAX_S = 1.0
LOOK_EVERY_MIN_S = 0.05
#: Owners remembered between calls (an operator releases a few; the oldest are forgotten).
MAX_WATCHES = 256


class OwnerStore(Protocol):
    async def owner_records(self, owner: str) -> OwnerRecords: ...

    async def release_unmoved_owner(self, owner: str, expected: OwnerRecords, now_ms: int) -> int | None: ...


@dataclass(slots=True)
class _Watch:
    records: OwnerRecords  # the last look
    since: float  # monotonic instant after the look that first saw records like these


class OwnerWatcher:
    def __init__(
        self,
        store: Callable[[], OwnerStore],
        default_interval_s: float,
        longest_s: float,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._store = store
        self._default_interval_s = default_interval_s
        self._longest_s = longest_s
        self._monotonic = monotonic
        self._sleep = sleep
        self._watches: dict[str, _Watch] = {}

    def window(self, records: OwnerRecords) -> float:
        """How long ``records`` must stay unmoved: twice the owner's own interval (this
        instance's where the owner carries none) plus the margin, at most ``lock_timeout``."""
        interval_ms = records.interval_ms
        interval_s = self._default_interval_s if interval_ms is None else interval_ms / 1000
        return min(2 * interval_s + WATCH_MARGIN_S, self._longest_s)

    async def check(self, owner: str) -> OwnerCheck:
        """Watch ``owner`` until its records move (alive) or stay unmoved for the window (dead)."""
        return (await self._watch(owner))[0]

    async def look(self, owner: str) -> float:
        """Start watching ``owner`` (or continue the watch, if nothing moved) with one look,
        without waiting; the seconds the watch still needs before a release can act (0: now,
        unless the owner beats meanwhile).

        A console calls this when it first shows an owner as dead and on each refresh after:
        by the time the operator presses ``x`` the watch has usually run its course, so the
        release acts at once instead of watching for twice the owner's interval then (61 s
        for a worker silent for 14 minutes: issue 40)."""
        _began, records, ended = await self._look(owner)
        seen = self._watches.get(owner)
        unmoved = seen is not None and not records.moved_since(seen.records)
        since = seen.since if seen is not None and unmoved else ended
        self._remember(owner, records, since)
        return max(0.0, self.window(records) - (ended - since))

    async def release(self, owner: str, now_ms: int) -> int:
        """Release ``owner``'s processing jobs if a watch (continued, or started now) finds it
        dead; the store writes only if its records are still the ones last looked at."""
        verdict, records = await self._watch(owner)
        if verdict.alive or verdict.releasable == 0:
            return 0
        released = await self._store().release_unmoved_owner(owner, records, now_ms)
        return 0 if released is None else released  # None: it beat between the last look and the write

    async def _watch(self, owner: str) -> tuple[OwnerCheck, OwnerRecords]:
        """The verdict, with the records of the last look (what a release compares with)."""
        from ..fleet_records import OwnerCheck  # here: a launch checks no owner (issue 40)

        began, records, ended = await self._look(owner)
        seen = self._watches.get(owner)
        # An earlier watch goes on if nothing moved since its last look. If something did, the
        # owner was alive at some moment since then, not necessarily now: watch afresh.
        unmoved = seen is not None and not records.moved_since(seen.records)
        since = seen.since if seen is not None and unmoved else ended
        self._remember(owner, records, since)
        if not records.jobs and records.record is None:
            return OwnerCheck(owner, alive=False, releasable=0, watched=max(0.0, began - since)), records
        window = self.window(records)
        look_every = min(LOOK_EVERY_MAX_S, max(LOOK_EVERY_MIN_S, window / 4))
        while began - since < window:
            delay = min(look_every, since + window - self._monotonic())
            if delay > 0:
                await self._sleep(delay)
            began, later, ended = await self._look(owner)
            if later.moved_since(records):
                self._remember(owner, later, ended)
                return OwnerCheck(owner, alive=True, releasable=0, watched=ended - since), later
            records = later
            self._remember(owner, records, since)
            window = max(window, self.window(records))
        return OwnerCheck(owner, alive=False, releasable=len(records.jobs), watched=began - since), records

    async def _look(self, owner: str) -> tuple[float, OwnerRecords, float]:
        """The owner's records with the monotonic instants before and after reading them: a
        read sees the store at some moment in between, so a watch runs from the end of its
        first look to the start of its last."""
        began = self._monotonic()
        records = await self._store().owner_records(owner)
        return began, records, self._monotonic()

    def _remember(self, owner: str, records: OwnerRecords, since: float) -> None:
        self._watches.pop(owner, None)
        self._watches[owner] = _Watch(records, since)
        while len(self._watches) > MAX_WATCHES:
            del self._watches[next(iter(self._watches))]

"""The errors view's state, without Textual: the groups, a refresh that never overlaps, and
the job views and bulk plans a group turns into.

Grouping is the engine's (``Monque.error_groups``: one pass over an index of failed and
retrying jobs, see docs/adr/0008). On SQLite that read runs on the store's reader thread,
on MongoDB it is an awaited aggregation: either way the UI thread only awaits it. The
screen re-arms its timer after each fetch, so a slow grouping (a big store) delays the
next refresh instead of stacking fetches, and backs off by what the last fetch cost, as
the counts do (``next_refresh_in``): on 1M failed jobs on MongoDB the grouping reads 1M
index keys, and doing that every 3 s per open console was a scan without end (issue 36
item 4).
"""

from __future__ import annotations

import time

from monque_engine import ErrorGroup, Monque

from ...common.error_groups import group_label
from ..query import JobQuery
from .core import STATS_BACKOFF, STATS_MAX_WAIT

#: Seconds between the end of one fetch and the start of the next, at least (a fetch that
#: cost t waits ``STATS_BACKOFF`` × t, at most ``STATS_MAX_WAIT``).
REFRESH_EVERY = 3.0
#: At most this many groups are listed (most recently seen first).
GROUP_LIMIT = 200
#: Blocks of the errors view's sparkline (each sums 4 minutes of the hour).
SPARK_WIDTH = 15
#: Sparkline characters, lowest first; a minute without failures is the first.
BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(per_minute: tuple[int, ...], width: int = 20) -> str:
    """The last hour as ``width`` unicode blocks (minutes summed per block, scaled to the busiest)."""
    if not per_minute:
        return ""
    size = max(1, -(-len(per_minute) // width))
    buckets = [sum(per_minute[i : i + size]) for i in range(0, len(per_minute), size)]
    peak = max(buckets)
    if peak == 0:
        return BLOCKS[0] * len(buckets)
    top = len(BLOCKS) - 1
    # Any failure shows at least the second block, so one failure is never read as none.
    return "".join(BLOCKS[0] if n == 0 else BLOCKS[max(1, round(n * top / peak))] for n in buckets)


def group_query(base: JobQuery, group: ErrorGroup) -> JobQuery:
    """The jobs view of one group: its failed and retrying jobs, any status tab, the base's sort.

    Other filters are dropped (the group already names the job): what the table shows after
    Enter is exactly the group's members, and bulk keys there act on exactly them.
    """
    return JobQuery(
        sort_by="created_at" if base.sort_by == "locked_at" else base.sort_by,
        descending=base.descending,
        error_group=group.key,
        group_label=group_label(group),
    )


class ErrorGroupsModel:
    """The last fetched groups; ``fetch`` is safe to call from a timer (one at a time)."""

    def __init__(self) -> None:
        self.groups: list[ErrorGroup] = []
        self.loaded = False
        self.busy = False
        self.last_cost = 0.0
        self.error: str | None = None
        #: Groups that are new, or failed again, since the view opened: marked, not moved.
        self.fresh: set[str] = set()
        #: The clock a fetch's cost is measured on (a test's own clock).
        self.monotonic = time.monotonic

    def next_refresh_in(self) -> float:
        """Seconds until the next fetch: ``REFRESH_EVERY``, or ``STATS_BACKOFF`` times what
        the last fetch cost when that is longer, never more than ``STATS_MAX_WAIT`` (a
        console stopped mid-fetch measures the stop too; the cap bounds what that costs)."""
        return max(REFRESH_EVERY, min(STATS_MAX_WAIT, STATS_BACKOFF * self.last_cost))

    def find(self, key: str | None) -> ErrorGroup | None:
        return next((group for group in self.groups if group.key == key), None)

    def _settle(self, latest: list[ErrorGroup]) -> None:
        """Take ``latest`` (the store's order: last seen first) without moving shown rows.

        Re-sorted every 3 s by LAST SEEN, the rows moved under the reader's eyes: the operator
        read a group, pressed ``j`` to reach it, and the row under the cursor was another group
        by then (issue 40). Groups already shown keep their order; a new group goes on top;
        new activity is marked (``fresh``) instead. The first fetch takes the store's order,
        so reopening the view sorts it again.
        """
        if not self.loaded:
            self.groups, self.fresh = latest, set()
            return
        before = {group.key: group for group in self.groups}
        by_key = {group.key: group for group in latest}
        new = [group for group in latest if group.key not in before]
        kept = [by_key[key] for key in before if key in by_key]
        self.fresh = (
            (self.fresh & by_key.keys())
            | {group.key for group in new}
            | {
                group.key
                for group in kept
                if group.last_seen_ms != before[group.key].last_seen_ms or group.count > before[group.key].count
            }
        )
        self.groups = new + kept

    async def fetch(self, monque: Monque | None, limit: int = GROUP_LIMIT) -> bool:
        """Read the groups; False (nothing changed) when another fetch is running or there is no store."""
        if monque is None or self.busy:
            return False
        self.busy = True
        started = self.monotonic()
        try:
            self._settle(await monque.error_groups(limit=limit))
            self.error = None
        except Exception as error:  # noqa: BLE001 - shown in the view, the next refresh tries again
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self.busy = False
            self.last_cost = self.monotonic() - started
        self.loaded = True
        return True

"""The jobs table's window: a bounded, ordered slice of the store's listing.

The table never holds the collection, only this slice: pages fetched with keyset queries
around the viewport, trimmed to ``capacity`` rows. Change-feed batches are applied to it
as a keyed diff: changed rows are replaced (and moved if their sort value moved), new
jobs that sort inside the slice are inserted, rows that left the filter are dropped.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from monque_engine import Job

from .query import JobQuery

PAGE_SIZE = 200
CAPACITY = 1000


@dataclass(slots=True)
class WindowDiff:
    """Which rows of the window a change touched, so the table redraws only those."""

    updated: set[str] = field(default_factory=set)
    inserted: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.updated or self.inserted or self.removed)


class JobWindow:
    def __init__(self, query: JobQuery, capacity: int = CAPACITY) -> None:
        self.query = query
        self.capacity = capacity
        self.rows: list[Job] = []
        self._keys: list[tuple[Any, ...]] = []
        self._index: dict[str, int] | None = {}
        #: Whether the listing continues above the first / below the last row.
        self.has_before = False
        self.has_after = False
        #: Rows of the listing above the first loaded one (exact until live changes land), when
        #: ``offset_known``: a window loaded from the bottom (``G``) does not know how many rows
        #: are above it, and its 0 made the table say ``↑ 382 above`` over 47k (probe finding).
        self.offset = 0
        self.offset_known = True

    def __len__(self) -> int:
        return len(self.rows)

    # -- loading ------------------------------------------------------------------------------
    def replace(self, jobs: list[Job], has_before: bool, has_after: bool, offset: int | None = None) -> None:
        """``offset``: rows above ``jobs``; None when not known (only 0 is, with nothing before)."""
        self.rows = list(jobs)
        self._keys = [self.query.order_key(job) for job in self.rows]
        self._index = None
        self.has_before, self.has_after = has_before, has_after
        self.offset = offset or 0
        self.offset_known = offset is not None or not has_before

    def extend_after(self, jobs: list[Job], has_after: bool) -> None:
        known = self.index
        fresh = [job for job in jobs if job.id not in known]
        self.rows.extend(fresh)
        self._keys.extend(self.query.order_key(job) for job in fresh)
        self._index = None
        self.has_after = has_after

    def extend_before(self, jobs: list[Job], has_before: bool) -> None:
        known = self.index
        fresh = [job for job in jobs if job.id not in known]
        self.rows[:0] = fresh
        self._keys[:0] = [self.query.order_key(job) for job in fresh]
        self._index = None
        self.has_before = has_before
        self.offset = max(0, self.offset - len(fresh))
        if not has_before:  # the top of the listing: nothing above, whatever was known before
            self.offset, self.offset_known = 0, True

    def trim(self, around: int) -> int:
        """Keep at most ``capacity`` rows centred on row ``around``; returns rows cut from the top."""
        excess = len(self.rows) - self.capacity
        if excess <= 0:
            return 0
        half = self.capacity // 2
        top = min(max(0, around - half), excess)
        bottom = excess - top
        if bottom:
            del self.rows[-bottom:], self._keys[-bottom:]
            self.has_after = True
        if top:
            del self.rows[:top], self._keys[:top]
            self.has_before = True
            self.offset += top
        self._index = None
        return top

    # -- lookup --------------------------------------------------------------------------------
    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {job.id: i for i, job in enumerate(self.rows)}
        return self._index

    def position(self, job_id: str) -> int | None:
        return self.index.get(job_id)

    def get(self, job_id: str) -> Job | None:
        position = self.index.get(job_id)
        return None if position is None else self.rows[position]

    # -- live changes ----------------------------------------------------------------------------
    def apply(self, changes: dict[str, Job | None]) -> WindowDiff:
        """Apply the latest state of each changed job (None: deleted)."""
        diff = WindowDiff()
        query = self.query
        present = self.index
        removals = sorted((present[job_id] for job_id in changes if job_id in present), reverse=True)
        for position in removals:
            del self.rows[position], self._keys[position]
        self._index = None
        was_present = {job_id for job_id in changes if job_id in present}
        for job_id, job in changes.items():
            if job is None or not query.matches(job):
                if job_id in was_present:
                    diff.removed.add(job_id)
                continue
            key = query.order_key(job)
            position = bisect_left(self._keys, key)
            inside = 0 < position < len(self.rows)
            at_top = position == 0 and not self.has_before
            at_bottom = position == len(self.rows) and not self.has_after
            if inside or at_top or at_bottom:
                self.rows.insert(position, job)
                self._keys.insert(position, key)
                (diff.updated if job_id in was_present else diff.inserted).add(job_id)
            elif job_id in was_present:
                diff.removed.add(job_id)  # moved beyond the loaded slice
        return diff

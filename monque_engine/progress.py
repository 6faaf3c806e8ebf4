"""Where a count or a page read in steps stands (ADR 0008).

A text filter (``JobListFilter.text``) has no index: its count reads every job, and so does
the page of a string few jobs hold. ``Monque.count_jobs_in_steps``, ``count_bulk_in_steps``
and ``get_jobs_in_steps`` read such a store in bounded steps and yield one of these after
each, so a console can show what it found so far and how far it got, and stop reading at
once (stop iterating, or cancel the task) when the operator moves on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .job import BulkCount, CursorPage, Job, JobStatus

#: Jobs each step of a ``*_in_steps`` read reads: ~30-55 ms a step on SQLite at 10M jobs
#: (ADR 0008), so a stop waits for at most that, and progress moves ~20 times a second.
DEFAULT_STEP_JOBS = 100_000


@dataclass(frozen=True, slots=True)
class CountProgress:
    """A count so far. ``by_status``: the matching jobs found so far, by status (exact once
    ``done``); ``read``: how many jobs the count has read; ``total``: about how many it will
    read (the store's size when it began; jobs come and go meanwhile, so ``read`` may end
    above or below it). ``bulk``: on the last progress of ``count_bulk_in_steps``, the count
    to confirm and to pass as ``as_of`` (``Monque.count_bulk``)."""

    by_status: Mapping[JobStatus, int]
    read: int
    total: int
    done: bool
    bulk: BulkCount | None = None

    @property
    def matched(self) -> int:
        """The matching jobs found so far, every status."""
        return sum(self.by_status.values())

    def count(self, status: JobStatus | None = None) -> int:
        """The matching jobs of ``status`` found so far (None: every status)."""
        return self.matched if status is None else self.by_status.get(status, 0)


@dataclass(frozen=True, slots=True)
class PageProgress:
    """A page so far. ``jobs``: the matching jobs found so far, in the page's order (at most
    its limit); ``read``, ``total``: as ``CountProgress``; ``page``: once ``done``, the page
    exactly as ``get_jobs_with_cursor`` returns it."""

    jobs: list[Job]
    read: int
    total: int
    done: bool
    page: CursorPage | None = None

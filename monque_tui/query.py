"""What the jobs view shows: status, name, free text and sort, and how a job is judged against it.

The same predicate the store applies in SQL is applied here to jobs arriving on the change
feed, so a changed job can be placed in (or dropped from) the loaded window without a query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from monque_engine import Job, JobListFilter, JobSelector, JobSort, JobStatus

SortBy = Literal["created_at", "updated_at", "next_run_at"]
SORT_FIELDS: tuple[SortBy, ...] = ("created_at", "updated_at", "next_run_at")
SORT_LABELS: dict[str, str] = {"created_at": "created", "updated_at": "updated", "next_run_at": "next run"}
_INVERT = str.maketrans("0123456789abcdef", "fedcba9876543210")


@dataclass(frozen=True, slots=True)
class JobQuery:
    status: JobStatus | None = None
    name: str | None = None
    search: str | None = None
    sort_by: SortBy = "created_at"
    descending: bool = True

    # -- store forms ---------------------------------------------------------------------
    def list_filter(self) -> JobListFilter:
        return JobListFilter(name=self.name, status=self.status, search=self.search)

    def sort(self) -> JobSort:
        return JobSort(by=self.sort_by, direction="desc" if self.descending else "asc")

    @property
    def bulk_expressible(self) -> bool:
        """Whether a JobSelector can say exactly what this view shows (it has no free text)."""
        return not self.search

    def selector(self, status: JobStatus | tuple[JobStatus, ...] | None) -> JobSelector:
        return JobSelector(name=self.name, status=list(status) if isinstance(status, tuple) else status)

    # -- changes -----------------------------------------------------------------------------
    def with_status(self, status: JobStatus | None) -> JobQuery:
        return replace(self, status=status)

    def next_sort(self) -> JobQuery:
        index = (SORT_FIELDS.index(self.sort_by) + 1) % len(SORT_FIELDS)
        return replace(self, sort_by=SORT_FIELDS[index])

    def reversed(self) -> JobQuery:
        return replace(self, descending=not self.descending)

    @property
    def is_empty(self) -> bool:
        return self.status is None and not self.name and not self.search

    # -- judging a job ----------------------------------------------------------------------
    def matches(self, job: Job) -> bool:
        if self.status is not None and job.status is not self.status:
            return False
        if self.name is not None and job.name != self.name:
            return False
        if self.search:
            text = self.search.strip()
            if not (job.id.startswith(text.lower()) or (job.unique_key is not None and text in job.unique_key)):
                return False
        return True

    def order_key(self, job: Job) -> tuple[Any, ...]:
        """Ascending order of this key is display order (ties broken by id, as the store does)."""
        value: int = getattr(job, f"{self.sort_by}_ms")
        if self.descending:
            return (-value, job.id.translate(_INVERT))
        return (value, job.id)

    def describe(self) -> str:
        parts = [self.status.value if self.status else "all"]
        if self.name:
            parts.append(f"named {self.name!r}")
        if self.search:
            parts.append(f"matching {self.search!r}")
        return " ".join(parts)


_OFFSET = re.compile(r"^\+\s*(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


class WhenError(ValueError):
    pass


def parse_when(text: str, now_ms: int) -> datetime:
    """"+10m", "+2h", "+1d", "now", or an ISO time (UTC unless it names an offset)."""
    value = text.strip().lower()
    now = datetime.fromtimestamp(now_ms / 1000, UTC)
    if value == "now":
        return now
    match = _OFFSET.match(value)
    if match:
        return now + timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise WhenError(
            f"Cannot read {text!r} as a time; type +10m, +2h, +1d, now, or an ISO time like 2030-01-02T15:04"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

"""A datetime whose offset carries it past the years 1-9999 is a query error (issue 34, section 4).

Python holds ``datetime(1, 1, 1, tzinfo=+05:00)`` and ``datetime(9999, 12, 31, 23, 59,
tzinfo=-05:00)``, but in UTC they fall outside what any datetime (or the MongoDB store's
query, which builds one) can hold: the engine took them as bounds (SQLite compared the ints,
MongoDB raised ``OverflowError``) and ``get_next_cron_date`` raised ``OverflowError``. Each
is an ``InvalidJobQueryError`` naming the argument now, on every store.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from monque_engine import InvalidJobQueryError, JobListFilter, JobSelector
from monque_engine.cron import get_next_cron_date

EARLY = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5)))
LATE = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-5)))


async def test_a_bound_outside_the_calendar_is_refused_everywhere(monque: Any) -> None:
    m = await monque()
    job = await m.enqueue("t", 1)
    targets = [
        (JobListFilter(created_at_from=EARLY), "created_at_from"),
        (JobListFilter(updated_at_to=LATE), "updated_at_to"),
        (JobListFilter(next_run_at_from=EARLY), "next_run_at_from"),
        (JobSelector(older_than=LATE), "older_than"),
        (JobSelector(newer_than=EARLY), "newer_than"),
    ]
    for target, field in targets:
        with pytest.raises(InvalidJobQueryError, match=rf"{field} .* out of range"):
            await m.count_bulk("delete", target)
        with pytest.raises(InvalidJobQueryError, match=rf"{field} .* out of range"):
            await m.delete_jobs(target)
        if isinstance(target, JobListFilter):
            with pytest.raises(InvalidJobQueryError, match=rf"{field} .* out of range"):
                await m.count_jobs(target)
    with pytest.raises(InvalidJobQueryError, match=r"since .* out of range"):
        await m.error_groups(since=EARLY)
    with pytest.raises(InvalidJobQueryError, match=r"updated_before .* out of range"):
        await m.cancel_jobs(JobSelector(name="t"), updated_before=LATE)
    assert await m.get_job(job.id) == job.replace(data=1)
    # The calendar's own ends, in UTC, are still bounds.
    assert await m.count_jobs(JobListFilter(created_at_from=datetime(1, 1, 1, tzinfo=UTC))) == 1


@pytest.mark.parametrize("moment", [EARLY, LATE], ids=["early", "late"])
def test_get_next_cron_date_refuses_a_current_date_outside_the_calendar(moment: datetime) -> None:
    with pytest.raises(InvalidJobQueryError, match=r"current_date .* out of range"):
        get_next_cron_date("* * * * *", moment)

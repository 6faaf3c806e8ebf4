"""A cron day of month no month has runs on its restricted weekdays, as Node Monque's parser
runs it; a schedule that can never run is refused with the reason and nothing stored.

cron-parser (Node Monque's parser) refuses a day of month that a single month never has only
when the day of week is a wildcard ("Invalid explicit day of month definition"); with a
restricted day of week, the OR rule keeps the expression: ``0 0 30 2 MON`` runs every Monday
of February. We refused it, so a schedule a Node producer stored failed on a Python worker.
And the refusal of ``0 0 30 2 *`` said only croniter's "failed to find next date". (Found by
acceptance probe round 5.)
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from monque_engine import InvalidCronError, Monque
from monque_engine.cron import build_repeat_interval, next_runs
from monque_engine.timeutil import datetime_to_ms, ms_to_datetime

START = datetime_to_ms(datetime(2026, 12, 3, 12, 0, tzinfo=UTC))


@pytest.mark.parametrize(
    ("expression", "month", "weekday"),
    [("0 0 30 2 MON", 2, 0), ("0 0 31 4 SUN", 4, 6), ("0 0 0 30 2 1", 2, 0), ("0 0 31 2 FRI", 2, 4)],
)
def test_an_impossible_day_of_month_with_a_restricted_weekday_runs_on_the_weekdays(
    expression: str, month: int, weekday: int
) -> None:
    runs = [ms_to_datetime(ms) for ms in next_runs(build_repeat_interval(expression), START, 6)]
    assert all(run.month == month and run.weekday() == weekday for run in runs), runs
    assert runs == sorted(set(runs))


@pytest.mark.parametrize("expression", ["0 0 30 2 *", "0 0 31 4 *", "0 0 30,31 2 *", "0 0 31 2,4,6,9,11 *"])
async def test_a_schedule_that_never_runs_is_refused_with_the_reason_and_nothing_stored(
    tmp_path: Path, expression: str
) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        with pytest.raises(InvalidCronError, match=r"no date ever matches it \(.*30 February\)"):
            await m.schedule(expression, "report", None)
        assert await m.get_jobs() == []
    finally:
        await m.close()

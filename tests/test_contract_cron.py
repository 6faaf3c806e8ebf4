"""Cron: 5 fields, 6 fields with seconds first, macros, time zones, and clear errors."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from monque_engine import InvalidCronError, JobStatus
from monque_engine.cron import build_repeat_interval, describe, next_run_ms, next_runs
from monque_engine.timeutil import datetime_to_ms, ms_to_datetime


def at(*args: int) -> int:
    return datetime_to_ms(datetime(*args, tzinfo=UTC))


def nxt(expr: str, after: int) -> datetime:
    return ms_to_datetime(next_run_ms(expr, after))


@pytest.mark.parametrize("expr,after,expected", [
    ("*/15 * * * *", at(2024, 3, 10, 12, 7, 30), datetime(2024, 3, 10, 12, 15, tzinfo=UTC)),
    ("0 9 * * 1", at(2024, 3, 10, 12, 0), datetime(2024, 3, 11, 9, 0, tzinfo=UTC)),  # next Monday
    ("30 2 1 * *", at(2024, 1, 31, 0, 0), datetime(2024, 2, 1, 2, 30, tzinfo=UTC)),
    ("0 0 29 2 *", at(2024, 3, 1, 0, 0), datetime(2028, 2, 29, 0, 0, tzinfo=UTC)),
    # strictly after: a time exactly on the schedule moves to the next one
    ("0 * * * *", at(2024, 3, 10, 12, 0), datetime(2024, 3, 10, 13, 0, tzinfo=UTC)),
])
def test_five_field_expressions(expr, after, expected):
    assert nxt(expr, after) == expected


@pytest.mark.parametrize("expr,after,expected", [
    ("30 * * * * *", at(2024, 3, 10, 12, 0, 0), datetime(2024, 3, 10, 12, 0, 30, tzinfo=UTC)),
    ("*/10 * * * * *", at(2024, 3, 10, 12, 0, 31), datetime(2024, 3, 10, 12, 0, 40, tzinfo=UTC)),
    ("0 0 12 * * *", at(2024, 3, 10, 12, 0, 1), datetime(2024, 3, 11, 12, 0, 0, tzinfo=UTC)),
    ("15 30 6 * * 0", at(2024, 3, 10, 7, 0), datetime(2024, 3, 17, 6, 30, 15, tzinfo=UTC)),
])
def test_six_field_expressions_have_seconds_first(expr, after, expected):
    assert nxt(expr, after) == expected


@pytest.mark.parametrize("macro,expected", [
    ("@hourly", datetime(2024, 3, 10, 13, 0, tzinfo=UTC)),
    ("@daily", datetime(2024, 3, 11, 0, 0, tzinfo=UTC)),
    ("@midnight", datetime(2024, 3, 11, 0, 0, tzinfo=UTC)),
    ("@weekly", datetime(2024, 3, 17, 0, 0, tzinfo=UTC)),  # 2024-03-10 is a Sunday
    ("@monthly", datetime(2024, 4, 1, 0, 0, tzinfo=UTC)),
    ("@yearly", datetime(2025, 1, 1, 0, 0, tzinfo=UTC)),
    ("@annually", datetime(2025, 1, 1, 0, 0, tzinfo=UTC)),
    ("@HOURLY", datetime(2024, 3, 10, 13, 0, tzinfo=UTC)),
])
def test_macros(macro, expected):
    assert nxt(macro, at(2024, 3, 10, 12, 34, 56)) == expected


def test_time_zone_is_honoured_across_dst():
    stored = build_repeat_interval("0 9 * * *", "Europe/Paris")
    assert stored == "CRON_TZ=Europe/Paris 0 9 * * *"
    # winter: Paris is UTC+1
    assert nxt(stored, at(2024, 1, 15, 0, 0)) == datetime(2024, 1, 15, 8, 0, tzinfo=UTC)
    # summer: Paris is UTC+2
    assert nxt(stored, at(2024, 7, 1, 0, 0)) == datetime(2024, 7, 1, 7, 0, tzinfo=UTC)
    # across the spring-forward night (31 March 2024)
    runs = [ms_to_datetime(r) for r in next_runs(stored, at(2024, 3, 30, 12, 0), 2)]
    assert runs == [datetime(2024, 3, 31, 7, 0, tzinfo=UTC), datetime(2024, 4, 1, 7, 0, tzinfo=UTC)]
    local = runs[0].astimezone(ZoneInfo("Europe/Paris"))
    assert (local.hour, local.minute) == (9, 0)


def test_without_zone_cron_is_utc():
    assert build_repeat_interval(" 0 9 * * * ") == "0 9 * * *"
    assert nxt("0 9 * * *", at(2024, 7, 1, 0, 0)) == datetime(2024, 7, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("expr", [
    "", "   ", "* * * *", "* * * * * * *", "61 * * * *", "* 25 * * *", "* * 32 * *", "* * * 13 *",
    "a b c d e", "@every_minute", "@hourly extra", "*/0 * * * *",
])
def test_invalid_expressions_raise_with_a_hint(expr):
    with pytest.raises(InvalidCronError) as info:
        build_repeat_interval(expr)
    assert info.value.expression == expr.strip() or info.value.expression == expr
    message = str(info.value)
    assert "5 fields" in message and "@hourly" in message


def test_invalid_time_zone_raises():
    with pytest.raises(InvalidCronError) as info:
        build_repeat_interval("0 9 * * *", "Not/AZone")
    assert "Not/AZone" in str(info.value) and "IANA" in str(info.value)


def test_non_string_expression_raises():
    with pytest.raises(InvalidCronError):
        build_repeat_interval(None)  # type: ignore[arg-type]


def test_describe():
    assert describe("@hourly") == "at the start of every hour (UTC)"
    assert describe("CRON_TZ=Europe/Paris 30 9 * * *") == "every day at 09:30 (Europe/Paris)"
    assert describe("*/5 * * * *") == "every 5 minutes (UTC)"
    assert describe("*/10 * * * * *") == "every 10 seconds (UTC)"
    assert describe("0 8 * * 1") == "every Monday at 08:00 (UTC)"


async def test_schedule_with_time_zone_stores_next_time(monque):
    m = await monque()
    job = await m.schedule("0 9 * * *", "paris", {"x": 1}, tz="Europe/Paris")
    assert job.repeat_interval == "CRON_TZ=Europe/Paris 0 9 * * *"
    assert job.next_run_at_ms == next_run_ms(job.repeat_interval, job.created_at_ms)
    local = job.next_run_at.astimezone(ZoneInfo("Europe/Paris"))
    assert (local.hour, local.minute, local.second) == (9, 0, 0)
    assert job.next_run_at_ms > job.created_at_ms
    assert job.next_run_at_ms - job.created_at_ms <= 24 * 3600 * 1000
    stored = await m.get_job(job.id)
    assert stored.repeat_interval == job.repeat_interval and stored.status is JobStatus.PENDING


@pytest.mark.parametrize("expr", ["@hourly", "0 */2 * * *", "5 4 * * * *"])
async def test_schedule_computes_first_run_from_now(monque, expr):
    m = await monque()
    job = await m.schedule(expr, "s")
    assert job.next_run_at_ms == next_run_ms(expr, job.created_at_ms)

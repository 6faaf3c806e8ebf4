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


@pytest.mark.parametrize(
    "expr,after,expected",
    [
        ("*/15 * * * *", at(2024, 3, 10, 12, 7, 30), datetime(2024, 3, 10, 12, 15, tzinfo=UTC)),
        ("0 9 * * 1", at(2024, 3, 10, 12, 0), datetime(2024, 3, 11, 9, 0, tzinfo=UTC)),  # next Monday
        ("30 2 1 * *", at(2024, 1, 31, 0, 0), datetime(2024, 2, 1, 2, 30, tzinfo=UTC)),
        ("0 0 29 2 *", at(2024, 3, 1, 0, 0), datetime(2028, 2, 29, 0, 0, tzinfo=UTC)),
        # strictly after: a time exactly on the schedule moves to the next one
        ("0 * * * *", at(2024, 3, 10, 12, 0), datetime(2024, 3, 10, 13, 0, tzinfo=UTC)),
    ],
)
def test_five_field_expressions(expr, after, expected):
    assert nxt(expr, after) == expected


@pytest.mark.parametrize(
    "expr,after,expected",
    [
        ("30 * * * * *", at(2024, 3, 10, 12, 0, 0), datetime(2024, 3, 10, 12, 0, 30, tzinfo=UTC)),
        ("*/10 * * * * *", at(2024, 3, 10, 12, 0, 31), datetime(2024, 3, 10, 12, 0, 40, tzinfo=UTC)),
        ("0 0 12 * * *", at(2024, 3, 10, 12, 0, 1), datetime(2024, 3, 11, 12, 0, 0, tzinfo=UTC)),
        ("15 30 6 * * 0", at(2024, 3, 10, 7, 0), datetime(2024, 3, 17, 6, 30, 15, tzinfo=UTC)),
    ],
)
def test_six_field_expressions_have_seconds_first(expr, after, expected):
    assert nxt(expr, after) == expected


@pytest.mark.parametrize(
    "macro,expected",
    [
        ("@hourly", datetime(2024, 3, 10, 13, 0, tzinfo=UTC)),
        ("@daily", datetime(2024, 3, 11, 0, 0, tzinfo=UTC)),
        ("@midnight", datetime(2024, 3, 11, 0, 0, tzinfo=UTC)),
        ("@weekly", datetime(2024, 3, 17, 0, 0, tzinfo=UTC)),  # 2024-03-10 is a Sunday
        ("@monthly", datetime(2024, 4, 1, 0, 0, tzinfo=UTC)),
        ("@yearly", datetime(2025, 1, 1, 0, 0, tzinfo=UTC)),
        ("@annually", datetime(2025, 1, 1, 0, 0, tzinfo=UTC)),
        ("@HOURLY", datetime(2024, 3, 10, 13, 0, tzinfo=UTC)),
    ],
)
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


@pytest.mark.parametrize(
    "expr",
    [
        "",
        "   ",
        "* *",  # cron-parser pads this into day of month 0, and refuses it too
        "5",
        "* * * * * * *",
        "0 0 * * 1#6",  # occurrence after '#' is 1 to 5
        "0 0 * * 1#2,3",  # cron-parser refuses '#' with a list, range or step
        "0 0 * * 1-2#2",
        "0 0 5-1 * *",  # a backwards range: croniter would wrap it, cron-parser refuses it
        "0 0 * * FRI-MON",
        "0 0 32 * MON#2",  # '#' narrows the day of month, which must still be valid as written
        "61 * * * *",
        "* 25 * * *",
        "* * 32 * *",
        "* * * 13 *",
        "a b c d e",
        "@every_minute",
        "@hourly extra",
        "*/0 * * * *",
    ],
)
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


# -- everything Node Monque's parser (cron-parser 5) accepts -------------------------------------


@pytest.mark.parametrize(
    "expr,expected",
    [
        ("@minutely", [datetime(2026, 1, 1, 0, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 2, tzinfo=UTC)]),
        ("@secondly", [datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 0, 2, tzinfo=UTC)]),
        # 2026-01-01 is a Thursday
        ("@weekdays", [datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 1, 5, tzinfo=UTC)]),
        ("@weekends", [datetime(2026, 1, 3, tzinfo=UTC), datetime(2026, 1, 4, tzinfo=UTC)]),
        ("0 0 L * *", [datetime(2026, 1, 31, tzinfo=UTC), datetime(2026, 2, 28, tzinfo=UTC)]),  # last day
        ("0 0 * * 5L", [datetime(2026, 1, 30, tzinfo=UTC), datetime(2026, 2, 27, tzinfo=UTC)]),  # last Friday
        ("0 0 * * 7L", [datetime(2026, 1, 25, tzinfo=UTC), datetime(2026, 2, 22, tzinfo=UTC)]),  # last Sunday
        ("0 0 * * MON#2", [datetime(2026, 1, 12, tzinfo=UTC), datetime(2026, 2, 9, tzinfo=UTC)]),  # 2nd Monday
        ("0 0 * * 1#1", [datetime(2026, 1, 5, tzinfo=UTC), datetime(2026, 2, 2, tzinfo=UTC)]),
        ("0 0 ? * *", [datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 1, 3, tzinfo=UTC)]),
        ("0 12 * JAN-FEB sun", [datetime(2026, 1, 4, 12, tzinfo=UTC), datetime(2026, 1, 11, 12, tzinfo=UTC)]),
        ("0 0 * * 6,5L", [datetime(2026, 1, 3, tzinfo=UTC), datetime(2026, 1, 10, tzinfo=UTC)]),
        ("0 0 31 * 5L", [datetime(2026, 1, 30, tzinfo=UTC), datetime(2026, 1, 31, tzinfo=UTC)]),  # OR, as Vixie
        ("0 0 * * 7#2", [datetime(2026, 1, 11, tzinfo=UTC), datetime(2026, 2, 8, tzinfo=UTC)]),  # 7 is Sunday
    ],
)
def test_node_monque_expressions(expr, expected):
    stored = build_repeat_interval(expr)
    assert [ms_to_datetime(r) for r in next_runs(stored, at(2026, 1, 1), 2)] == expected


@pytest.mark.parametrize(
    "expr,expected",
    [
        # 4 fields: cron-parser pads "* 0" in front: hour, day of month, month, day of week,
        # at minute 0, every second of it.
        ("6 * * *", [datetime(2026, 1, 1, 6, 0, 0, tzinfo=UTC), datetime(2026, 1, 1, 6, 0, 1, tzinfo=UTC)]),
        ("0 * * *", [datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 0, 2, tzinfo=UTC)]),
        # 3 fields: "* * 0" in front: day of month, month, day of week, every second of hour 0
        ("12 1 *", [datetime(2026, 1, 12, 0, 0, 0, tzinfo=UTC), datetime(2026, 1, 12, 0, 0, 1, tzinfo=UTC)]),
        ("* * MON", [datetime(2026, 1, 5, 0, 0, 0, tzinfo=UTC), datetime(2026, 1, 5, 0, 0, 1, tzinfo=UTC)]),
    ],
)
def test_short_expressions_are_padded_as_node_pads_them(expr, expected):
    """A Node producer can store a 3- or 4-field schedule (cron-parser pads it from the left
    with its defaults); a Python worker must run it on the same instants."""
    stored = build_repeat_interval(expr)
    assert stored == expr
    assert [ms_to_datetime(r) for r in next_runs(stored, at(2026, 1, 1), 2)] == expected


@pytest.mark.parametrize(
    "expr,expected",
    [
        # (15th OR Monday) AND second week: the 15th is never in days 8-14, so second Mondays only
        ("0 0 15 * MON#2", [datetime(2026, 1, 12, tzinfo=UTC), datetime(2026, 2, 9, tzinfo=UTC)]),
        # the 10th is in the second week, so it runs too
        (
            "0 0 10 * MON#2",
            [
                datetime(2026, 1, 10, tzinfo=UTC),
                datetime(2026, 1, 12, tzinfo=UTC),
                datetime(2026, 2, 9, tzinfo=UTC),
                datetime(2026, 2, 10, tzinfo=UTC),
            ],
        ),
        # a list of days: only those in the week count
        ("0 0 1,9,20 * 1#2", [datetime(2026, 1, 9, tzinfo=UTC), datetime(2026, 1, 12, tzinfo=UTC)]),
        # '*#2' is every weekday of the second week: days 8 to 14
        ("0 0 * * *#2", [datetime(2026, 1, 8, tzinfo=UTC), datetime(2026, 1, 9, tzinfo=UTC)]),
        ("0 0 3 * ?#1", [datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 1, 3, tzinfo=UTC)]),
        # last day OR Saturday, in days 29-31: Jan 31, then February (28 days) has none
        (
            "0 0 L * 6#5",
            [datetime(2026, 1, 31, tzinfo=UTC), datetime(2026, 3, 31, tzinfo=UTC), datetime(2026, 4, 30, tzinfo=UTC)],
        ),
    ],
)
def test_hash_also_limits_a_restricted_day_of_month_as_node_does(expr, expected):
    """cron-parser ORs the two day fields, then requires the n-th week of ``#n`` of the
    result (``Math.ceil(date / 7) === nthDay``), unlike Vixie cron's plain OR."""
    stored = build_repeat_interval(expr)
    assert [ms_to_datetime(r) for r in next_runs(stored, at(2026, 1, 1), len(expected))] == expected


def test_h_picks_a_value_in_the_field_range_as_node_does():
    for _ in range(20):
        run = nxt("H H * * *", at(2026, 1, 1))
        assert run.second == 0 and datetime(2026, 1, 1, tzinfo=UTC) < run <= datetime(2026, 1, 2, 23, 59, tzinfo=UTC)


@pytest.mark.parametrize("tz", ["UTC 30", " UTC", "Europe/Paris 5", "", "../etc/passwd", 5])
def test_time_zone_must_be_a_zone_key_and_nothing_else(tz):
    with pytest.raises(InvalidCronError) as info:
        build_repeat_interval("0 9 * * *", tz)
    assert repr(tz) in str(info.value)


async def test_schedule_refuses_a_time_zone_with_extra_text_and_writes_nothing(monque):
    m = await monque()
    with pytest.raises(InvalidCronError):
        await m.schedule("0 9 * * *", "tz", tz="UTC 30")
    assert await m.get_jobs() == []


async def test_a_stored_schedule_that_cannot_be_parsed_fails_once_without_running(monque, recorder):
    m = await monque(max_retries=5)
    if m.store.kind != "sqlite":
        pytest.skip("the raw repeatInterval write below is SQLite-only")
    rec = recorder(m, "job:fail", "job:start", "job:complete")
    ran = []
    m.register("bad-schedule", lambda job: ran.append(job.id))
    job = await m.schedule("@daily", "bad-schedule")
    # A producer elsewhere stored something no parser here reads, and made it due now.
    table = m.options.collection_name
    await m.store.execute_write(
        lambda c: c.execute(
            f"UPDATE {table} SET repeat_interval = '0 0 W * *', next_run_at = 0 WHERE id = ?", (job.id,)
        )
    )
    await m.start()
    (fail,) = await rec.wait_for("job:fail")
    assert fail.will_retry is False and isinstance(fail.error, InvalidCronError)
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.FAILED and stored.fail_count == 1
    assert "0 0 W * *" in stored.fail_reason and "Invalid cron expression" in stored.fail_reason
    assert ran == [] and rec.of("job:start") == []


def test_daily_cron_runs_once_on_fall_back_day():
    """'30 2 * * *' in Europe/Paris: on 2024-10-27 local 02:30 happens twice (CEST, then CET).
    A daily job must not run again at the repeated 02:30 (01:30 UTC) when the next run is
    computed from its first run's completion: cron (Vixie, cronie) runs such a job once."""
    expr = "CRON_TZ=Europe/Paris 30 2 * * *"
    first = next_run_ms(expr, at(2024, 10, 26, 12, 0))
    assert first == at(2024, 10, 27, 0, 30)
    second = next_run_ms(expr, first + 5_000)  # computed from completion time
    assert second == at(2024, 10, 28, 1, 30), f"daily job runs again at {ms_to_datetime(second)}"

"""Cron schedules: 5 fields, 6 with seconds first, @macros, and an optional time zone.

Upstream evaluates cron in the server's local time, which silently shifts schedules when
servers move. We evaluate in UTC unless a zone is given, and persist the zone inside
``repeatInterval`` as the conventional ``CRON_TZ=<zone> <expression>`` prefix so the stored
document stays in Monque's schema.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from .errors import InvalidCronError
from .timeutil import datetime_to_ms, ms_to_datetime

MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_TZ_PREFIX = "CRON_TZ="


def _split(repeat_interval: str) -> tuple[str, str | None]:
    text = repeat_interval.strip()
    if text.startswith(_TZ_PREFIX):
        zone, _, expression = text[len(_TZ_PREFIX) :].partition(" ")
        return expression.strip(), zone
    return text, None


def _zone(name: str | None, original: str) -> ZoneInfo | None:
    if name is None:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidCronError(original, f"unknown time zone {name!r} (use an IANA name such as Europe/Paris)") from None


def _iterator(expression: str, start: datetime, original: str) -> croniter:
    fields = expression.split()
    if not fields:
        raise InvalidCronError(original, "the expression is empty")
    if fields[0].startswith("@"):
        if len(fields) != 1 or fields[0].lower() not in MACROS:
            raise InvalidCronError(original, f"unknown macro {fields[0]!r}")
    elif len(fields) not in (5, 6):
        raise InvalidCronError(original, f"expected 5 or 6 fields, got {len(fields)}")
    try:
        return croniter(" ".join(fields).lower() if fields[0].startswith("@") else expression,
                        start, second_at_beginning=len(fields) == 6)
    except (ValueError, KeyError, TypeError) as error:
        raise InvalidCronError(original, str(error)) from None


def build_repeat_interval(expression: str, tz: str | None = None) -> str:
    """Validate an expression (and zone) and return what to store in ``repeatInterval``."""
    if not isinstance(expression, str):
        raise InvalidCronError(str(expression), "the expression must be a string")
    stored = f"{_TZ_PREFIX}{tz} {expression.strip()}" if tz else expression.strip()
    next_run_ms(stored, 0)  # raises InvalidCronError with a hint
    return stored


def next_run_ms(repeat_interval: str, after_ms: int) -> int:
    """The first run strictly after ``after_ms`` for a stored ``repeatInterval``.

    When clocks fall back, a fixed-hour schedule ("30 2 * * *") would meet its wall-clock
    time twice; like cron (Vixie, cronie) it runs once: a candidate whose local time is not
    later than the previous run's is skipped. Schedules with a wildcard hour keep running
    through the repeated hour.
    """
    expression, zone_name = _split(repeat_interval)
    zone = _zone(zone_name, repeat_interval)
    start = ms_to_datetime(after_ms).astimezone(zone or UTC)
    it = _iterator(expression, start, repeat_interval)
    skip_repeats = zone is not None and _fixed_hours(expression)
    try:
        candidate = it.get_next(datetime)
        while skip_repeats and candidate.replace(tzinfo=None) <= start.replace(tzinfo=None):
            candidate = it.get_next(datetime)
        return datetime_to_ms(candidate)
    except Exception as error:  # croniter raises a few kinds for impossible dates
        raise InvalidCronError(repeat_interval, str(error)) from None


def _fixed_hours(expression: str) -> bool:
    fields = expression.split()
    if fields and fields[0].startswith("@"):
        return fields[0].lower() != "@hourly"
    hour = fields[2] if len(fields) == 6 else fields[1] if len(fields) == 5 else "*"
    return "*" not in hour


def next_runs(repeat_interval: str, after_ms: int, count: int) -> list[int]:
    """The next ``count`` run times, for showing a schedule to a person."""
    runs: list[int] = []
    cursor = after_ms
    for _ in range(count):
        cursor = next_run_ms(repeat_interval, cursor)
        runs.append(cursor)
    return runs


def describe(repeat_interval: str) -> str:
    """A short English rendering of common schedules; falls back to the expression itself."""
    expression, zone = _split(repeat_interval)
    suffix = f" ({zone})" if zone else " (UTC)"
    words = _describe_expression(expression)
    return words + suffix


def _describe_expression(expression: str) -> str:
    macro_words = {
        "@yearly": "once a year, at midnight on 1 January",
        "@annually": "once a year, at midnight on 1 January",
        "@monthly": "at midnight on the first of every month",
        "@weekly": "at midnight every Sunday",
        "@daily": "every day at midnight",
        "@midnight": "every day at midnight",
        "@hourly": "at the start of every hour",
    }
    lowered = expression.strip().lower()
    if lowered in macro_words:
        return macro_words[lowered]
    fields = expression.split()
    seconds = "0"
    if len(fields) == 6:
        seconds, fields = fields[0], fields[1:]
    if len(fields) != 5:
        return expression
    minute, hour, dom, month, dow = fields
    rest_any = dom == "*" and month == "*" and dow == "*"
    if seconds.startswith("*/") and minute == "*" and hour == "*" and rest_any:
        return f"every {seconds[2:]} seconds"
    if seconds == "*" and minute == "*" and hour == "*" and rest_any:
        return "every second"
    if seconds == "0" and rest_any:
        if minute == "*" and hour == "*":
            return "every minute"
        if minute.startswith("*/") and hour == "*":
            return f"every {minute[2:]} minutes"
        if minute.isdigit() and hour == "*":
            return f"every hour at minute {int(minute)}"
        if minute.isdigit() and hour.isdigit():
            return f"every day at {int(hour):02d}:{int(minute):02d}"
        if minute.isdigit() and hour.startswith("*/"):
            return f"every {hour[2:]} hours at minute {int(minute)}"
    days = {"0": "Sunday", "1": "Monday", "2": "Tuesday", "3": "Wednesday", "4": "Thursday",
            "5": "Friday", "6": "Saturday", "7": "Sunday"}
    if seconds == "0" and minute.isdigit() and hour.isdigit() and dom == "*" and month == "*" and dow in days:
        return f"every {days[dow]} at {int(hour):02d}:{int(minute):02d}"
    return f"cron {expression}"

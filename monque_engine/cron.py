"""Cron schedules: 5 fields, 6 with seconds first, @macros, and an optional time zone.

Upstream evaluates cron in the server's local time, which silently shifts schedules when
servers move. We evaluate in UTC unless a zone is given, and persist the zone inside
``repeatInterval`` as the conventional ``CRON_TZ=<zone> <expression>`` prefix so the stored
document stays in Monque's schema.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING

from .errors import InvalidCronError, InvalidJobQueryError
from .timeutil import datetime_to_ms, in_range, ms_to_datetime

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from croniter import croniter


def _croniter() -> tuple[type[croniter], type[Exception]]:
    """croniter and its bad-date error, imported on the first schedule read rather than with
    the engine: with dateutil it costs ~10 ms, which a console that shows no schedule
    paid before its first rows (issue 40: launch to first rows)."""
    from croniter import CroniterBadDateError, croniter

    return croniter, CroniterBadDateError


#: Node Monque's parser (cron-parser 5) predefined set, plus @midnight (Vixie cron's).
MACROS: dict[str, str] = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
    "@minutely": "* * * * *",
    "@secondly": "* * * * * *",
    "@weekdays": "0 0 * * 1-5",
    "@weekends": "0 0 * * 0,6",
}
_TZ_PREFIX = "CRON_TZ="
#: (low, high) of each field of a 6-field expression, as cron-parser bounds them.
_RANGES = ((0, 59), (0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_NAMES = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1
    )
}
_DAYS = {name: number for number, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_ALIAS = re.compile(r"[a-z]{3}", re.IGNORECASE)
#: Characters each field may hold once names are numbers (cron-parser's own sets; W is
#: newer cron-parser's "nearest weekday", which croniter also evaluates).
_VALID = (
    re.compile(r"[?,*\d/H-]+"),
    re.compile(r"[?,*\d/H-]+"),
    re.compile(r"[?,*\d/H-]+"),
    re.compile(r"[?,*\dLWH/-]+"),
    re.compile(r"[?,*\d/H-]+"),
    re.compile(r"[?,*\dLH#/-]+"),
)
_LAST_WEEKDAY = re.compile(r"(\d)L")
_RANGE = re.compile(r"(\d+)-(\d+)")


def _split(repeat_interval: str) -> tuple[str, str | None]:
    text = repeat_interval.strip()
    if text.startswith(_TZ_PREFIX):
        zone, _, expression = text[len(_TZ_PREFIX) :].partition(" ")
        return expression.strip(), zone
    return text, None


def _zone(name: str | None, original: str) -> ZoneInfo | None:
    if name is None:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # on the first zoned schedule (see _croniter)

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidCronError(
            original, f"unknown time zone {name!r} (use an IANA name such as Europe/Paris)"
        ) from None


def check_time_zone(tz: object, expression: str) -> str:
    """A zone key ``ZoneInfo`` can load, with nothing else in it (``"UTC 30"`` would otherwise
    end up as an extra cron field once stored as ``CRON_TZ=<zone> <expression>``)."""
    if not isinstance(tz, str) or not tz or any(ch.isspace() for ch in tz):
        raise InvalidCronError(
            expression, f"time zone {tz!r} is not a zone name (use an IANA name such as Europe/Paris, no spaces)"
        )
    _zone(tz, expression)
    return tz


#: cron-parser pads a short expression from the left with these (its ``defaults``): 5 fields
#: get seconds "0"; 4 fields read as "hour dom month dow" at minute 0, every second; 3 fields
#: as "dom month dow" in hour 0, every minute and second. Odd, but it is what a Node producer
#: stores and its workers run, so a Python worker must read them the same way.
_PAD = ("*", "*", "*", "*", "*", "0")


def _pad(fields: list[str]) -> list[str]:
    return [*_PAD[len(fields) :], *fields] if len(fields) < 6 else fields


def _fields(expression: str, original: str) -> list[str]:
    """The six fields (seconds first) of an expression or predefined name, names resolved,
    checked against the characters cron-parser allows, ``H`` replaced as cron-parser does."""
    text = expression.strip()
    if text.startswith("@"):
        macro = MACROS.get(text.lower())
        if macro is None:
            raise InvalidCronError(original, f"unknown macro {text!r} (known: {', '.join(MACROS)})")
        text = macro
    fields = text.split()
    if not fields:
        raise InvalidCronError(original, "the expression is empty")
    if not 3 <= len(fields) <= 6:
        # cron-parser pads 1-2 fields into a day of month or month of 0, which it refuses too.
        raise InvalidCronError(original, f"expected 5 or 6 fields, got {len(fields)}")
    fields = _pad(fields)
    for index in (4, 5):  # month and day-of-week names
        fields[index] = _ALIAS.sub(partial(_alias_match, index=index, original=original), fields[index])
    for index, field in enumerate(fields):
        if not _VALID[index].fullmatch(field):
            raise InvalidCronError(original, f"invalid characters in field {field!r}")
        for low_text, high_text in _RANGE.findall(field):
            if int(low_text) > int(high_text):  # croniter would wrap it; cron-parser refuses it
                raise InvalidCronError(original, f"range {low_text}-{high_text} in {field!r} goes backwards")
        if "H" in field:  # cron-parser: one random value in the field's range, drawn per parse
            low, high = _RANGES[index]
            fields[index] = field.replace("H", str(random.randint(low, high)))
        if "?" in fields[index]:
            fields[index] = fields[index].replace("?", "*")
    return fields


def _alias_match(match: re.Match[str], *, index: int, original: str) -> str:
    return _alias(match.group(0), index, original)


def _alias(name: str, index: int, original: str) -> str:
    number = (_NAMES if index == 4 else _DAYS).get(name.lower())
    if number is None:
        what = "month" if index == 4 else "day of the week"
        raise InvalidCronError(original, f"{name!r} is not a {what} name")
    return str(number)


@dataclass(frozen=True, slots=True)
class _Part:
    """One croniter expression of the union, and the week of the month (``#n``) its days
    must also fall in when croniter cannot say so itself (``None``: no such limit)."""

    text: str
    week: int | None = None


def _croniter_expressions(fields: list[str], original: str) -> list[_Part]:
    """croniter spellings of the fields, as a union: the next run is the earliest of them.

    cron-parser's ``5L`` (last Friday) is croniter's ``L5``; croniter cannot mix plain days
    with last-weekdays in one list, so such a list becomes one expression per kind. When
    both day fields are restricted, cron-parser (like Vixie cron) runs on either; croniter
    turns that into "both" once ``L`` or ``#`` is involved, so each day field gets its own
    expression. Splitting is exact because the rule is an OR.

    ``#n`` is the one place where cron-parser is not an OR: after the day fields match, it
    also requires the day to lie in the n-th week of the month (days 7n-6 to 7n), so
    ``15 * MON#2`` never runs on the 15th, and ``* * *#2`` runs on days 8 to 14.
    """
    head, dom, month, dow = fields[:3], fields[3], fields[4], fields[5]
    week: int | None = None
    if "#" in dow:
        dow, week = _nth_weekday(dow, original)
        if dow == "*":  # every weekday (so any day of month too), limited to one week
            days = _week_range(week)
            return [_Part(" ".join([*head, f"{days.start}-{days.stop - 1}", month, "*"]))]
    items = dow.split(",")
    last = [_LAST_WEEKDAY.sub(lambda m: f"L{int(m.group(1)) % 7}", item) for item in items if "L" in item]
    plain = [item for item in items if "L" not in item]
    dows = [",".join(group) for group in (plain, last) if group]
    parts: list[_Part] = []
    if dom != "*" and dow != "*":
        if week is None:
            parts.append(_Part(" ".join([*head, dom, month, "*"])))
        elif "L" in dom or "W" in dom:
            parts.append(_Part(" ".join([*head, dom, month, "*"]), week))
        elif days_in_week := _dom_in_week(dom, week):
            parts.append(_Part(" ".join([*head, days_in_week, month, "*"])))
        dom = "*"
    for variant in dows:
        if week is None:
            parts.append(_Part(" ".join([*head, dom, month, variant])))
        elif variant.isdigit():  # croniter reads "d#n" itself
            parts.append(_Part(" ".join([*head, dom, month, f"{variant}#{week}"])))
        else:
            parts.append(_Part(" ".join([*head, dom, month, variant]), week))
    return parts


def _nth_weekday(dow: str, original: str) -> tuple[str, int]:
    """Split ``MON#2`` (names already numbers) as cron-parser does, with its refusals."""
    base, _, nth = dow.partition("#")
    if clash := re.search(r"[,/-]", dow):
        raise InvalidCronError(original, f"'#' cannot be combined with {clash.group(0)!r} in the day of the week")
    if not nth.isdigit() or not 1 <= int(nth) <= 5 or not base:
        raise InvalidCronError(original, f"{dow!r}: the occurrence after '#' must be 1 to 5, as in MON#2")
    return base, int(nth)


def _week_range(week: int) -> range:
    return range(7 * week - 6, min(7 * week, 31) + 1)


def _dom_in_week(dom: str, week: int) -> str:
    """The days of a numeric day-of-month field that lie in week ``week``, as a list
    (empty when none can: that half of the union never runs)."""
    low, high = _RANGES[3]
    days: set[int] = set()
    for item in dom.split(","):
        span, _, step_text = item.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else 1
        if span == "*":
            first, last = low, high
        elif "-" in span:
            start, _, end = span.partition("-")
            first, last = int(start), int(end)
        else:
            first = int(span)
            last = high if step_text else first
        days.update(range(first, last + 1, step))
    return ",".join(str(day) for day in sorted(days) if day in _week_range(week))


def _iterators(expression: str, start: datetime, original: str) -> list[tuple[croniter, int | None]]:
    fields = _fields(expression, original)
    croniter, _ = _croniter()
    try:
        if "#" in fields[5]:  # '#' may narrow the day of month away; as written it must still be valid
            croniter(" ".join([*fields[:5], "*"]), start, second_at_beginning=True)
        return [
            (croniter(part.text, start, second_at_beginning=True), part.week)
            for part in _croniter_expressions(fields, original)
        ]
    except (ValueError, KeyError, TypeError) as error:
        raise InvalidCronError(original, str(error)) from None


#: How many candidate days a week-limited part (``L`` or ``W`` with ``#``) may skip before it
#: counts as never running; the rarest real match (the last day of a non-leap February in
#: week 4) comes within a few years of candidates, one a month.
_WEEK_SKIP_LIMIT = 400


def _next_in_week(it: croniter, week: int | None) -> datetime | None:
    candidate: datetime = it.get_next(datetime)
    if week is None:
        return candidate
    for _ in range(_WEEK_SKIP_LIMIT):
        if (candidate.day + 6) // 7 == week:
            return candidate
        it.set_current(candidate.replace(hour=23, minute=59, second=59, microsecond=0), force=True)
        candidate = it.get_next(datetime)
    return None


def build_repeat_interval(expression: str, tz: str | None = None) -> str:
    """Validate an expression (and zone) and return what to store in ``repeatInterval``."""
    if not isinstance(expression, str):
        raise InvalidCronError(str(expression), "the expression must be a string")
    if tz is not None:
        check_time_zone(tz, expression)
    stored = f"{_TZ_PREFIX}{tz} {expression.strip()}" if tz else expression.strip()
    next_run_ms(stored, 0)  # raises InvalidCronError with a hint
    return stored


#: Why a schedule that parses never runs (30 February, 31 April, or a week-limited part
#: that no month reaches).
_NEVER = "no date ever matches it (a day the months given do not have, such as 30 February)"


def next_run_ms(repeat_interval: str, after_ms: int) -> int:
    """The first run strictly after ``after_ms`` for a stored ``repeatInterval``.

    When clocks fall back, a fixed-hour schedule ("30 2 * * *") would meet its wall-clock
    time twice; like cron (Vixie, cronie) it runs once: a candidate whose local time is not
    later than the previous run's is skipped. Schedules with a wildcard hour keep running
    through the repeated hour.
    """
    if not isinstance(repeat_interval, str):
        raise InvalidCronError(repr(repeat_interval), "the stored schedule is not a string")
    expression, zone_name = _split(repeat_interval)
    zone = _zone(zone_name, repeat_interval)
    start = ms_to_datetime(after_ms).astimezone(zone or UTC)
    iterators = _iterators(expression, start, repeat_interval)
    _, bad_date = _croniter()
    skip_repeats = zone is not None and _fixed_hours(expression)
    try:
        runs = []
        for it, week in iterators:
            try:
                candidate = _next_in_week(it, week)
                while (
                    candidate is not None
                    and skip_repeats
                    and candidate.replace(tzinfo=None) <= start.replace(tzinfo=None)
                ):
                    candidate = _next_in_week(it, week)
            except bad_date:
                # One side of an OR that never matches ("30 2 MON": no 30 February, but every
                # Monday of February), which cron-parser accepts: the other parts decide.
                continue
            if candidate is not None:
                runs.append(datetime_to_ms(candidate))
        if not runs:
            raise InvalidCronError(repeat_interval, _NEVER)
        return min(runs)
    except InvalidCronError:
        raise
    except bad_date:  # croniter's own words ("failed to find next date") say nothing of why
        raise InvalidCronError(repeat_interval, _NEVER) from None
    except Exception as error:  # noqa: BLE001 - croniter raises several unrelated kinds for impossible dates
        raise InvalidCronError(repeat_interval, str(error)) from None


def get_next_cron_date(expression: str, current_date: datetime | None = None, tz: str | None = None) -> datetime:
    """Upstream's ``getNextCronDate``: the first run of ``expression`` strictly after
    ``current_date`` (default: now), as an aware UTC datetime.

    Evaluated in UTC, or in ``tz`` (an IANA zone) when given, as ``schedule()`` evaluates it.
    A naive ``current_date`` raises ``InvalidJobQueryError`` (which zone it means is
    unknowable), as a naive ``run_at`` does. Invalid expressions raise ``InvalidCronError``
    with a hint.
    """
    if current_date is None:
        after_ms = datetime_to_ms(datetime.now(UTC))
    elif not isinstance(current_date, datetime) or current_date.utcoffset() is None:
        raise InvalidJobQueryError(
            f"current_date must be a timezone-aware datetime (for example datetime.now(UTC)), got {current_date!r}"
        )
    else:
        after_ms = datetime_to_ms(current_date)
        if not in_range(after_ms):  # an offset can carry a datetime Python holds past the year 9999
            raise InvalidJobQueryError(
                f"current_date {current_date.isoformat()} is out of range: it must fall between the years 1 and "
                "9999 (UTC)"
            )
    return ms_to_datetime(next_run_ms(build_repeat_interval(expression, tz), after_ms))


def validate_cron_expression(expression: str, tz: str | None = None) -> None:
    """Upstream's ``validateCronExpression``: return quietly for an expression ``schedule()``
    accepts, raise ``InvalidCronError`` (with a hint) for any other."""
    build_repeat_interval(expression, tz)


def _fixed_hours(expression: str) -> bool:
    text = expression.strip()
    fields = _pad(MACROS.get(text.lower(), text).split())
    hour = fields[2] if len(fields) == 6 else "*"
    return "*" not in hour and "?" not in hour


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
        "@minutely": "every minute",
        "@secondly": "every second",
        "@weekdays": "at midnight, Monday to Friday",
        "@weekends": "at midnight on Saturdays and Sundays",
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
    days = {
        "0": "Sunday",
        "1": "Monday",
        "2": "Tuesday",
        "3": "Wednesday",
        "4": "Thursday",
        "5": "Friday",
        "6": "Saturday",
        "7": "Sunday",
    }
    if seconds == "0" and minute.isdigit() and hour.isdigit() and dom == "*" and month == "*" and dow in days:
        return f"every {days[dow]} at {int(hour):02d}:{int(minute):02d}"
    return f"cron {expression}"

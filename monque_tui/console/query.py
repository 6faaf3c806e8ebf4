"""What the jobs view shows: status, name, free text, time ranges and sort, and how a job is judged.

The same predicate the store applies in SQL is applied here to jobs arriving on the change
feed, so a changed job can be placed in (or dropped from) the loaded window without a query.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, NamedTuple

from monque_engine import Job, JobListFilter, JobSort, JobStatus
from monque_engine.errors import InvalidJobQueryError
from monque_engine.job import name_glob_regex
from monque_engine.payload_filter import DataTerm, describe_terms, parse_terms
from monque_engine.textsearch import fold, plain_text_contains, value_contains
from monque_engine.timeutil import MAX_MS, MIN_MS, datetime_to_ms

from .formatting import date_text

SortBy = Literal["created_at", "updated_at", "next_run_at"]
SORT_FIELDS: tuple[SortBy, ...] = ("created_at", "updated_at", "next_run_at")
#: What a view may be sorted by: the instants, and on the processing tab the run time (the
#: claim's ``locked_at``, issue 37: "what is stuck?" is one key away).
ListSort = Literal["created_at", "updated_at", "next_run_at", "locked_at"]
RUNNING_SORT: ListSort = "locked_at"
SORT_LABELS: dict[str, str] = {
    "created_at": "created",
    "updated_at": "updated",
    "next_run_at": "next run",
    "locked_at": "run time",
}
#: An id fragment: the store matches it as a prefix or a suffix of the id (the table shows the last 8).
_HEX = re.compile(r"[0-9a-f]{1,24}")
_INVERT = str.maketrans("0123456789abcdef", "fedcba9876543210")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
DAY_MS = 86_400_000
#: Anything typed outside timeutil's MIN_MS..MAX_MS (the instants a datetime can hold) is an error.
CALENDAR = "times must fall between 0001-01-01 and 9999-12-31 UTC"


def ms_datetime(ms: int) -> datetime:
    """Exactly ``ms`` (no float rounding), as an aware UTC datetime.

    Not ``timeutil.ms_to_datetime``: that one goes through a float of seconds, which is off
    by microseconds for instants centuries away, and a typed range end must stay exact."""
    return _EPOCH + timedelta(milliseconds=ms)


class TimeRange(NamedTuple):
    """An inclusive range on one of the job's instants; either end may be open."""

    field: SortBy
    start_ms: int | None = None
    end_ms: int | None = None

    def contains(self, job: Job) -> bool:
        value: int = getattr(job, f"{self.field}_ms")
        if self.start_ms is not None and value < self.start_ms:
            return False
        return self.end_ms is None or value <= self.end_ms

    def describe(self, now_ms: int | None = None) -> str:
        """``created 10:00..12:00 UTC``, ``next run ..2026-12-01 UTC`` (a whole day reads as its date)."""
        label = SORT_LABELS[self.field]
        start, end = self.start_ms, self.end_ms
        if start is not None and end is not None and start % DAY_MS == 0 and end == start + DAY_MS - 1:
            return f"{label} on {_moment_text(start, now_ms)} UTC"
        # The time alone when every end is on today's date.
        today = now_ms // DAY_MS if now_ms is not None else None
        if any(ms // DAY_MS != today for ms in (start, end) if ms is not None):
            today = None
        low = "" if start is None else _moment_text(start, today)
        high = "" if end is None else _moment_text(end, today, end=True)
        return f"{label} {low}..{high} UTC"


def _moment_text(ms: int, today: int | None, end: bool = False) -> str:
    """As short as is exact: a date alone at a day boundary, the time alone on ``today`` (a day number)."""
    moment = ms_datetime(ms)
    if ms % DAY_MS == (DAY_MS - 1 if end else 0):
        return date_text(moment)
    time_text = moment.strftime("%H:%M")
    if ms % 60_000:
        time_text += moment.strftime(":%S")
        if ms % 1000:
            time_text += f".{ms % 1000:03d}"
    if today is not None and ms // DAY_MS == today:
        return time_text
    return f"{date_text(moment)} {time_text}"


class JobQuery(NamedTuple):
    """What the jobs table shows: status tab, name, search, sort, time ranges, text, error group and payload terms."""

    status: JobStatus | None = None
    name: str | None = None
    search: str | None = None
    sort_by: ListSort = "created_at"
    descending: bool = True
    #: At most one range per field, in SORT_FIELDS order.
    ranges: tuple[TimeRange, ...] = ()
    #: Payload or error text contains this (``JobListFilter.text``; ASCII case ignored).
    text: str | None = None
    #: Only the failed and retrying jobs of one error group (``ErrorGroup.key``) ...
    error_group: str | None = None
    #: ... and how the errors view named it (``Type: pattern``), for the header and confirmations.
    group_label: str | None = None
    #: Payload conditions, all of which must hold (``data.customer_id missing``; see
    #: ``monque_engine.payload_filter``), typed in the bar's "when" field after the ranges.
    data: tuple[DataTerm, ...] = ()

    # -- store forms ---------------------------------------------------------------------
    def range_for(self, field: SortBy) -> TimeRange | None:
        return next((r for r in self.ranges if r.field == field), None)

    def _bound(self, field: SortBy, end: bool) -> datetime | None:
        time_range = self.range_for(field)
        ms = None if time_range is None else (time_range.end_ms if end else time_range.start_ms)
        return None if ms is None else ms_datetime(ms)

    def list_filter(self) -> JobListFilter:
        bound = self._bound
        glob = self.name_is_glob
        return JobListFilter(
            name=None if glob else self.name,
            name_pattern=self.name if glob else None,
            status=self.status,
            search=self.search,
            text=self.text,
            error_group=self.error_group,
            data=self.data or None,
            created_at_from=bound("created_at", False),
            created_at_to=bound("created_at", True),
            updated_at_from=bound("updated_at", False),
            updated_at_to=bound("updated_at", True),
            next_run_at_from=bound("next_run_at", False),
            next_run_at_to=bound("next_run_at", True),
        )

    def sort(self) -> JobSort:
        return JobSort(by=self.sort_by, direction="desc" if self.descending else "asc")

    @property
    def name_is_glob(self) -> bool:
        """The name field holds a glob (``email*``, ``report-?``): a plain name stays an exact match."""
        return self.name is not None and is_glob(self.name)

    def name_matches(self, name: str) -> bool:
        """Whether a job name is one this view shows (exactly, or by the glob)."""
        if self.name is None:
            return True
        if self.name_is_glob:
            return _glob(self.name).match(name) is not None
        return name == self.name

    def unknown_name_hint(self, known: Sequence[str]) -> str | None:
        """Why an empty view may be empty: the name filter names no job in the store.

        The name field is an exact match (a glob only with ``*``/``?``), so typing ``email`` and
        Enter, where ``email.send`` was offered, showed "No jobs match this view" and nothing
        to tell a typo or a prefix from an empty queue. None when the name is known, is a glob,
        or the store's names are not read yet.
        """
        name = self.name
        if name is None or self.name_is_glob or not known or name in known:
            return None
        starting = [n for n in known if n.startswith(name)]
        if starting:
            return (
                f"No job is named {name!r}; names starting with it: {_some(starting)} "
                f"(/ then Tab completes; {name}* shows all)"
            )
        # Tab and ``NAME*`` are case-sensitive too: offering them here would show nothing.
        folded = name.casefold()
        other_case = [n for n in known if n.casefold().startswith(folded)]
        if other_case:
            return f"No job is named {name!r}; names are case-sensitive, and these start with it: {_some(other_case)}"
        return f"No job is named {name!r} in this store (names are exact; / then Tab completes a known one)"

    def search_hint(self) -> str | None:
        """Why a view with an id/key filter may be empty: what the id/key field matches.

        Seven of the eight characters the table shows once matched nothing, with no word of
        why. None without an id/key filter."""
        if not self.search:
            return None
        text = self.search.strip()
        lowered = text.lower()
        if _HEX.fullmatch(lowered) and len(lowered) < SHOWN_ID_PART:
            return (
                f"No job of this view has an id starting or ending with {text!r}, or a unique key containing it; "
                f"type at least {SHOWN_ID_PART} of the 8 id characters the table shows"
            )
        if _HEX.fullmatch(lowered):
            return (
                f"No job of this view has {text!r} at the start of its id or among the 8 characters the table "
                "shows, or in its unique key"
            )
        return f"No job of this view has a unique key containing {text!r} (ids are hex: 0-9, a-f)"

    # -- changes -----------------------------------------------------------------------------
    def with_status(self, status: JobStatus | None) -> JobQuery:
        if self.sort_by == RUNNING_SORT and status is not JobStatus.PROCESSING:
            return self._replace(status=status, sort_by="created_at")  # only running jobs have a run time
        return self._replace(status=status)

    def next_sort(self) -> JobQuery:
        """created → updated → next run (→ run time, on the processing tab, longest first) → created."""
        fields: tuple[ListSort, ...] = SORT_FIELDS
        if self.status is JobStatus.PROCESSING:
            fields = (*SORT_FIELDS, RUNNING_SORT)
        index = (fields.index(self.sort_by) + 1) % len(fields) if self.sort_by in fields else 0
        chosen = fields[index]
        if chosen == RUNNING_SORT:
            return self._replace(sort_by=chosen, descending=False)  # the earliest claim: the longest run first
        if self.sort_by == RUNNING_SORT:
            # Past the run time the cycle is back where it began, newest first: it kept the run
            # time's ascending order and came back as "ID ↑" (a docs probe).
            return self._replace(sort_by=chosen, descending=True)
        return self._replace(sort_by=chosen)

    def reversed(self) -> JobQuery:
        return self._replace(descending=not self.descending)

    def with_ranges(self, ranges: tuple[TimeRange, ...]) -> JobQuery:
        ordered = tuple(sorted(ranges, key=lambda r: SORT_FIELDS.index(r.field)))
        return self._replace(ranges=ordered)

    @property
    def is_empty(self) -> bool:
        return (
            self.status is None
            and not self.name
            and not self.search
            and not self.ranges
            and not self.text
            and not self.error_group
            and not self.data
        )

    @property
    def scans(self) -> bool:
        """No index serves the view ("contains" text, payload terms): counts and pages are read
        in steps, with progress and a stop (ADR 0008)."""
        return bool(self.text or self.data)

    @property
    def has_filter(self) -> bool:
        """Anything the filter bar sets (Esc clears it)."""
        return bool(self.name or self.search or self.ranges or self.text or self.error_group or self.data)

    # -- judging a job ----------------------------------------------------------------------
    def matches(self, job: Job) -> bool:
        if self.status is not None and job.status is not self.status:
            return False
        if self.name is not None and not self.name_matches(job.name):
            return False
        if self.search:
            text = self.search.strip()
            lowered = text.lower()
            by_id = job.id.startswith(lowered) or (
                _HEX.fullmatch(lowered) is not None and id_tail_matches(job.id, lowered)
            )
            if not (by_id or (job.unique_key is not None and text in job.unique_key)):
                return False
        if self.error_group is not None and not in_error_group(job, self.error_group):
            return False
        if self.text and not text_matches(job, self.text):
            return False
        if self.data and not data_matches(job, self.data):
            return False
        return all(time_range.contains(job) for time_range in self.ranges)

    def order_key(self, job: Job) -> tuple[Any, ...]:
        """Ascending order of this key is display order (ties broken by id, as the store does)."""
        value: int = getattr(job, f"{self.sort_by}_ms") or 0  # a run time only while processing
        if self.descending:
            return (-value, job.id.translate(_INVERT))
        return (value, job.id)

    def describe(self, now_ms: int | None = None) -> str:
        parts = [self.status.value if self.status else "all"]
        if self.name:
            parts.append(f"names {self.name!r}" if self.name_is_glob else f"named {self.name!r}")
        if self.search:
            parts.append(f"matching {self.search!r}")
        if self.text:
            parts.append(f"containing {self.text!r}")
        if self.error_group:
            parts.append(f"in error group {(self.group_label or self.error_group)!r}")
        if self.data:
            parts.append(f"where {describe_terms(self.data)}")
        text = " ".join(parts)
        for time_range in self.ranges:
            text += f", {time_range.describe(now_ms)}"
        return text


#: The store finds this many hex digits in a row anywhere in the 8 the table shows (an id's last 8).
SHOWN_ID_PART = 4


def id_tail_matches(job_id: str, fragment: str) -> bool:
    """The store's id-tail predicate: the id ends with ``fragment``, or 4-8 hex digits lie in its last 8."""
    if SHOWN_ID_PART <= len(fragment) <= 8:
        return fragment in job_id[-8:]
    return job_id.endswith(fragment)


def is_glob(name: str) -> bool:
    """``*`` or ``?`` make a name filter a glob (the engine's ``JobListFilter.name_pattern``)."""
    return "*" in name or "?" in name


def _some(names: Sequence[str]) -> str:
    """The first three names, and how many more."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


@functools.lru_cache(maxsize=32)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(name_glob_regex(pattern))


def in_error_group(job: Job, key: str) -> bool:
    """The store's member predicate: failed, or pending with a failure behind it, in group ``key``."""
    if job.error_group != key:
        return False
    return job.status is JobStatus.FAILED or (job.status is JobStatus.PENDING and job.fail_count > 0)


def text_matches(job: Job, text: str) -> bool:
    """The store's text predicate (``monque_engine.textsearch``), for jobs arriving on the feed:
    failReason, error type or a payload value contains ``text`` as typed, ASCII case ignored.
    A row without its payload (listings leave it out) is judged on the error text alone;
    the next reload corrects it."""
    if not text:
        return True
    folded = fold(text)
    if plain_text_contains(job.fail_reason, folded) or plain_text_contains(job.error_type, folded):
        return True
    return job.data is not None and value_contains(job.data, folded)


def data_matches(job: Job, terms: tuple[DataTerm, ...]) -> bool:
    """The store's payload predicate (``DataTerm.matches``), for jobs arriving on the feed. A
    row without its payload (listings leave it out) is kept; the next reload corrects it."""
    return job.data is None or all(term.matches(job.data) for term in terms)


_OFFSET = re.compile(r"^\+\s*(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


class WhenError(ValueError):
    pass


#: An ISO reschedule time this far behind the clock still counts as "now" (the current minute typed).
PAST_GRACE = timedelta(minutes=1)


def parse_when(text: str, now_ms: int) -> datetime:
    """ "+10m", "+2h", "+1d", "now", or an ISO time (UTC unless it names an offset)."""
    value = text.strip().lower()
    now = datetime.fromtimestamp(now_ms / 1000, UTC)
    if value == "now":
        return now
    match = _OFFSET.match(value)
    if match:
        try:
            return now + timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])
        except OverflowError:
            raise WhenError(f"{text.strip()!r} is out of range: {CALENDAR}; try +10m, +2h or +1d") from None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise WhenError(
            f"Cannot read {text!r} as a time; type +10m, +2h, +1d, now, or an ISO time like 2030-01-02T15:04"
        ) from None
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    if not MIN_MS <= datetime_to_ms(moment) <= MAX_MS:  # as UTC (an offset can carry it past 9999)
        raise WhenError(f"{text.strip()!r} is out of range in UTC: {CALENDAR}; try +10m, +2h or +1d")
    if moment < now - PAST_GRACE:
        # It was taken, and the jobs ran at once: a typo in the year or the day should not do
        # that in silence. A moment within the grace is "now" typed as a clock time.
        raise WhenError(
            f"{text.strip()!r} is in the past (it is now {now:%Y-%m-%d %H:%M} UTC); "
            "type now to run at once, or a later time such as +10m"
        )
    return moment


# -- time ranges typed in the filter bar ------------------------------------------------------------
#: The syntax, for placeholders, errors and help.
RANGE_EXAMPLE = "created -2h..  updated today  next now..+1h"
RANGE_PLACEHOLDER = "created -2h..  next now..+1h  (no offset = UTC)"
INSTANT_FORMS = "2026-12-01, 2026-12-01 10:00 (UTC; Z/+01:00 ok), -30m, -2h, -7d, +1h, now, today"
RANGE_HINT = f"created|updated|next FROM..TO · times: {INSTANT_FORMS} · then payload: data.KEY missing|exists|= VALUE"
_FIELD_WORD = re.compile(r"\b(created|updated|next(?:[ _-]?run)?)\b\s*:?", re.IGNORECASE)
_RELATIVE = re.compile(r"^([+-])\s*(\d+(?:\.\d+)?)\s*([smhdw])$")
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FIELD_OF_WORD: dict[str, SortBy] = {"created": "created_at", "updated": "updated_at", "next": "next_run_at"}


class RangeError(WhenError):
    pass


def _instant(text: str, label: str, now_ms: int, *, end: bool) -> int:
    """One end of a range, in ms. A date (or today) as the end of a range means the end of that day."""
    value = text.strip()
    lowered = value.lower()
    if lowered == "now":
        return now_ms
    if lowered == "today":
        start = now_ms - now_ms % DAY_MS
        return start + DAY_MS - 1 if end else start
    match = _RELATIVE.match(lowered)
    if match:
        sign = 1 if match.group(1) == "+" else -1
        try:
            ms = now_ms + sign * round(float(match.group(2)) * _UNITS[match.group(3)] * 1000)
        except OverflowError:
            ms = MAX_MS + 1
        if not MIN_MS <= ms <= MAX_MS:
            raise RangeError(f"{label}: {value!r} is out of range; {CALENDAR}")
        return ms
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise RangeError(f"{label}: cannot read {value!r}; use {INSTANT_FORMS}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    ms = datetime_to_ms(moment)
    if end and _DATE_ONLY.match(value):
        ms += DAY_MS - 1
    if not MIN_MS <= ms <= MAX_MS:  # an offset moves 0001-01-01 or 9999-12-31 out of what a datetime holds
        raise RangeError(f"{label}: {value!r} is out of range in UTC; {CALENDAR}")
    return ms


def _one_range(field: SortBy, text: str, now_ms: int) -> TimeRange:
    label = SORT_LABELS[field]
    body = text.strip().strip(",;").strip()
    if not body:
        raise RangeError(f"{label}: give a range FROM..TO (either end may be left out), e.g. {label} -2h..")
    if ".." in body:
        low, high = (part.strip() for part in body.split("..", 1))
        if not low and not high:
            raise RangeError(f"{label}: '..' needs a start, an end or both, e.g. {label} -2h..now")
        start = _instant(low, label, now_ms, end=False) if low else None
        stop = _instant(high, label, now_ms, end=True) if high else None
    elif _RELATIVE.match(body.lower()):
        # "-2h": the last two hours; "+1h": the next hour.
        moment = _instant(body, label, now_ms, end=False)
        start, stop = min(moment, now_ms), max(moment, now_ms)
    elif body.lower() == "today" or _DATE_ONLY.match(body):
        # A date alone: that whole day.
        start, stop = _instant(body, label, now_ms, end=False), _instant(body, label, now_ms, end=True)
    else:
        raise RangeError(f"{label}: {body!r} is one instant; write a range FROM..TO, e.g. {label} {body}..")
    if start is not None and stop is not None and start > stop:
        raise RangeError(f"{label}: the range ends before it starts ({body}); write the earlier time first")
    return TimeRange(field, start, stop)


def parse_ranges(text: str, now_ms: int) -> tuple[TimeRange, ...]:
    """``created -2h..  updated 2026-12-01..today  next now..+1h`` → one TimeRange per field named.

    Each end is an ISO date or time (UTC unless it names an offset), a relative time (-2h, -30m,
    -7d, +1h from now), ``now`` or ``today``; a date as the end of a range includes that whole day.
    A single relative time spans it and now; a single date is that day. Relative times are
    resolved once, when the range is applied.
    """
    matches = list(_FIELD_WORD.finditer(text))
    if not text.strip():
        return ()
    if not matches or text[: matches[0].start()].strip(" ,;"):
        raise RangeError(f"Start with created, updated or next, then FROM..TO, e.g. {RANGE_EXAMPLE}")
    ranges: dict[SortBy, TimeRange] = {}
    for index, match in enumerate(matches):
        word = match.group(1).lower()
        field = _FIELD_OF_WORD["next" if word.startswith("next") else word]
        stop = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        if field in ranges:
            raise RangeError(f"{SORT_LABELS[field]} is given twice; give one range per time")
        ranges[field] = _one_range(field, text[match.end() : stop], now_ms)
    return tuple(ranges[f] for f in SORT_FIELDS if f in ranges)


#: Where payload terms start in the "when" field: ``data.`` at the start or after a space,
#: comma or semicolon (``created -2h..  data.customer_id missing``).
_DATA_START = re.compile(r"(?<![^\s,;])data\.", re.IGNORECASE)
WHERE_EXAMPLE = "created -2h..  data.customer_id missing"


def parse_where(text: str, now_ms: int) -> tuple[tuple[TimeRange, ...], tuple[DataTerm, ...]]:
    """The "when" field: time ranges, then payload terms (``monque_engine.payload_filter``).

    ``created -2h..  data.customer_id missing, data.tenant = acme``: everything from the
    first ``data.`` on is payload terms (a value may be any word, ``created`` too, so ranges
    come first). A term that does not parse is a ``RangeError`` with the engine's reason.
    """
    start = _DATA_START.search(text)
    if start is None:
        return parse_ranges(text, now_ms), ()
    before, terms = text[: start.start()], text[start.start() :]
    ranges = parse_ranges(before, now_ms) if before.strip(" ,;") else ()
    try:
        return ranges, parse_terms(terms)
    except InvalidJobQueryError as error:
        raise RangeError(str(error)) from None

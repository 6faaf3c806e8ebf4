"""Turn public selector / filter arguments into validated store-level ones."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..errors import InvalidJobQueryError
from ..job import STATUS_BY_VALUE, JobListFilter, JobSelector, JobStatus, StatusArg
from ..payload_filter import check_terms
from ..selector_rules import check_filter_value
from ..store.values import StoreListFilter, StoreSelector
from ..timeutil import datetime_to_ms, in_range


def parse_statuses(status: StatusArg) -> tuple[JobStatus, ...] | None:
    if status is None:
        return None
    if isinstance(status, str):
        values: Sequence[JobStatus | str] = [status]
    elif isinstance(status, list | tuple | set | frozenset):
        values = list(status)
    else:
        raise InvalidJobQueryError(
            f"status must be a job status or a list of them, got {type(status).__name__}; "
            f"use one of {', '.join(s.value for s in JobStatus)}"
        )
    parsed: list[JobStatus] = []
    for value in values:
        key = value.value if isinstance(value, JobStatus) else value
        if not isinstance(key, str) or key not in STATUS_BY_VALUE:
            raise InvalidJobQueryError(
                f"Unknown job status {value!r}; use one of {', '.join(s.value for s in JobStatus)}"
            )
        parsed.append(STATUS_BY_VALUE[key])
    return tuple(dict.fromkeys(parsed))


def _ms(value: datetime | None, field: str) -> int | None:
    """A datetime bound as ms; refused unless aware and within the years 1-9999 in UTC (an
    offset can move a datetime Python holds, such as 0001-01-01T00:00+05:00, out of that
    range: the MongoDB store could not build its query, and no stored instant lies there)."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidJobQueryError(f"{field} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:  # Python's test for naive
        raise InvalidJobQueryError(f"{field} must be timezone-aware (for example datetime.now(UTC))")
    ms = datetime_to_ms(value)
    if not in_range(ms):
        raise InvalidJobQueryError(
            f"{field} {value.isoformat()} is out of range: it must fall between the years 1 and 9999 (UTC)"
        )
    return ms


def name_filter(name: str | None) -> str | None:
    """A job-name scope: ``None`` (every name) or a name to match exactly, checked by
    ``selector_rules.check_filter_value``: an empty string is refused as upstream's
    ``parseJobNameFilter`` does, and so are a blank one and one with a control character
    (no job name holds either: each is a caller's mistake, such as an unset form field)."""
    return check_filter_value(name, "name")


def to_store_selector(selector: JobSelector | None, statuses: tuple[JobStatus, ...] | None = None) -> StoreSelector:
    # Only None means "no selector": a falsy value of another type (False, 0, "", []) is a
    # caller's mistake and must not widen a bulk call to every job (as upstream refuses it).
    selector = JobSelector() if selector is None else selector
    if not isinstance(selector, JobSelector):
        raise InvalidJobQueryError(
            f"Pass a JobSelector(name=…, status=…, older_than=…, newer_than=…), not {type(selector).__name__}"
        )
    return StoreSelector(
        name=name_filter(selector.name),
        statuses=statuses if statuses is not None else parse_statuses(selector.status),
        created_before_ms=_ms(selector.older_than, "older_than"),
        created_after_ms=_ms(selector.newer_than, "newer_than"),
        updated_before_ms=_ms(selector.updated_before, "updated_before"),
        error_group=_group(selector.error_group),
        text=_text(selector.text),
    )


def to_store_filter(filter: JobListFilter | None) -> StoreListFilter:
    filter = JobListFilter() if filter is None else filter  # as above: only None means "every job"
    if not isinstance(filter, JobListFilter):
        raise InvalidJobQueryError(
            f"Pass a JobListFilter(name=…, status=…, created_at_from=…, …), not {type(filter).__name__}"
        )
    return StoreListFilter(
        name=name_filter(filter.name),
        statuses=parse_statuses(filter.status),
        created_from_ms=_ms(filter.created_at_from, "created_at_from"),
        created_to_ms=_ms(filter.created_at_to, "created_at_to"),
        updated_from_ms=_ms(filter.updated_at_from, "updated_at_from"),
        updated_to_ms=_ms(filter.updated_at_to, "updated_at_to"),
        next_run_from_ms=_ms(filter.next_run_at_from, "next_run_at_from"),
        next_run_to_ms=_ms(filter.next_run_at_to, "next_run_at_to"),
        search=_search(filter.search),
        recurring=_recurring(filter.recurring),
        text=_text(filter.text),
        error_group=_group(filter.error_group),
        name_pattern=_pattern(filter.name_pattern),
        data=check_terms(filter.data),
    )


#: Longer search text cannot be sensible and would only make every comparison slower.
MAX_TEXT_CHARS = 500


def _text(text: str | None) -> str | None:
    """A text search, searched exactly as given (``textsearch``): inner whitespace is text
    like any other, and so is a tab or a newline inside it. ``None`` means "no text filter";
    empty or blank text, a NUL or an unpaired surrogate is refused (``selector_rules``: a given
    filter must filter)."""
    text = check_filter_value(text, "text", as_typed=True)
    if text is not None and len(text) > MAX_TEXT_CHARS:
        raise InvalidJobQueryError(f"text search is {len(text)} characters long; search for at most {MAX_TEXT_CHARS}")
    return text


def _search(search: str | None) -> str | None:
    """An id prefix / suffix or a unique-key substring; surrounding whitespace is ignored. Empty,
    blank or control-character text is refused (``selector_rules``): no id or unique key holds
    a control character (``validate_unique_key``), and SQLite's ``LIKE`` stops reading its
    pattern at a NUL, so an id followed by a NUL matched that job."""
    return check_filter_value(search, "search", trimmed=True)


def _recurring(recurring: bool | None) -> bool | None:
    if recurring is None or isinstance(recurring, bool):
        return recurring
    raise InvalidJobQueryError(f"recurring must be True, False or None, got {type(recurring).__name__} {recurring!r}")


def _group(key: str | None) -> str | None:
    """An ``ErrorGroup.key``: ``None`` or non-empty text (``selector_rules``)."""
    return check_filter_value(key, "error_group")


def _pattern(pattern: str | None) -> str | None:
    """A name glob of at most ``MAX_TEXT_CHARS`` (``*`` and ``?`` are wildcards), checked by
    ``selector_rules`` (SQLite's GLOB stops reading at a NUL: "a\\x00z" matched every name "a…")."""
    pattern = check_filter_value(pattern, "name_pattern")
    if pattern is not None and len(pattern) > MAX_TEXT_CHARS:
        raise InvalidJobQueryError(f"name_pattern is {len(pattern)} characters long; use at most {MAX_TEXT_CHARS}")
    return pattern

"""Turn public selector / filter arguments into validated store-level ones."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from ..errors import InvalidJobQueryError
from ..job import STATUS_BY_VALUE, JobListFilter, JobSelector, JobStatus, StatusArg
from ..store.values import StoreListFilter, StoreSelector
from ..timeutil import datetime_to_ms


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
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidJobQueryError(f"{field} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:  # Python's test for naive
        raise InvalidJobQueryError(f"{field} must be timezone-aware (for example datetime.now(UTC))")
    return datetime_to_ms(value)


def _name(name: str | None, field: str = "name") -> str | None:
    if name is not None and not isinstance(name, str):
        raise InvalidJobQueryError(f"{field} must be a string, got {type(name).__name__}")
    if name is not None and not name.isascii():
        try:
            name.encode()
        except UnicodeEncodeError:  # a lone surrogate: no stored text can match it, and sqlite3 cannot bind it
            raise InvalidJobQueryError(f"{field} {name!r} is not valid Unicode text (unpaired surrogate)") from None
    return name


def name_filter(name: str | None) -> str | None:
    """A job-name scope: ``None`` (every name) or a non-empty string. An empty string is
    refused as upstream's ``parseJobNameFilter`` does: it can match no job, so it is always a
    caller's mistake (an unset form field), and on a bulk call it would silently do nothing."""
    name = _name(name)
    if name == "":
        raise InvalidJobQueryError("name filter must be a non-empty string; pass None to select every job name")
    return name


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
    )


#: Longer search text cannot be sensible and would only make every comparison slower.
MAX_TEXT_CHARS = 500
#: C0 and C1 control characters (as ``validation``'s rule for names and unique keys).
_CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f]")


def _text(text: str | None) -> str | None:
    """A text search, searched exactly as given (``textsearch``): whitespace, a tab or a
    newline is text like any other. Only ``None`` and ``""`` mean "no text filter".

    A NUL is refused: SQLite's ``LIKE`` stops reading its pattern at one, so ``"\\x00x"``
    matched every job (and a bulk delete with it deleted them all); one rule serves both
    stores. Every other character is matched as itself."""
    if text is None:
        return None
    text = _name(text, "text")
    assert text is not None
    if "\x00" in text:
        raise InvalidJobQueryError(
            f"text search {text[:40]!r} holds a NUL character (\\x00), which cannot be searched for; "
            "search for the text around it"
        )
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidJobQueryError(f"text search is {len(text)} characters long; search for at most {MAX_TEXT_CHARS}")
    return text or None


def _search(search: str | None) -> str | None:
    """An id prefix / suffix or a unique-key substring; surrounding whitespace is ignored and
    blank means "no search". Control characters are refused: no id or unique key holds one
    (``validate_unique_key``), and SQLite's ``LIKE`` stops reading its pattern at a NUL, so
    an id followed by a NUL matched that job."""
    search = _name(search, "search")
    if search is None:
        return None
    search = search.strip()
    if _CONTROL.search(search):
        raise InvalidJobQueryError(
            f"search {search[:40]!r} holds a control character; job ids and unique keys never do, so remove it"
        )
    return search or None


def _recurring(recurring: bool | None) -> bool | None:
    if recurring is None or isinstance(recurring, bool):
        return recurring
    raise InvalidJobQueryError(f"recurring must be True, False or None, got {type(recurring).__name__} {recurring!r}")


def _group(key: str | None) -> str | None:
    if key is None:
        return None
    if not isinstance(key, str) or not key.strip():
        raise InvalidJobQueryError(f"error_group must be an ErrorGroup.key (a non-empty string), got {key!r}")
    return _name(key, "error_group")


def _pattern(pattern: str | None) -> str | None:
    """A name glob: a non-empty string of at most ``MAX_TEXT_CHARS`` (``*`` and ``?`` are wildcards)."""
    if pattern is None:
        return None
    if not isinstance(pattern, str) or not pattern:
        raise InvalidJobQueryError(f"name_pattern must be a non-empty glob such as 'email*', got {pattern!r}")
    if len(pattern) > MAX_TEXT_CHARS:
        raise InvalidJobQueryError(f"name_pattern is {len(pattern)} characters long; use at most {MAX_TEXT_CHARS}")
    if _CONTROL.search(pattern):  # SQLite's GLOB stops reading at a NUL: "a\x00z" matched every name "a…"
        raise InvalidJobQueryError(
            f"name_pattern {pattern[:40]!r} holds a control character; job names never do, so remove it"
        )
    return _name(pattern, "name_pattern")

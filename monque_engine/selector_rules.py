"""The rule for what a selector or a filter selects: a field that is given must filter.

A ``JobSelector`` or ``JobListFilter`` field left at ``None`` does not filter; a field that
is set narrows the selection, always. Before this rule an empty or blank value (``""``,
``" "``, ``"\\t"``) was read as "no filter" by the engine, so a deploy script whose
``$PATTERN`` came out empty ran ``delete --contains "" --yes`` and emptied the queue.

Every path that selects jobs goes through this module: the engine's listings, counts and bulk
calls (``scheduler.selectors`` checks each field with ``check_filter_value``), the command
line's ``cancel`` / ``retry`` / ``delete`` / ``export`` (each flag checked before anything is
read), the console's bulk keys, and any management API built on the engine.

Two answers are separate on purpose:

* ``check_filter_value``: is a given field a filter at all? An empty, whitespace-only or
  control-character value is refused (``InvalidJobQueryError``) everywhere.
* ``selects_every_job``: does a selection narrow nothing? The engine keeps upstream's meaning
  (``delete_jobs()`` with no selector deletes every job), while the operator surfaces (the
  command line and the console) act on every job only when the operator said so: ``--all``,
  or a confirmation that names "every job".
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .errors import InvalidJobQueryError
from .job import JobListFilter, JobSelector, JobStatus

#: C0 and C1 control characters, and unpaired surrogates (no stored text can hold one). No
#: job name, id, unique key or error group holds one, and a "contains" text with one was the
#: way ``"\\x00x"`` matched every job (SQLite's LIKE stops reading its pattern at a NUL).
_CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f\ud800-\udfff]")
#: What even text matched as typed cannot hold: a NUL and unpaired surrogates.
_NOT_TEXT = re.compile("[\\x00\ud800-\udfff]")

#: The fields of each selection type that hold text (each checked by ``check_filter_value``).
TEXT_FIELDS: dict[type, tuple[str, ...]] = {
    JobSelector: ("name", "error_group", "text"),
    JobListFilter: ("name", "name_pattern", "search", "text", "error_group"),
}


def check_filter_value(
    value: object,
    field: str,
    unset: str = "pass None",
    *,
    as_typed: bool = False,
    trimmed: bool = False,
    show: Callable[[str], str] | None = None,
) -> str | None:
    """A text field of a selector or filter, checked: ``None`` (no filter on that field) or
    the value itself, which then filters.

    Refused with ``InvalidJobQueryError`` naming ``field``: a value that is not a string, is
    empty, is only whitespace, or holds a control character (C0 or C1, a tab or a newline
    included) or an unpaired surrogate. Such a value is never what a caller meant to filter by
    (an unset variable, a stray newline), and reading it as "no filter" made a bulk action
    reach every job. ``unset`` says how a caller leaves the field out (the command line names
    its flag: "leave --contains out").

    ``as_typed``: the "contains" text (``text``), which is matched as typed against payloads and
    error messages, and those can hold a tab or a newline (a multi-line message): there a
    control character inside text that is not blank is searched for, as before. A NUL and an
    unpaired surrogate are refused there too (SQLite's LIKE stops reading its pattern at a NUL,
    so ``"\\x00x"`` matched every job). Ids, unique keys, names, globs and error-group keys
    never hold a control character, so for them one is always a mistake.

    ``trimmed``: surrounding whitespace is not part of the value (the id / unique-key search,
    whose field a paste often ends with a newline): the value is checked, and returned,
    without it. Whitespace alone still leaves nothing, so it is refused.

    ``show``: how the message echoes the value (Python's ``repr`` by default; the management
    API passes JSON's form, the language its clients write).
    """
    show = show or _shown
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidJobQueryError(f"{field} must be a string, got {type(value).__name__}")
    if not value:
        raise InvalidJobQueryError(
            f"{field} is empty; it must be non-empty, as a filter that is given must filter: {unset} to not "
            "filter by it"
        )
    if trimmed and value.strip():
        value = value.strip()
    control = (_NOT_TEXT if as_typed else _CONTROL).search(value)
    if control is not None:
        char = control.group()
        what = "an unpaired surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
        named = f"NUL, {show(char)}" if char == "\x00" else show(char)
        raise InvalidJobQueryError(
            f"{field} {show(value)} holds {what} ({named}), which cannot be searched for: remove it"
        )
    if not value.replace("\ufeff", "").strip():
        raise InvalidJobQueryError(
            f"{field} {show(value)} is only whitespace; it must be non-empty, as a filter that is given must filter: "
            f"{unset} to not filter by it"
        )
    return value


def check_selection(target: JobSelector | JobListFilter | None) -> None:
    """Every text field of ``target`` checked by ``check_filter_value`` (``None``: no selection)."""
    if target is None:
        return
    for field in TEXT_FIELDS.get(type(target), ()):
        check_filter_value(getattr(target, field), field, as_typed=field == "text")


def name_pattern_matches_every_name(pattern: str) -> bool:
    """A glob every job name matches: only wildcards, at least one ``*`` and at most one ``?``
    (a job name has at least one character): ``*``, ``**``, ``?*``."""
    return bool(pattern) and set(pattern) <= {"*", "?"} and "*" in pattern and pattern.count("?") <= 1


def selects_every_job(target: JobSelector | JobListFilter | None) -> bool:
    """Whether ``target`` narrows nothing: ``None``, no field set, a name glob that every
    name matches, or a status list naming every status.

    The engine's bulk calls keep upstream's meaning for such a target (every job). The
    command line and the console ask this before acting and act on every job only with the
    operator's word (``--all``; a confirmation that names "every job").
    """
    if target is None:
        return True
    if isinstance(target, JobSelector):
        narrowing: tuple[object, ...] = (
            target.name,
            target.older_than,
            target.newer_than,
            target.updated_before,
            target.error_group,
            target.text,
        )
    else:
        pattern = target.name_pattern
        narrowing = (
            target.name,
            None if pattern is not None and name_pattern_matches_every_name(pattern) else pattern,
            target.created_at_from,
            target.created_at_to,
            target.updated_at_from,
            target.updated_at_to,
            target.next_run_at_from,
            target.next_run_at_to,
            target.search,
            target.recurring,
            target.text,
            target.error_group,
            target.data,
        )
    return all(value is None for value in narrowing) and _every_status(target.status)


def _every_status(status: object) -> bool:
    if status is None:
        return True
    if isinstance(status, str | JobStatus):
        return False
    if isinstance(status, list | tuple | set | frozenset):
        given = {s.value if isinstance(s, JobStatus) else s for s in status}
        return given >= {s.value for s in JobStatus}
    return False


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


__all__ = [
    "TEXT_FIELDS",
    "check_filter_value",
    "check_selection",
    "name_pattern_matches_every_name",
    "selects_every_job",
]

"""Requests → validated inputs: the query string, the JSON body, a job id, and the engine's
selections built from them (upstream's ``src/surface/request-mapping.ts``).

Every selection goes through the engine's one rule for filters
(``selector_rules.check_selection``), the rule the command line and the console use: a
field that is given must filter, so a blank or control-character value is a 400 here, as it
is an exit 2 there, before anything is read or changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import CursorSortMismatchError, InvalidCursorError, InvalidJobQueryError
from ..job import JobListFilter, JobSelector, JobSort
from ..payload_filter import DataTerm, parse_terms
from ..selector_rules import TEXT_FIELDS, check_filter_value
from ..validation import normalize_job_id
from .dto import JobListQuery
from .errors import ApiError, bad_request, from_validation, shown
from .jsnumber import js_whole_number
from .types import parse_instant

Model = TypeVar("Model", bound=BaseModel)

#: ``status[]=failed`` and ``status[0]=failed``: upstream's bracket notation for a list.
_BRACKETS = re.compile(r"^(?P<key>[A-Za-z]+)\[(?P<index>\d*)\]$")
#: Query fields that may hold a list (``status``); every other one is given at most once.
LIST_FIELDS = frozenset({"status"})
#: Bodies are small JSON objects (a selector, a date); anything larger is a mistake.
MAX_BODY_BYTES = 64 * 1024
MAX_LIMIT = 100
DEFAULT_LIMIT = 50
#: Our own routes' ``limit``: ASCII digits (an optional ``+``), the form their document states
#: (upstream's ``GET /api/v1/jobs`` reads its ``limit`` as upstream does: ``jsnumber.py``);
#: not Python's ``int`` alone, which also takes ``5_0`` and other scripts' digits.
_WHOLE_NUMBER = re.compile(r"\+?[0-9]+")
#: Engine field names as the API spells them.
_API_NAMES = {"error_group": "errorGroup", "name_pattern": "namePattern"}
_SORT_FIELDS = {"identifier": "id", "createdAt": "created_at", "updatedAt": "updated_at", "nextRunAt": "next_run_at"}
_API_SORT = {engine: api for api, engine in _SORT_FIELDS.items()}


def query_fields(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The query's pairs as one dict: a list field from repeated or bracketed keys, any other
    field at most once (given twice it is refused, not silently the first or the last)."""
    fields: dict[str, Any] = {}
    for raw_key, value in pairs:
        match = _BRACKETS.match(raw_key)
        key = match.group("key") if match else raw_key
        if key in LIST_FIELDS:
            previous = fields.get(key)
            if previous is None:
                fields[key] = [value] if match else value
            else:
                fields[key] = [*(previous if isinstance(previous, list) else [previous]), value]
        elif match:
            raise bad_request(
                f"Query parameter {shown(key)} takes one value, not an array ({raw_key[:40]}); give {key}= once"
            )
        elif key in fields:
            raise bad_request(f"Query parameter {shown(key)} is given more than once; give it once")
        else:
            fields[key] = value
    return fields


def parse_model(model: type[Model], data: Any, where: str) -> Model:
    try:
        return model.model_validate(data, strict=True)
    except ValidationError as error:
        raise from_validation(error, where) from None


def parse_body(model: type[Model], body: bytes, max_bytes: int = MAX_BODY_BYTES) -> Model:
    """A JSON object body, checked against ``model``; a missing, oversized or non-JSON body is 400."""
    if len(body) > max_bytes:
        raise bad_request(f"The body is {len(body)} bytes; at most {max_bytes} are accepted")
    if not body.strip():
        required = [name for name, field in model.model_fields.items() if field.is_required()]
        if required:  # reschedule's runAt, stop's claimedAt: "{}" would be refused too
            raise bad_request(f"A JSON body is required: an object with {', '.join(required)}")
        raise bad_request("A JSON body is required (send {} for an empty selection)")
    try:
        data = json.loads(body, object_pairs_hook=_once_each)
    except _DuplicateKey as error:
        raise bad_request(f"The body gives {shown(str(error))} more than once; give each field once") from None
    except RecursionError:
        raise bad_request("The body is nested too deeply; send a flat JSON object") from None
    except UnicodeDecodeError as error:  # Python's codec words ("'utf-8' codec can't decode") are not the client's
        raise bad_request(
            f"The body is not UTF-8 (byte {error.object[error.start]:#04x} at position {error.start}); "
            "send a JSON object in UTF-8"
        ) from None
    except json.JSONDecodeError as error:
        raise bad_request(
            f"The body is not JSON ({error.msg} at line {error.lineno} column {error.colno}); send a JSON object"
        ) from None
    return parse_model(model, data, "body")


class _DuplicateKey(Exception):
    """A JSON object that names a key twice: the key."""


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different. ``json`` keeps the last of a repeated key,
    another parser (a proxy's, a client's) may keep the first: a selection that two readers
    read differently must not reach a destructive action, so it is refused, as a query
    parameter given twice is."""
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key[:40])
            seen.add(key)
    return data


def _shown(text: str) -> str:
    """Input echoed in an error: its first 40 characters, as JSON writes a string."""
    return shown(text)


def job_id(text: str) -> str:
    """A job id from the path: 24 hex digits (any case), else 400 as upstream's ``parseObjectId``."""
    key = normalize_job_id(text)
    if key is None:
        raise bad_request(f"Invalid job id {_shown(text)}: a job id is 24 hexadecimal digits")
    return key


def checked(selection: JobSelector | JobListFilter) -> JobSelector | JobListFilter:
    """``selection`` after the engine's rule for filters (``selector_rules.check_filter_value``,
    field by field as ``check_selection`` runs it): a blank or control-character field is 400,
    with the rule's own message naming the field as the API spells it."""
    for field in TEXT_FIELDS.get(type(selection), ()):
        named = _API_NAMES.get(field, field)
        try:
            check_filter_value(
                getattr(selection, field), named, "leave the field out", as_typed=field == "text", show=shown
            )
        except InvalidJobQueryError as error:
            raise bad_request(str(error)) from None
    return selection


def _whole_number(text: str) -> int:
    """``text`` as a whole number, 0 when it is not one (every caller refuses below 1); a
    number of more digits than any page holds is "very many" (``int`` refuses 4300 digits)."""
    if not _WHOLE_NUMBER.fullmatch(text.strip(" \t")):
        return 0
    digits = text.strip(" \t+").lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else 10**18


def _limit(text: str | None) -> int:
    """Upstream's ``limit`` as upstream reads it (JavaScript's ``Number``, ``jsnumber.py``):
    any form that names a whole number of at least 1 (``50``, ``1e2``, ``5.0``, ``0x10``),
    at most 100; anything else 400, as upstream's "Invalid limit"."""
    if text is None:
        return DEFAULT_LIMIT
    limit = js_whole_number(text)
    if limit is None or limit < 1:
        raise bad_request(
            f"Invalid limit {_shown(text)}: give a whole number of at least 1 (pages hold at most {MAX_LIMIT})"
        )
    return min(limit, MAX_LIMIT)


def instant(text: str | None) -> Any:
    return None if text is None else parse_instant(text)


def list_request(query: JobListQuery) -> tuple[str | None, int, JobListFilter, JobSort]:
    """``GET /api/v1/jobs``'s query as the engine's cursor, limit, filter and sort (upstream's
    default order: newest created first)."""
    if query.cursor is not None and not query.cursor.strip():
        raise bad_request(
            f"Invalid cursor {_shown(query.cursor)}: pass the cursor a previous page returned, or leave it out"
        )
    sort = JobSort(
        by=_SORT_FIELDS[query.sortBy or "createdAt"],  # type: ignore[arg-type]
        direction=query.sortDirection or "desc",
    )
    return query.cursor, _limit(query.limit), listing(query), sort


def cursor_refused(cursor: str, error: InvalidCursorError) -> ApiError:
    """The engine's refusal of a cursor in the API's words: a cursor made for another order
    names it as the query does (``sortBy=createdAt``, not the engine's ``created_at``); any
    other (damaged, cut short, made up) is one line naming no engine internals."""
    if isinstance(error, CursorSortMismatchError):
        made = _API_SORT.get(error.made_by, error.made_by)
        asked = _API_SORT.get(error.asked_by, error.asked_by)
        return bad_request(
            f"The cursor was made for sortBy={made}&sortDirection={error.made_direction}, not "
            f"sortBy={asked}&sortDirection={error.asked_direction}; start again without a cursor after changing "
            "the sort"
        )
    return bad_request(
        f"Invalid cursor {_shown(cursor)}: it is not one this server returned (changed, cut short or made up); "
        "pass the cursor a previous page returned, or leave it out"
    )


def listing(query: Any) -> JobListFilter:
    """A listing filter from the fields ``GET /api/v1/jobs`` and our bulk routes share."""
    chosen = JobListFilter(
        name=query.name,
        status=query.status,
        created_at_from=instant(query.createdAtFrom),
        created_at_to=instant(query.createdAtTo),
        updated_at_from=instant(query.updatedAtFrom),
        updated_at_to=instant(query.updatedAtTo),
        next_run_at_from=instant(query.nextRunAtFrom),
        next_run_at_to=instant(query.nextRunAtTo),
        error_group=getattr(query, "errorGroup", None),
        data=_data_terms(getattr(query, "data", None)),
    )
    checked(chosen)
    return chosen


def _data_terms(terms: list[str] | None) -> tuple[DataTerm, ...] | None:
    """Payload conditions in the console's filter language, one per list item (ADR 0022);
    an empty list is refused as a blank filter is (it would select as if absent)."""
    if terms is None:
        return None
    if not terms:
        raise bad_request("data is an empty list: give at least one condition (data.PATH missing), or leave it out")
    return tuple(term for text in terms for term in parse_terms(text))


def selector(name: str | None, status: Any, older_than: str | None, newer_than: str | None) -> JobSelector:
    """Upstream's bulk selection; nothing given selects every job, as upstream's bulk routes do."""
    chosen = JobSelector(name=name, status=status, older_than=instant(older_than), newer_than=instant(newer_than))
    checked(chosen)
    return chosen


def limit_of(text: str | None, default: int, most: int) -> int:
    """A ``limit`` query parameter of our own routes (1..most)."""
    if text is None:
        return default
    value = _whole_number(text)
    if value < 1:
        raise ApiError(400, f"Invalid limit {_shown(text)}: give a whole number from 1 to {most}")
    return min(value, most)

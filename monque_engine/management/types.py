"""Field types shared by the DTOs: ISO 8601 instants, counts, statuses.

Each carries the JSON Schema upstream's generator writes for its zod type, so the OpenAPI
document built from these models matches upstream's field for field.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, WithJsonSchema

from ..timeutil import datetime_to_ms, in_range

#: JavaScript's Number.MAX_SAFE_INTEGER: the bound zod writes for ``z.number().int()``.
MAX_SAFE_INTEGER = 9007199254740991

StatusName = Literal["pending", "processing", "completed", "failed", "cancelled"]
STATUS_NAMES: tuple[str, ...] = ("pending", "processing", "completed", "failed", "cancelled")


def parse_instant(text: str) -> datetime:
    """An ISO 8601 instant with its offset (``Z`` or ``+02:00``) as an aware datetime.

    Refused (``ValueError``, with what to send instead): text that is not ISO 8601, and a
    time without an offset, which names no instant (upstream's ``z.iso.datetime()`` refuses
    it too)."""
    from .errors import shown as show  # the value as JSON writes it (the client's language)

    shown = show(text)
    if not isinstance(text, str) or "T" not in text.upper():
        raise ValueError(f"{shown} is not an ISO 8601 date-time; send e.g. 2026-01-31T09:30:00Z")
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{shown} is not an ISO 8601 date-time; send e.g. 2026-01-31T09:30:00Z") from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{shown} has no offset; add Z (UTC) or one such as +02:00")
    try:
        inside = in_range(datetime_to_ms(value))
    except (OverflowError, ValueError):
        inside = False
    if not inside:  # refused here, under the field's own name (the engine names its parameter: run_at)
        raise ValueError(f"{shown} is out of range: it must fall between the years 1 and 9999 (UTC)")
    return value


def _checked_instant(text: str) -> str:
    parse_instant(text)
    return text


#: An ISO 8601 instant in a request (kept as text; ``parse_instant`` reads it).
IsoInstant = Annotated[str, AfterValidator(_checked_instant), WithJsonSchema({"type": "string", "format": "date-time"})]
#: An instant in a response: always ``YYYY-MM-DDTHH:MM:SS.sssZ``, as JavaScript's toISOString.
IsoOut = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
Count = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
#: C0 and C1 control characters, as JSON Schema (ECMA-262) patterns write them.
_CONTROL = "\\u0000-\\u001f\\u007f-\\u009f"
#: A text filter of our own routes, as the document states it: what the engine's rule for
#: filters accepts (non-empty, not only whitespace, no control character), so a client made
#: from the document does not send what is refused. The rule itself is the check (a 400).
FilterText = Annotated[
    str,
    WithJsonSchema({"type": "string", "minLength": 1, "pattern": f"^[^{_CONTROL}]*[^\\s{_CONTROL}][^{_CONTROL}]*$"}),
]
#: A job name as ``enqueue`` accepts one: no whitespace or control character, 255 at most.
JobNameText = Annotated[
    str, WithJsonSchema({"type": "string", "minLength": 1, "maxLength": 255, "pattern": f"^[^\\s{_CONTROL}\\ufeff]+$"})
]
#: An ``asOf`` as a count route returns it.
AsOfText = Annotated[str, WithJsonSchema({"type": "string", "pattern": "^-?[0-9]{1,19}\\.[0-9]{1,19}\\.[0-9a-f]{16}$"})]
#: A ``limit`` query parameter of our own routes: a whole number from 1.
LimitText = Annotated[str, WithJsonSchema({"type": "string", "pattern": "^\\+?0*[1-9][0-9]*$"})]
#: A job id in one of our own paths (upstream's document says only "string" for its own).
JOB_ID_SCHEMA = {"type": "string", "pattern": "^[0-9a-fA-F]{24}$"}
StatusArg = StatusName | Annotated[list[StatusName], Field(min_length=1)]


def absent() -> Any:
    """The default of a field that may be left out but is never ``null`` (zod's
    ``.optional()``): ``null`` is refused in a request, and an unset field is left out of a
    response (bodies are dumped with ``exclude_unset``). Its schema is the value's alone:
    ``openapi.py`` drops the ``default``."""
    return Field(default=None)

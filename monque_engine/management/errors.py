"""Errors as HTTP answers: one ``ApiError`` per refusal, and the engine's errors mapped to
the status upstream gives each core error (``src/orpc/operations.ts``).

Every body is ``{"error": "one line saying what is wrong"}``; no traceback reaches a client
(an unexpected error is logged here and answered 500 with a fixed line).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from ..errors import (
    ConnectionError,
    InvalidCursorError,
    InvalidJobDocumentError,
    InvalidJobIdentifierError,
    InvalidJobQueryError,
    JobStateError,
    PayloadValidationError,
    StoreLostError,
    UniqueKeyConflictError,
)
from ..store.urls import mask_secrets

log = logging.getLogger("monque_engine.management")

READ_ONLY = "Management surface is read-only"
ACTION_DENIED = "Action denied"
READ_DENIED = "Read access denied"
NOT_FOUND = "Job not found"
INTERNAL = "Internal server error (the server's log has the details)"
#: The store went for good under the process (its SQLite file deleted, replaced or damaged):
#: every request will fail the same way until the server restarts, so the answer says that.
STORE_LOST = (
    "The job store was deleted, replaced or damaged under this server: restart the server "
    "(its log says which, and what to check)"
)


class ApiError(Exception):
    """A refusal with its HTTP status; ``str()`` is the body's ``error``."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def forbidden(message: str) -> ApiError:
    return ApiError(403, message)


def not_found(message: str = NOT_FOUND) -> ApiError:
    return ApiError(404, message)


def from_engine(error: Exception, store_url: str = "") -> ApiError:
    """The answer for an error the engine raised: bad input 400, a state conflict 409, the
    store's own failures 500 with their one line (a locked file, an unreachable server: what
    the command line prints, passwords masked), anything else 500 (logged with its
    traceback, which never reaches the client)."""
    if isinstance(error, InvalidJobIdentifierError):  # the engine's message echoes the value as Python writes it
        field = {"unique_key": "uniqueKey"}.get(error.field, error.field)
        return bad_request(f"Invalid job {field} {shown(error.value)}: {error.reason}")
    if isinstance(error, InvalidJobQueryError | InvalidCursorError | PayloadValidationError):
        return bad_request(str(error))
    if isinstance(error, JobStateError | UniqueKeyConflictError):
        return ApiError(409, str(error))
    if isinstance(error, InvalidJobDocumentError):  # a row edited by hand: its own line says what to fix
        log.error("management API: %s", error)
        return ApiError(500, str(error))
    if isinstance(error, StoreLostError):  # one line, no traceback: the log would repeat it per request
        log.error("management API: %s", error)
        return ApiError(500, STORE_LOST)
    if isinstance(error, ConnectionError):  # one line, no traceback: the message says what and why
        said = mask_secrets(str(error), store_url).splitlines()[0] if str(error) else type(error).__name__
        log.error("management API: the store did not answer: %s", said)
        return ApiError(500, f"The store did not answer: {said}")
    log.error("management API: unexpected %s", type(error).__name__, exc_info=error)
    return ApiError(500, INTERNAL)


#: What JSON text may hold raw but a one-line message must not: a lone surrogate, C1
#: controls (U+0085 is a line break to some readers), line and paragraph separators, and
#: invisible format characters; each written as JSON's escape (``\u0085``).
_UNSHOWN = re.compile("[\ud800-\udfff\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def shown(value: Any, most: int = 40) -> str:
    """A value an error echoes, written as JSON writes it: ``"x"``, ``null``, ``true``,
    ``["a","b"]``, never Python's ``'x'``, ``None``, ``True``, ``['a', 'b']`` (a client
    reads the error in the language it sent). A long text or list is cut, so a line stays
    a line."""
    if isinstance(value, str) and len(value) > most:
        value = value[:most] + "…"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = json.dumps(str(value)[:most], ensure_ascii=False)
    text = _UNSHOWN.sub(lambda char: f"\\u{ord(char.group()):04x}", text)
    return text if len(text) <= most + 20 else text[: most + 20] + "…"


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def field_path(location: Sequence[Any]) -> str:
    """pydantic's location as a client names the field: ``data[0]``, ``status[1]``."""
    path = ""
    for part in location:
        if isinstance(part, str) and not _NAME.fullmatch(part):  # a union's tag: literal['pending', …]
            continue
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


#: pydantic's complaint → what the field must be, in JSON's words (``array``, not ``list``).
_MUST_BE = {
    "string_type": "must be a string",
    "list_type": "must be an array",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "string_too_short": "must not be empty",
    "string_unicode": "must be text without an unpaired surrogate",
}


def _must_be(first: Any) -> str:
    kind = first["type"]
    if kind in _MUST_BE:
        return _MUST_BE[kind]
    context = first.get("ctx") or {}
    if kind == "too_short":
        return f"must hold at least {context.get('min_length')} item(s)"
    if kind == "too_long":
        return f"must hold at most {context.get('max_length')} item(s)"
    if kind == "string_too_long":
        return f"must be at most {context.get('max_length')} characters"
    return str(first["msg"]).replace("'", '"')


def from_validation(error: ValidationError, where: str) -> ApiError:
    """pydantic's first complaint as one line naming the field as the client sent it
    (``where``: "query", "body"), and the value as JSON writes it."""
    first: Any = error.errors(include_url=False)[0]
    field = field_path(first["loc"])
    kind = first["type"]
    given = shown(first.get("input"))
    if kind == "extra_forbidden":  # the key as the client sent it, whatever characters it holds
        parent, key = field_path(first["loc"][:-1]), str(first["loc"][-1])
        return bad_request(f"Unknown {where} field {shown(f'{parent}.{key}' if parent else key)}")
    if kind == "missing":
        return bad_request(f"The {where} field {shown(field)} is required")
    if field.split(".")[0].split("[")[0] == "status":
        return bad_request(f"Invalid status {given}: use one of pending, processing, completed, failed, cancelled")
    if kind == "literal_error":
        expected = str((first.get("ctx") or {}).get("expected", "")).replace("'", '"')
        return bad_request(f"Invalid {field} {given}: use {expected}")
    if kind == "value_error":
        return bad_request(f"Invalid {field}: {str(first['msg']).removeprefix('Value error, ')}")
    if kind == "model_type" and not field:
        return bad_request(f"The {where} must be a JSON object")
    return bad_request(f"Invalid {where} field {shown(field)}: {_must_be(first)}")

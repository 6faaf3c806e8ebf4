"""Errors as HTTP answers: one ``ApiError`` per refusal, and the engine's errors mapped to
the status upstream gives each core error (``src/orpc/operations.ts``).

Every body is ``{"error": "one line saying what is wrong"}``; no traceback reaches a client
(an unexpected error is logged here and answered 500 with a fixed line).
"""

from __future__ import annotations

import logging
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
    if isinstance(
        error, InvalidJobQueryError | InvalidCursorError | InvalidJobIdentifierError | PayloadValidationError
    ):
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


def _clipped(given: Any) -> Any:
    """A refused input as an error shows it: a long text or list cut, so a line stays a line."""
    shown = repr(given)
    return given if len(shown) <= 60 else _Shown(shown[:60] + "…")


class _Shown(str):
    """Text already in its shown form (``!r`` leaves it as it is)."""

    def __repr__(self) -> str:
        return str(self)


def from_validation(error: ValidationError, where: str) -> ApiError:
    """pydantic's first complaint as one line naming the field (``where``: "query", "body")."""
    first: Any = error.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"] if not isinstance(part, int) or len(first["loc"]) > 1)
    kind = first["type"]
    given = _clipped(first.get("input"))
    if kind == "extra_forbidden":
        return bad_request(f"Unknown {where} field {field!r}")
    if kind == "missing":
        return bad_request(f"{where} field {field!r} is required")
    if kind in ("literal_error", "enum") and field.split(".")[0] == "status":
        return bad_request(f"Invalid status {given!r}: use one of pending, processing, completed, failed, cancelled")
    if kind == "literal_error":
        return bad_request(f"Invalid {field} {given!r}: {first['msg'].removeprefix('Input should be ')}")
    if kind == "value_error":
        return bad_request(f"Invalid {field}: {str(first['msg']).removeprefix('Value error, ')}")
    if kind == "model_type":
        return bad_request(f"The {where} must be a JSON object")
    return bad_request(f"Invalid {where} field {field!r}: {first['msg']}")

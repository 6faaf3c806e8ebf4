"""Attempt history: one record per finished run of a job, kept on the job itself.

Why on the job: an operator looking at a failing job needs every recent try (which
instance, when, how long, which exception with which traceback) next to the job, and
both stores can append to a field in the same write that records the outcome, so the
history costs no extra statement. The last ``MAX_ATTEMPTS`` records are kept, so a job
retried for ever stays bounded.

Stored shape (MongoDB field ``attempts``, SQLite JSON column ``attempts``), oldest first::

    {"attempt": 2, "outcome": "retrying", "instanceId": "host-1234-ab12",
     "startedAt": <date>, "endedAt": <date>, "durationMs": 41,
     "errorType": "KeyError", "errorMessage": "'signing_secret'",
     "traceback": "Traceback (most recent call last): ..."}

Instants are BSON dates in MongoDB and epoch milliseconds in SQLite, where ``durationMs``
is left out (it is ``endedAt - startedAt``); keys without a value are left out.
``startedAt`` is the claim instant (``lockedAt``): the one instant every recorder knows,
stale recovery included.

Recording must cost little on the hot path: a success builds no traceback and no text
(SQLite writes its record in SQL from the row, and a one-off completion of a job without
history keeps the claim's ``claimed_by``/``locked_at`` as its record instead of growing
the row; see ``store/sqlite/queries.row_to_job``). A failure's text comes from
``exception_text.describe_exception``, which cannot raise, because recording a failure
must never fail.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from .exception_text import (
    MAX_MESSAGE_CHARS,
    MAX_TRACEBACK_CHARS,
    ExceptionText,
    describe_exception,
    exception_message,
    exception_traceback,
    exception_type,
    trim_traceback,
)
from .timeutil import datetime_to_ms, ms_to_datetime, optional_ms_to_datetime

#: How many attempt records a job keeps (the newest).
MAX_ATTEMPTS = 10
#: Bound of a failure message (also ``failReason``'s bound).
MAX_REASON_CHARS = MAX_MESSAGE_CHARS

AttemptOutcome = Literal["completed", "retrying", "failed", "stale", "shutdown", "timed_out", "cancelled"]
#: ``completed``: the handler returned. ``retrying``: it raised and the job was scheduled
#: again. ``failed``: it raised and the job ended failed (retries exhausted, or a failure
#: retrying cannot help). ``stale``: its instance stopped heartbeating and stale recovery
#: returned the job to pending. ``shutdown``: a stopping instance gave up waiting for it.
#: ``timed_out``: it ran past its time limit (a ``TimeoutError``; issue 37); the job was then
#: retried or failed by its retry policy, as its status says. ``cancelled``: an operator
#: stopped it while it ran (issue 37); the job ended cancelled.
OUTCOMES: tuple[str, ...] = ("completed", "retrying", "failed", "stale", "shutdown", "timed_out", "cancelled")
#: The outcome of an attempt an operator stopped.
CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One finished attempt of a job, as stored (see the module docstring for the shape)."""

    number: int
    outcome: str
    instance_id: str | None
    started_at_ms: int | None
    ended_at_ms: int
    error_type: str | None = None
    error_message: str | None = None
    traceback: str | None = None

    @property
    def duration_ms(self) -> int | None:
        return None if self.started_at_ms is None else max(0, self.ended_at_ms - self.started_at_ms)

    @property
    def started_at(self) -> datetime | None:
        return optional_ms_to_datetime(self.started_at_ms)

    @property
    def ended_at(self) -> datetime:
        return ms_to_datetime(self.ended_at_ms)

    @property
    def failed(self) -> bool:
        return self.outcome != "completed"

    @property
    def summary(self) -> str:
        """``Type: first line of the message`` for a failure, else the outcome.

        At most ``MAX_REASON_CHARS`` characters of the line (and ``…``), the most a message
        the engine records can hold: a record written by another program may hold megabytes,
        and only the start of it is read.
        """
        if self.error_type is None:
            return self.outcome
        first = (self.error_message or "")[: MAX_REASON_CHARS + 1].split("\n", 1)[0]
        if len(first) > MAX_REASON_CHARS:
            first = first[:MAX_REASON_CHARS] + "…"
        return f"{self.error_type}: {first}" if first else self.error_type

    def to_fields(self, date: Any = None, duration: bool = True) -> dict[str, Any]:
        """The stored record; instants as ms, or converted by ``date`` (MongoDB: datetimes)."""
        convert = date or (lambda ms: ms)
        doc: dict[str, Any] = {"attempt": self.number, "outcome": self.outcome}
        if self.instance_id is not None:
            doc["instanceId"] = self.instance_id
        if self.started_at_ms is not None:
            doc["startedAt"] = convert(self.started_at_ms)
        doc["endedAt"] = convert(self.ended_at_ms)
        if duration and self.duration_ms is not None:
            doc["durationMs"] = self.duration_ms
        for key, value in (
            ("errorType", self.error_type),
            ("errorMessage", self.error_message),
            ("traceback", self.traceback),
        ):
            if value is not None:
                doc[key] = value
        return doc

    def to_json(self) -> str:
        """The SQLite form: instants as epoch ms, no ``durationMs`` (``endedAt - startedAt``)."""
        return json.dumps(self.to_fields(duration=False), ensure_ascii=False, separators=(",", ":"))

    def to_document(self) -> dict[str, Any]:
        """The MongoDB form (instants as BSON dates)."""
        return self.to_fields(ms_to_datetime)

    @classmethod
    def from_stored(cls, doc: Any) -> Attempt | None:
        """Read one stored record leniently; None for something that is not a record."""
        if not isinstance(doc, Mapping):
            return None
        ended = _instant(doc.get("endedAt"))
        if ended is None:
            return None
        number = doc.get("attempt")
        outcome = doc.get("outcome")
        return cls(
            number=number if isinstance(number, int) and not isinstance(number, bool) else 0,
            outcome=outcome if isinstance(outcome, str) else "unknown",
            instance_id=_text(doc.get("instanceId")),
            started_at_ms=_instant(doc.get("startedAt")),
            ended_at_ms=ended,
            error_type=_text(doc.get("errorType")),
            error_message=_text(doc.get("errorMessage")),
            traceback=_text(doc.get("traceback")),
        )


def _instant(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, datetime):
        return datetime_to_ms(value)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class AppendedHistory:
    """A stored history plus one success record a store wrote without reading the row back
    (SQLite's batched completions): turned into ``Attempt`` values only when someone looks."""

    __slots__ = ("base", "ended_at_ms", "instance_id", "number", "started_at_ms")

    def __init__(
        self, base: Any, number: int, instance_id: str | None, started_at_ms: int | None, ended_at_ms: int
    ) -> None:
        self.base = base
        self.number = number
        self.instance_id = instance_id
        self.started_at_ms = started_at_ms
        self.ended_at_ms = ended_at_ms

    def resolve(self) -> tuple[Attempt, ...]:
        record = Attempt(self.number, "completed", self.instance_id, self.started_at_ms, self.ended_at_ms)
        return (*parse_attempts(self.base), record)[-MAX_ATTEMPTS:]


def parse_attempts(raw: Any) -> tuple[Attempt, ...]:
    """Stored history (SQLite JSON text, or a MongoDB array) as typed records, oldest first.

    Lenient: a history written by hand or damaged is read as far as it makes sense, never
    raised on (it is diagnostic data; the job itself must stay readable).
    """
    if raw is None:
        return ()
    if isinstance(raw, AppendedHistory):
        return raw.resolve()
    if isinstance(raw, tuple) and all(isinstance(item, Attempt) for item in raw):
        return raw
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except ValueError:
            return ()
    if not isinstance(raw, list):
        return ()
    parsed = (Attempt.from_stored(item) for item in raw)
    return tuple(item for item in parsed if item is not None)


# -- describing a failure --------------------------------------------------------------------
# Recording a failure must never fail, whatever the exception does: exception_text.py reads
# it under guards. These names stay for the callers that describe one part of it.
def error_message(error: BaseException) -> str:
    """The failReason for ``error``: ``str(error)`` made plain, storable and bounded; never
    raises (as upstream's ``toError``). See ``exception_text.exception_message``."""
    return exception_message(error)


def qualified_type(error: BaseException) -> str:
    """``module.QualName`` of the exception's class; builtins by bare name (``KeyError``)."""
    return exception_type(error)


def format_traceback(error: BaseException) -> str:
    """The exception's traceback with its chained causes and contexts, trimmed; never raises."""
    return exception_traceback(error)


def failure_attempt(
    job_fail_count: int,
    instance_id: str,
    started_at_ms: int | None,
    ended_at_ms: int,
    error: BaseException | ExceptionText,
    will_retry: bool,
    message: str | None = None,
    outcome: str | None = None,
) -> Attempt:
    """The record of an attempt whose handler (or its outcome write) raised ``error`` (or
    whose exception was described already: the processor describes it once). ``outcome``
    overrides ``retrying`` / ``failed`` (``timed_out``: the job's status says which followed)."""
    described = error if isinstance(error, ExceptionText) else describe_exception(error)
    return Attempt(
        number=job_fail_count + 1,
        outcome=outcome or ("retrying" if will_retry else "failed"),
        instance_id=instance_id,
        started_at_ms=started_at_ms,
        ended_at_ms=ended_at_ms,
        error_type=described.type,
        error_message=described.message if message is None else message,
        traceback=described.traceback,
    )


def plain_attempt(
    outcome: str, job_fail_count: int, instance_id: str | None, started_at_ms: int | None, ended_at_ms: int
) -> Attempt:
    """A record without an error (a completion, or a shutdown that gave up on the job)."""
    return Attempt(job_fail_count + 1, outcome, instance_id, started_at_ms, ended_at_ms)


__all__ = [
    "CANCELLED",
    "MAX_ATTEMPTS",
    "MAX_TRACEBACK_CHARS",
    "OUTCOMES",
    "Attempt",
    "AttemptOutcome",
    "error_message",
    "failure_attempt",
    "format_traceback",
    "parse_attempts",
    "plain_attempt",
    "qualified_type",
    "trim_traceback",
]

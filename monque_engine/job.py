"""The job and the value types the public API hands out.

`Job` keeps instants as epoch milliseconds (what both stores hold) and exposes them as
aware UTC datetimes; `to_document` / `from_document` translate to Monque's camelCase
MongoDB schema, so the same job can be exported, compared or written by the Mongo store.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from .attempts import Attempt, parse_attempts
from .forwarded import forwarder
from .payload_filter import DataTerm
from .run_progress import RUNNING_JOB, InvalidProgressError, Progress, ProgressSink, checked_progress
from .timeouts import MAX_TIMEOUT_SECONDS, RunLimit
from .timeutil import datetime_to_ms, in_range, ms_to_datetime, now_ms, optional_ms_to_datetime


class JobStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


ALL_STATUSES: tuple[JobStatus, ...] = tuple(JobStatus)
STATUS_BY_VALUE: dict[str, JobStatus] = {s.value: s for s in JobStatus}
_PENDING = JobStatus.PENDING


class Job:
    """One job as stored. Attributes are snake_case views of the stored camelCase fields."""

    __slots__ = (
        "_attempts",
        "_limit",
        "claimed_by",
        "created_at_ms",
        "data",
        "error_group",
        "error_type",
        "fail_count",
        "fail_reason",
        "heartbeat_interval_ms",
        "id",
        "last_heartbeat_ms",
        "locked_at_ms",
        "name",
        "next_run_at_ms",
        "over_limit_at_ms",
        "progress",
        "repeat_interval",
        "result",
        "status",
        "stop_requested_at_ms",
        "timeout_ms",
        "unique_key",
        "updated_at_ms",
    )  # fmt: skip

    def __init__(
        self,
        id: str,
        name: str,
        data: Any,
        status: JobStatus,
        next_run_at_ms: int,
        created_at_ms: int,
        updated_at_ms: int,
        fail_count: int = 0,
        locked_at_ms: int | None = None,
        claimed_by: str | None = None,
        last_heartbeat_ms: int | None = None,
        heartbeat_interval_ms: int | None = None,
        fail_reason: str | None = None,
        repeat_interval: str | None = None,
        unique_key: str | None = None,
        attempts: Any = None,
        error_type: str | None = None,
        error_group: str | None = None,
        timeout_ms: int | None = None,
        over_limit_at_ms: int | None = None,
        stop_requested_at_ms: int | None = None,
        progress: Progress | None = None,
        result: Any = None,
    ) -> None:
        self.id = id
        self.name = name
        self.data = data
        self.status = status
        self.next_run_at_ms = next_run_at_ms
        self.created_at_ms = created_at_ms
        self.updated_at_ms = updated_at_ms
        self.fail_count = fail_count
        self.locked_at_ms = locked_at_ms
        self.claimed_by = claimed_by
        self.last_heartbeat_ms = last_heartbeat_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.fail_reason = fail_reason
        self.repeat_interval = repeat_interval
        self.unique_key = unique_key
        #: The stored history as read (JSON text, a MongoDB array, or already typed);
        #: parsed on first use of ``attempts``, so listings and claims never pay for it.
        self._attempts = attempts
        #: Ours: the qualified exception type and error-group key of the last failure
        #: (cleared by a completion or a manual retry, as failReason is).
        self.error_type = error_type
        self.error_group = error_group
        #: Ours (ADR 0019): this job's own time limit in ms (``enqueue(..., timeout=)``), which
        #: wins over its registration's; and when its running attempt passed its limit while a
        #: sync handler's thread went on (the claim's ``locked_at_ms`` tells which attempt).
        self.timeout_ms = timeout_ms
        self.over_limit_at_ms = over_limit_at_ms
        #: Ours (ADR 0019): when an operator asked to stop the running attempt; like
        #: ``over_limit_at_ms`` it speaks for the attempt claimed at or before it only.
        self.stop_requested_at_ms = stop_requested_at_ms
        #: Ours (ADR 0019): the handler's last progress report (``Progress``), if any.
        self.progress = progress
        #: Ours: what the handler returned (JSON), kept on the finished job; None for none.
        self.result = result
        #: Not stored: the running attempt's deadline, set on the Job a handler receives.
        self._limit: RunLimit | None = None

    @property
    def timeout(self) -> float | None:
        """This job's own time limit in seconds (None: its registration's, if any, applies)."""
        return None if self.timeout_ms is None else self.timeout_ms / 1000

    @property
    def deadline(self) -> datetime | None:
        """When the running attempt's time limit ends (UTC); None without a limit, and on a
        Job that is not the one a handler was given."""
        limit = self._limit
        return None if limit is None else limit.deadline

    def should_stop(self) -> bool:
        """Whether the running attempt is past its time limit, or an operator asked to stop
        it: what sync code polls between steps, since a thread cannot be cancelled (an async
        handler is cancelled for it)."""
        limit = self._limit
        return limit is not None and limit.should_stop()

    async def report_progress(self, fraction: float, message: str | None = None) -> None:
        """Say how far the running handler has got: ``fraction`` from 0 to 1 and an optional
        short ``message`` (at most ``MAX_PROGRESS_MESSAGE`` characters), stored on the job for
        the console, ``get_job`` and export. Call it as often as you like: the engine writes
        at most one report per job per second (the latest). Raises ``InvalidProgressError``
        for a bad value, or when called outside this job's own handler."""
        report = checked_progress(fraction, message, now_ms())
        write = self._progress_sink().take_progress(self, report)
        if write is not None:
            await write

    def report_progress_sync(self, fraction: float, message: str | None = None) -> None:
        """``report_progress`` for a sync handler (a plain ``def`` in its thread): hands the
        report to the engine's loop and returns at once."""
        report = checked_progress(fraction, message, now_ms())
        self._progress_sink().take_progress_threadsafe(self, report)

    def _progress_sink(self) -> ProgressSink:
        current = RUNNING_JOB.get()
        if current is None or current[1] != self.id:
            raise InvalidProgressError(
                f"report_progress for job {self.id} must be called from that job's own handler, while it runs"
            )
        return current[0]

    @property
    def stop_pending(self) -> bool:
        """An operator asked to stop the running attempt and its handler still runs (a sync
        handler, or one that ignores cancellation): what the console says, with its age."""
        return (
            self.status is JobStatus.PROCESSING
            and self.stop_requested_at_ms is not None
            and self.locked_at_ms is not None
            and self.stop_requested_at_ms >= self.locked_at_ms
        )

    @property
    def running_progress(self) -> Progress | None:
        """The progress report of the running attempt (one written since its claim), else None."""
        progress = self.progress
        if (
            progress is None
            or self.status is not JobStatus.PROCESSING
            or self.locked_at_ms is None
            or progress.at_ms < self.locked_at_ms
        ):
            return None
        return progress

    @property
    def over_limit(self) -> bool:
        """Its running attempt passed its time limit and its (sync) handler still runs."""
        return (
            self.status is JobStatus.PROCESSING
            and self.over_limit_at_ms is not None
            and self.locked_at_ms is not None
            and self.over_limit_at_ms >= self.locked_at_ms
        )

    @property
    def attempts(self) -> tuple[Attempt, ...]:
        """The last finished attempts (at most ``MAX_ATTEMPTS``), oldest first."""
        raw = self._attempts
        if raw is None:
            return ()
        parsed = parse_attempts(raw)
        self._attempts = parsed
        return parsed

    @property
    def last_attempt(self) -> Attempt | None:
        attempts = self.attempts
        return attempts[-1] if attempts else None

    # -- datetime views -------------------------------------------------------------------
    # An instant beyond what a datetime holds (years 1-9999; a Node producer may store dates to
    # the year 275760, and a hand edit anything) reads as datetime.max / min in UTC rather than
    # raising OverflowError from an attribute; the ``*_ms`` fields keep the exact value.
    @property
    def next_run_at(self) -> datetime:
        return _view(self.next_run_at_ms)

    @property
    def created_at(self) -> datetime:
        return _view(self.created_at_ms)

    @property
    def updated_at(self) -> datetime:
        return _view(self.updated_at_ms)

    @property
    def locked_at(self) -> datetime | None:
        return None if self.locked_at_ms is None else _view(self.locked_at_ms)

    @property
    def last_heartbeat(self) -> datetime | None:
        return None if self.last_heartbeat_ms is None else _view(self.last_heartbeat_ms)

    @property
    def heartbeat_interval(self) -> float | None:
        """Seconds, as the public API speaks; stored as ms for Node Monque parity."""
        return None if self.heartbeat_interval_ms is None else self.heartbeat_interval_ms / 1000

    @property
    def is_recurring(self) -> bool:
        return self.repeat_interval is not None

    @property
    def timezone(self) -> str | None:
        """The IANA zone a recurring job's schedule runs in (``schedule(tz=...)``, or a Node
        document's ``timezone`` field); None for UTC schedules and one-off jobs."""
        if self.repeat_interval is None or not self.repeat_interval.startswith(_TZ_PREFIX):
            return None
        return self.repeat_interval[len(_TZ_PREFIX) :].partition(" ")[0] or None

    # -- value semantics --------------------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        return tuple(self.attempts if slot == "_attempts" else getattr(self, slot) for slot in _STORED_SLOTS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Job) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable value object

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, name={self.name!r}, status={self.status.value!r}, fail_count={self.fail_count})"

    def replace(self, **changes: Any) -> Job:
        fields = {slot.lstrip("_"): getattr(self, slot) for slot in _STORED_SLOTS}
        fields.update(changes)
        return Job(**fields)

    # -- Monque document schema ---------------------------------------------------------------
    def to_document(self) -> dict[str, Any]:
        """The job as Monque stores it in MongoDB: camelCase keys, datetimes, ``_id`` as ObjectId."""
        from bson import ObjectId

        doc: dict[str, Any] = {
            "_id": ObjectId(self.id),
            "name": self.name,
            "data": self.data,
            "status": self.status.value,
            "nextRunAt": _bson_date(self.next_run_at_ms),
            "failCount": self.fail_count,
            "createdAt": _bson_date(self.created_at_ms),
            "updatedAt": _bson_date(self.updated_at_ms),
        }
        optional = {
            "lockedAt": _bson_date(self.locked_at_ms),
            "claimedBy": self.claimed_by,
            "lastHeartbeat": _bson_date(self.last_heartbeat_ms),
            "heartbeatInterval": self.heartbeat_interval_ms,
            "failReason": self.fail_reason,
            "repeatInterval": self.repeat_interval,
            "uniqueKey": self.unique_key,
            "errorType": self.error_type,
            "errorGroup": self.error_group,
            "timeoutMs": self.timeout_ms,
            "overLimitAt": _bson_date(self.over_limit_at_ms),
            "stopRequestedAt": _bson_date(self.stop_requested_at_ms),
            "result": self.result,
        }
        doc.update({key: value for key, value in optional.items() if value is not None})
        if self.progress is not None:
            doc["progress"] = self.progress.as_mapping(_bson_date)
        if self._attempts is not None:
            doc["attempts"] = [attempt.to_document() for attempt in self.attempts]
        return doc

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> Job:
        """Read a Monque document (as Node Monque or our Mongo store writes it).

        Foreign documents are read leniently where the meaning is clear (a missing
        ``data``, ``failCount`` or ``updatedAt``; an ISO-8601 string or epoch-ms number
        where a date belongs, as a JavaScript caller may write) and otherwise raise
        ``InvalidJobDocumentError`` naming the field, never a bare KeyError.
        """
        from .errors import InvalidJobDocumentError

        job_id = str(doc.get("_id", "?"))

        def bad(field: str, why: str) -> InvalidJobDocumentError:
            return InvalidJobDocumentError(job_id, f"{field} {why}")

        def ms(key: str, required: bool = False) -> int | None:
            value = doc.get(key)
            if value is None:
                if required:
                    raise bad(key, "is missing")
                return None
            try:
                return _document_ms(value)
            except (TypeError, ValueError, OverflowError):
                raise bad(key, f"is not a date ({type(value).__name__} {value!r:.40})") from None

        def integer(key: str, default: int | None) -> int | None:
            value = doc.get(key)
            if value is None:
                return default
            try:
                return int(value)
            except (TypeError, ValueError, OverflowError):
                raise bad(key, f"is not a number ({value!r:.40})") from None

        def text(key: str) -> str | None:
            value = doc.get(key)
            return value if value is None or isinstance(value, str) else str(value)

        if "_id" not in doc:
            raise bad("_id", "is missing")
        name = doc.get("name")
        if not isinstance(name, str):
            raise bad("name", "is missing or not a string")
        raw_status = doc.get("status")
        status = STATUS_BY_VALUE.get(raw_status) if isinstance(raw_status, str) else None
        if status is None:
            raise bad("status", f"is not a Monque status ({doc.get('status')!r:.40})")
        created = ms("createdAt")
        if created is None:
            created = _object_id_ms(doc["_id"])
            if created is None:
                raise bad("createdAt", "is missing")
        updated = ms("updatedAt")
        next_run = ms("nextRunAt", required=True)
        assert next_run is not None  # required=True raised otherwise
        return cls(
            id=job_id,
            name=name,
            data=doc.get("data"),
            status=status,
            next_run_at_ms=next_run,
            created_at_ms=created,
            updated_at_ms=created if updated is None else updated,
            fail_count=integer("failCount", 0) or 0,
            locked_at_ms=ms("lockedAt"),
            claimed_by=text("claimedBy"),
            last_heartbeat_ms=ms("lastHeartbeat"),
            heartbeat_interval_ms=integer("heartbeatInterval", None),
            fail_reason=text("failReason"),
            repeat_interval=_with_zone(text("repeatInterval"), doc.get("timezone")),
            unique_key=text("uniqueKey"),
            attempts=doc.get("attempts"),
            error_type=text("errorType"),
            error_group=text("errorGroup"),
            timeout_ms=_stored_timeout(doc.get("timeoutMs")),
            over_limit_at_ms=ms("overLimitAt"),
            stop_requested_at_ms=ms("stopRequestedAt"),
            progress=Progress.from_mapping(doc.get("progress"), _lenient_ms),
            result=doc.get("result"),
        )


#: The slots of stored fields, in ``Job.__slots__`` order (``_limit`` is the running attempt's
#: own, never stored, compared or exported).
STORED_SLOTS: tuple[str, ...] = tuple(slot for slot in Job.__slots__ if slot != "_limit")
_STORED_SLOTS = STORED_SLOTS


def _stored_timeout(value: object) -> int | None:
    """A stored ``timeoutMs`` read leniently: a value that is not a usable limit (written by
    hand or by another program) reads as none, so the registration's limit applies."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    ms = int(value)
    return ms if 0 < ms <= MAX_TIMEOUT_SECONDS * 1000 else None


#: How a schedule's zone is kept inside ``repeatInterval`` (cron.py reads it back).
_TZ_PREFIX = "CRON_TZ="


def _with_zone(repeat_interval: str | None, timezone: object) -> str | None:
    """A Node document's schedule: newer Node Monque keeps the zone in its own ``timezone``
    field next to a plain ``repeatInterval``; ours keeps it as a ``CRON_TZ=`` prefix. Read
    either way, the schedule runs in that zone here too (not in UTC)."""
    if (
        repeat_interval is None
        or not isinstance(timezone, str)
        or not timezone.strip()
        or repeat_interval.lstrip().startswith(_TZ_PREFIX)
    ):
        return repeat_interval
    return f"{_TZ_PREFIX}{timezone.strip()} {repeat_interval.strip()}"


_LATEST = datetime.max.replace(tzinfo=UTC)
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def _view(ms: int) -> datetime:
    if in_range(ms):
        return ms_to_datetime(ms)
    return _LATEST if ms > 0 else _EARLIEST


def _bson_date(ms: int | None) -> Any:
    """A stored instant for a document: a datetime, or where none can hold it (beyond the
    years 1-9999, as a Node producer may store) PyMongo's ``DatetimeMS``, the same BSON date."""
    if ms is None or in_range(ms):
        return optional_ms_to_datetime(ms)
    from bson.datetime_ms import DatetimeMS

    return DatetimeMS(ms)


def _lenient_ms(value: object) -> int | None:
    """A stored instant, or None where there is none that can be read (for fields of ours
    that read as absent rather than make the job unreadable)."""
    if value is None:
        return None
    try:
        return _document_ms(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _document_ms(value: Any) -> int:
    """A stored instant: a BSON date, or what a JavaScript caller may write instead
    (an ISO-8601 string, or epoch milliseconds as a number)."""
    if isinstance(value, datetime):
        return datetime_to_ms(value)
    if isinstance(value, str):
        return datetime_to_ms(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if hasattr(value, "as_datetime"):  # bson DatetimeMS: a BSON date outside datetime's range
        return int(value)
    raise TypeError(type(value).__name__)


def _object_id_ms(value: Any) -> int | None:
    generation = getattr(value, "generation_time", None)
    return None if generation is None else datetime_to_ms(generation)


@dataclass(slots=True)
class NewJob:
    """What intake hands a store to insert: validated, with the payload already encoded."""

    id: str
    name: str
    data: Any
    data_json: str
    next_run_at_ms: int
    created_at_ms: int
    repeat_interval: str | None = None
    unique_key: str | None = None
    #: The job's own time limit in ms (ADR 0019), None for the registration's.
    timeout_ms: int | None = None

    def to_job(self) -> Job:
        # Positional, and the optional fields only when set: enqueue_many builds one Job
        # per item, and keyword arguments cost twice as much (ADR 0001, addendum 3b).
        created = self.created_at_ms
        if self.repeat_interval is None and self.unique_key is None and self.timeout_ms is None:
            return Job(self.id, self.name, self.data, _PENDING, self.next_run_at_ms, created, created)
        return Job(
            self.id,
            self.name,
            self.data,
            _PENDING,
            self.next_run_at_ms,
            created,
            created,
            repeat_interval=self.repeat_interval,
            unique_key=self.unique_key,
            timeout_ms=self.timeout_ms,
        )


StatusArg = JobStatus | str | Sequence[JobStatus | str] | None


@dataclass(frozen=True, slots=True)
class JobSelector:
    """Which jobs a bulk call targets. Empty means every job (delete_jobs honours that)."""

    name: str | None = None
    status: StatusArg = None
    older_than: datetime | None = None  # createdAt <
    newer_than: datetime | None = None  # createdAt >
    #: Ours: updatedAt < this. A console counts the jobs, asks, then acts with this bound set to
    #: the instant of the count, so the action never reaches a job that changed after the question.
    updated_before: datetime | None = None
    #: Ours: exactly the failed and retrying jobs of one error group (``ErrorGroup.key``).
    error_group: str | None = None
    #: Ours: payload or error text contains this (see ``JobListFilter.text``).
    text: str | None = None


@dataclass(frozen=True, slots=True)
class JobListFilter:
    """Filters for cursor listings. Date bounds are inclusive, as upstream."""

    name: str | None = None
    status: StatusArg = None
    created_at_from: datetime | None = None
    created_at_to: datetime | None = None
    updated_at_from: datetime | None = None
    updated_at_to: datetime | None = None
    next_run_at_from: datetime | None = None
    next_run_at_to: datetime | None = None
    search: str | None = None  # ours: prefix of the id, or a substring of the unique key
    recurring: bool | None = None  # ours: only jobs with (True) or without (False) a cron schedule
    #: Ours: the payload's JSON text, failReason or error type contains this, ignoring ASCII
    #: case (SQLite: the whole payload; MongoDB: top-level payload values, see ADR 0008).
    text: str | None = None
    #: Ours: only the failed and retrying jobs of one error group (``ErrorGroup.key``).
    error_group: str | None = None
    #: Ours: the name matches this glob, case-sensitive and whole (``*`` any run of
    #: characters, ``?`` exactly one; nothing else is special). Combines with ``name``.
    name_pattern: str | None = None
    #: Ours: payload conditions, all of which must hold (``payload_filter``: ``data.customer_id
    #: missing``, ``data.tenant = acme``); ``DataTerm`` values, or their text.
    data: tuple[DataTerm, ...] | str | None = None


def name_glob_regex(pattern: str) -> str:
    """The anchored regular expression of a name glob (``*``, ``?``; every other character literal).

    One translation for every place that judges names: the MongoDB store's ``$regex`` and a
    console that places live changes in its window. SQLite uses GLOB with ``[`` escaped.
    """
    parts = [".*" if c == "*" else "." if c == "?" else regex_literal(c) for c in pattern]
    return "^" + "".join(parts) + "$"


def regex_literal(text: str) -> str:
    """``re.escape``, and a NUL written ``\\x00``: MongoDB refuses a regular expression holding
    a NUL byte ("cannot contain an embedded null byte"), while PCRE and Python's ``re`` read
    the escape as that character, so a search for text with a NUL matches on every store."""
    escaped = re.escape(text)
    return escaped.replace("\x00", "\\x00") if "\x00" in escaped else escaped


#: ``locked_at``: running jobs by how long they have run (issue 37), for listings of
#: processing jobs only (every other job has no claim to sort by).
SortField = Literal["id", "created_at", "updated_at", "next_run_at", "locked_at"]
SortDirection = Literal["asc", "desc"]
CursorDirection = Literal["forward", "backward"]


@dataclass(frozen=True, slots=True)
class JobSort:
    """How a listing is ordered: a field and a direction (``get_jobs_with_cursor``, the console's sort)."""

    by: SortField = "id"
    direction: SortDirection = "asc"


class BulkCount(int):
    """What ``Monque.count_bulk`` returns: the count, and where the store stood when it was taken.

    An ``int`` (compare it, print it, do arithmetic), plus ``as_of``: pass the count itself
    as ``as_of=`` to ``cancel_jobs`` / ``retry_jobs`` / ``delete_jobs`` with the same
    selector, and the action reaches only jobs that count saw and that have not changed
    since, so never more than the count, whatever commits in between.

    ``scope`` names the store the position belongs to (``JobStore.position_scope``): a
    position means nothing in another store (a count taken on staging, or on a SQLite file
    since recreated, could bound an action there to every job), so a count is refused by a
    ``Monque`` on any other store. A ``BulkCount`` built by hand has none and is not checked.
    """

    as_of: int
    scope: str

    def __new__(cls, count: int, as_of: int, scope: str = "") -> BulkCount:
        made = super().__new__(cls, count)
        made.as_of = as_of
        made.scope = scope
        return made

    def __repr__(self) -> str:
        return f"BulkCount({int(self)}, as_of={self.as_of})"

    def __reduce__(self) -> tuple[type[BulkCount], tuple[int, int], dict[str, str]]:
        # The scope as state, not an argument: a version before it unpickles the count too.
        return (BulkCount, (int(self), self.as_of), {"scope": self.scope})


@dataclass(frozen=True, slots=True)
class BulkOperationResult:
    """What a bulk cancel, retry or delete did: how many jobs it changed, and the errors it met."""

    count: int
    errors: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class QueueStats:
    """Jobs per status (one name's, or the whole store's), and their total."""

    pending: int = 0
    processing: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0
    total: int = 0
    avg_processing_duration_ms: float | None = None

    def count(self, status: JobStatus | str) -> int:
        return int(getattr(self, JobStatus(status).value))


@dataclass(frozen=True, slots=True)
class CursorPage:
    """One page of a cursor listing and the cursor to the next; what ``get_jobs_with_cursor`` returns."""

    jobs: list[Job]
    cursor: str | None
    has_next_page: bool
    has_previous_page: bool


@dataclass(frozen=True, slots=True)
class WorkerSummary:
    """This process's worker of one name: its concurrency and how many jobs it runs now."""

    concurrency: int
    active_count: int


@dataclass(frozen=True, slots=True)
class QueueViewSummary:
    """One name as a queue view lists it: its counts, whether it has jobs and a worker here."""

    name: str
    has_persisted_jobs: bool
    has_registered_worker: bool
    stats: QueueStats
    worker: WorkerSummary | None


ChangeOperation = Literal["insert", "update", "delete"]


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """One committed change to the jobs collection, as `watch()` yields it.

    ``job`` is the job as it is when the event is read (MongoDB's ``updateLookup``
    semantics); it is None after a delete or when the job is gone by then.
    ``token`` resumes a watch just after this event.
    """

    operation: ChangeOperation
    job_id: str
    job: Job | None
    token: Any
    name: str | None = None
    status: JobStatus | None = None
    next_run_at_ms: int | None = None
    #: The change is an operator's request to stop the running job (issue 37): its owner,
    #: whose status-filtered feed passes such changes, cancels the handler.
    stop_requested: bool = False


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(getattr(cls, name).__set__ for name in names)


_CHANGE_FIELDS = ("operation", "job_id", "job", "token", "name", "status", "next_run_at_ms", "stop_requested")
(_set_op, _set_id, _set_job, _set_token, _set_name, _set_status, _set_next, _set_stop) = _slot_setters(
    ChangeEvent, _CHANGE_FIELDS
)
_new_object = object.__new__


def change_event(
    operation: ChangeOperation,
    job_id: str,
    job: Job | None,
    token: Any,
    name: str | None,
    status: JobStatus | None,
    next_run_at_ms: int | None,
    stop_requested: bool,
) -> ChangeEvent:
    """``ChangeEvent(...)`` with every field given, at less than half the cost.

    A store's feed makes one per committed change: a console following a drain of 5,000
    jobs/s reads ~15,000 a second (insert, claim, completion), and the frozen dataclass's
    ``__init__`` (one ``object.__setattr__`` per field, by name) was a sixth of its CPU
    (issue 40). The slots' own descriptors set the same fields directly; the result is an
    ordinary, equal and still immutable ``ChangeEvent``.
    """
    event = _new_object(ChangeEvent)
    _set_op(event, operation)
    _set_id(event, job_id)
    _set_job(event, job)
    _set_token(event, token)
    _set_name(event, name)
    _set_status(event, status)
    _set_next(event, next_run_at_ms)
    _set_stop(event, stop_requested)
    return event


# -- fleet and queue control (issue 13): in ``fleet_records``, loaded on first use ----------------------
if TYPE_CHECKING:
    from .fleet_records import InstanceInfo as InstanceInfo
    from .fleet_records import InstanceRecord as InstanceRecord
    from .fleet_records import MinuteCount as MinuteCount
    from .fleet_records import OwnerCheck as OwnerCheck
    from .fleet_records import OwnerHolding as OwnerHolding
    from .fleet_records import OwnerJobStamp as OwnerJobStamp
    from .fleet_records import OwnerRecords as OwnerRecords
    from .fleet_records import PendingHealth as PendingHealth
    from .fleet_records import QueueHealth as QueueHealth

#: Names this module still answers for, defined in ``fleet_records`` (issue 40: not created
#: on every start; ``from monque_engine.job import InstanceInfo`` works as it did).
_FLEET_RECORDS = frozenset(
    {
        "InstanceRecord",
        "OwnerHolding",
        "OwnerJobStamp",
        "OwnerRecords",
        "OwnerCheck",
        "InstanceInfo",
        "PendingHealth",
        "MinuteCount",
        "QueueHealth",
    }
)


_forwarded = forwarder(__name__, ".fleet_records", _FLEET_RECORDS)


def __getattr__(name: str) -> Any:
    return _forwarded(name)

"""The job and the value types the public API hands out.

`Job` keeps instants as epoch milliseconds (what both stores hold) and exposes them as
aware UTC datetimes; `to_document` / `from_document` translate to Monque's camelCase
MongoDB schema, so the same job can be exported, compared or written by the Mongo store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from .timeutil import datetime_to_ms, ms_to_datetime, optional_ms_to_datetime


class JobStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


ALL_STATUSES: tuple[JobStatus, ...] = tuple(JobStatus)
STATUS_BY_VALUE: dict[str, JobStatus] = {s.value: s for s in JobStatus}


class Job:
    """One job as stored. Attributes are snake_case views of the stored camelCase fields."""

    __slots__ = (
        "id", "name", "data", "status", "next_run_at_ms", "locked_at_ms", "claimed_by",
        "last_heartbeat_ms", "heartbeat_interval_ms", "fail_count", "fail_reason",
        "repeat_interval", "unique_key", "created_at_ms", "updated_at_ms",
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

    # -- datetime views -------------------------------------------------------------------
    @property
    def next_run_at(self) -> datetime:
        return ms_to_datetime(self.next_run_at_ms)

    @property
    def created_at(self) -> datetime:
        return ms_to_datetime(self.created_at_ms)

    @property
    def updated_at(self) -> datetime:
        return ms_to_datetime(self.updated_at_ms)

    @property
    def locked_at(self) -> datetime | None:
        return optional_ms_to_datetime(self.locked_at_ms)

    @property
    def last_heartbeat(self) -> datetime | None:
        return optional_ms_to_datetime(self.last_heartbeat_ms)

    @property
    def heartbeat_interval(self) -> float | None:
        """Seconds, as the public API speaks; stored as ms for Node Monque parity."""
        return None if self.heartbeat_interval_ms is None else self.heartbeat_interval_ms / 1000

    @property
    def is_recurring(self) -> bool:
        return self.repeat_interval is not None

    # -- value semantics --------------------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, slot) for slot in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Job) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable value object

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, name={self.name!r}, status={self.status.value!r}, fail_count={self.fail_count})"

    def replace(self, **changes: Any) -> Job:
        fields = {slot: getattr(self, slot) for slot in self.__slots__}
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
            "nextRunAt": self.next_run_at,
            "failCount": self.fail_count,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }
        optional = {
            "lockedAt": self.locked_at,
            "claimedBy": self.claimed_by,
            "lastHeartbeat": self.last_heartbeat,
            "heartbeatInterval": self.heartbeat_interval_ms,
            "failReason": self.fail_reason,
            "repeatInterval": self.repeat_interval,
            "uniqueKey": self.unique_key,
        }
        doc.update({key: value for key, value in optional.items() if value is not None})
        return doc

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> Job:
        """Read a Monque document (as Node Monque or our Mongo store writes it)."""

        def ms(key: str) -> int | None:
            value = doc.get(key)
            return None if value is None else datetime_to_ms(value)

        heartbeat_interval = doc.get("heartbeatInterval")
        return cls(
            id=str(doc["_id"]),
            name=doc["name"],
            data=doc.get("data"),
            status=STATUS_BY_VALUE[doc["status"]],
            next_run_at_ms=datetime_to_ms(doc["nextRunAt"]),
            created_at_ms=datetime_to_ms(doc["createdAt"]),
            updated_at_ms=datetime_to_ms(doc["updatedAt"]),
            fail_count=int(doc.get("failCount", 0)),
            locked_at_ms=ms("lockedAt"),
            claimed_by=doc.get("claimedBy"),
            last_heartbeat_ms=ms("lastHeartbeat"),
            heartbeat_interval_ms=None if heartbeat_interval is None else int(heartbeat_interval),
            fail_reason=doc.get("failReason"),
            repeat_interval=doc.get("repeatInterval"),
            unique_key=doc.get("uniqueKey"),
        )


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

    def to_job(self) -> Job:
        return Job(
            id=self.id,
            name=self.name,
            data=self.data,
            status=JobStatus.PENDING,
            next_run_at_ms=self.next_run_at_ms,
            created_at_ms=self.created_at_ms,
            updated_at_ms=self.created_at_ms,
            repeat_interval=self.repeat_interval,
            unique_key=self.unique_key,
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


SortField = Literal["id", "created_at", "updated_at", "next_run_at"]
SortDirection = Literal["asc", "desc"]
CursorDirection = Literal["forward", "backward"]


@dataclass(frozen=True, slots=True)
class JobSort:
    by: SortField = "id"
    direction: SortDirection = "asc"


@dataclass(frozen=True, slots=True)
class BulkOperationResult:
    count: int
    errors: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class QueueStats:
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
    jobs: list[Job]
    cursor: str | None
    has_next_page: bool
    has_previous_page: bool


@dataclass(frozen=True, slots=True)
class WorkerSummary:
    concurrency: int
    active_count: int


@dataclass(frozen=True, slots=True)
class QueueViewSummary:
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

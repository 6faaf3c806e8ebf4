"""Upstream's DTOs (``@monque/management`` 0.2.2, ``src/schemas``) as pydantic models.

Strict both ways, as upstream's ``.strict()`` zod objects: an unknown field in a request is
refused, and a response is validated before it is sent, so it carries no field the contract
lacks. Class names are the OpenAPI component names; nested models whose names are not
components are inlined by ``openapi.py``, as upstream's generator inlines them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from .types import Count, IsoInstant, IsoOut, StatusArg, StatusName, absent


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SchedulerState(Strict):
    healthy: bool


class SchedulerHealth(Strict):
    status: Literal["ok", "unavailable"]
    scheduler: SchedulerState


class CapabilityActions(Strict):
    read: bool
    cancel: bool
    cancelBulk: bool
    retry: bool
    retryBulk: bool
    reschedule: bool
    delete: bool
    deleteBulk: bool


class Capabilities(Strict):
    readOnly: bool
    actions: CapabilityActions


class Job(Strict):
    id: str
    name: str
    status: StatusName
    payload: Any
    nextRunAt: IsoOut
    lockedAt: IsoOut | None
    claimedBy: str | None
    lastHeartbeat: IsoOut | None
    heartbeatInterval: Count = absent()
    failCount: Count
    failureReason: str | None
    repeatInterval: str = absent()
    uniqueKey: str = absent()
    createdAt: IsoOut
    updatedAt: IsoOut


class JobCursorPage(Strict):
    jobs: list[Job]
    cursor: str | None
    hasNextPage: bool
    hasPreviousPage: bool


class JobSelector(Strict):
    name: str = absent()
    status: StatusArg = absent()
    olderThan: IsoInstant = absent()
    newerThan: IsoInstant = absent()


class BulkActionError(Strict):
    jobId: str
    error: str


class BulkActionResult(Strict):
    count: Count
    errors: list[BulkActionError]


class DeleteJob(Strict):
    deleted: Annotated[Literal[True], WithJsonSchema({"const": True})]


class ManagementError(Strict):
    error: str


class QueueStats(Strict):
    pending: Count
    processing: Count
    completed: Count
    failed: Count
    cancelled: Count
    total: Count
    avgProcessingDurationMs: Annotated[float, Field(ge=0)] = absent()


class QueueViewWorker(Strict):
    concurrency: Count
    activeCount: Count


class QueueViewSummary(Strict):
    name: str
    hasPersistedJobs: bool
    hasRegisteredWorker: bool
    stats: QueueStats
    worker: QueueViewWorker | None


class QueueViewSummaryList(Strict):
    queueViews: list[QueueViewSummary]


class RescheduleJobRequest(Strict):
    nextRunAt: IsoInstant


class JobListQuery(Strict):
    """``GET /api/v1/jobs``'s query (no component: its fields become the parameters)."""

    cursor: str = absent()
    limit: str = absent()
    name: str = absent()
    status: StatusArg = absent()
    createdAtFrom: IsoInstant = absent()
    createdAtTo: IsoInstant = absent()
    updatedAtFrom: IsoInstant = absent()
    updatedAtTo: IsoInstant = absent()
    nextRunAtFrom: IsoInstant = absent()
    nextRunAtTo: IsoInstant = absent()
    sortBy: Literal["identifier", "createdAt", "updatedAt", "nextRunAt"] = absent()
    sortDirection: Literal["asc", "desc"] = absent()


class JobStatsQuery(Strict):
    """``GET /api/v1/jobs/stats``'s query."""

    name: str = absent()


class NoQuery(Strict):
    """What a route that takes no query parameter is handed (any it is sent is ignored, as upstream)."""

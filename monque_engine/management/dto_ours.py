"""The DTOs of our own routes (``/api/x/v1``): what upstream's strict DTOs cannot carry.

Component names start with ``X`` so they never collide with a component upstream adds later.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema

from .dto import Strict
from .types import AsOfText, Count, FilterText, IsoInstant, IsoOut, JobNameText, LimitText, StatusArg, absent


class XSelector(Strict):
    """A bulk selection in the words of ``GET /api/v1/jobs``'s filter (the same fields select
    the same jobs there and here), and an error group (``errorGroups[].key``)."""

    name: FilterText = absent()
    status: StatusArg = absent()
    createdAtFrom: IsoInstant = absent()
    createdAtTo: IsoInstant = absent()
    updatedAtFrom: IsoInstant = absent()
    updatedAtTo: IsoInstant = absent()
    nextRunAtFrom: IsoInstant = absent()
    nextRunAtTo: IsoInstant = absent()
    errorGroup: FilterText = absent()
    #: Payload conditions, all of which must hold, in the console's filter language
    #: (``data.customer_id missing``, ``data.tenant = acme``; ADR 0022).
    data: Annotated[
        list[str],
        WithJsonSchema(
            {
                "type": "array",
                "minItems": 1,
                "maxItems": 8,
                "items": {"type": "string", "pattern": "^\\s*[dD][aA][tT][aA]\\.\\S"},
            }
        ),
    ] = absent()


class XBoundedSelector(XSelector):
    """A bounded bulk action: the selection counted, and the ``asOf`` its count returned."""

    asOf: AsOfText


class XBulkCount(Strict):
    """How many jobs the action would reach now, and ``asOf``: hand it back to the action and
    it acts on no more than ``count`` jobs, whatever commits in between."""

    count: Count
    asOf: str


class XErrorGroup(Strict):
    key: str
    name: str
    errorType: str | None
    pattern: str
    sampleMessage: str | None
    count: Count
    retrying: Count
    failed: Count
    firstSeen: IsoOut
    lastSeen: IsoOut
    perMinute: list[Count]


class XErrorGroupList(Strict):
    errorGroups: list[XErrorGroup]


class XErrorGroupQuery(Strict):
    name: FilterText = absent()
    limit: LimitText = absent()


class XAttempt(Strict):
    attempt: Count
    outcome: str
    instanceId: str | None
    startedAt: IsoOut | None
    endedAt: IsoOut
    durationMs: Count | None
    errorType: str | None
    errorMessage: str | None
    traceback: str | None


class XAttemptList(Strict):
    jobId: str
    attempts: list[XAttempt]


class XInstance(Strict):
    id: str
    inferred: bool
    alive: bool
    jobsHeld: Count
    lastHeartbeat: IsoOut | None
    heartbeatIntervalMs: Count
    host: str | None
    pid: int | None
    version: str | None
    startedAt: IsoOut | None
    workers: dict[str, int]
    running: int | None
    processed: int | None
    failed: int | None


class XInstanceList(Strict):
    instances: list[XInstance]


class XPausedName(Strict):
    name: str
    pausedAt: IsoOut


class XPausedList(Strict):
    paused: list[XPausedName]


class XQueueName(Strict):
    name: Annotated[JobNameText, Field(min_length=1)]


class XPauseResult(Strict):
    name: str
    paused: bool
    #: False when the name already was in the state asked for.
    changed: bool


class XStopRequest(Strict):
    """Stop a running job (issue 37). ``claimedAt``: the ``lockedAt`` of the attempt the caller
    saw; the request then reaches that attempt only, never a later run of the job."""

    claimedAt: IsoInstant = absent()


class XProgress(Strict):
    fraction: float
    message: str | None
    at: IsoOut


class XJobRun(Strict):
    """A job's running attempt as its owner reports it: who holds it since when, its progress,
    a stop request or a passed time limit (each speaks for this attempt only)."""

    jobId: str
    status: str
    claimedBy: str | None
    lockedAt: IsoOut | None
    lastHeartbeat: IsoOut | None
    timeoutMs: Count | None
    overLimitAt: IsoOut | None
    stopRequestedAt: IsoOut | None
    progress: XProgress | None


BulkActionName = Literal["cancel", "retry", "delete", "stop"]

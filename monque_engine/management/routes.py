"""The route table: upstream's 13 operations (``src/orpc/contract.ts``) and our own under
``/api/x/v1``. ``openapi.py`` writes the document from this table, and ``core.py``
dispatches by it, so the two cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from . import dto, dto_ours
from .errors import ApiError

V1 = "/api/v1"
X = "/api/x/v1"
#: Upstream's error sets: mutations answer 400, 403, 409, 500; single-job ones 404 too.
MUTATION_ERRORS = (400, 403, 409, 500)
SINGLE_JOB_ERRORS = (400, 403, 404, 409, 500)
READ_ERRORS_OURS = (400, 403, 500)
#: Our bounded bulk actions: upstream's three, and stopping running jobs (issue 37).
BOUNDED_VERBS = ("cancel", "retry", "delete", "stop")


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str
    operation_id: str
    handler: str
    action: str
    response: type[BaseModel]
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    #: Upstream's "detailed" single-job routes declare an optional body of any type.
    any_body: bool = False
    errors: tuple[int, ...] = ()
    upstream: bool = True
    summary: str | None = None

    @property
    def write(self) -> bool:
        return self.action != "read"

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.path.strip("/").split("/"))


def _single(method: str, path: str, operation_id: str, handler: str, action: str, response: type[BaseModel]) -> Route:
    return Route(method, path, operation_id, handler, action, response, any_body=True, errors=SINGLE_JOB_ERRORS)


ROUTES: tuple[Route, ...] = (
    Route("GET", f"{V1}/health", "getSchedulerHealth", "health", "read", dto.SchedulerHealth),
    Route("GET", f"{V1}/capabilities", "getCapabilities", "capabilities", "read", dto.Capabilities),
    Route("GET", f"{V1}/queue-views", "listQueueViews", "queue_views", "read", dto.QueueViewSummaryList),
    Route("GET", f"{V1}/jobs", "listJobs", "list_jobs", "read", dto.JobCursorPage, query=dto.JobListQuery),
    Route("GET", f"{V1}/jobs/stats", "getJobStats", "job_stats", "read", dto.QueueStats, query=dto.JobStatsQuery),
    Route("GET", f"{V1}/jobs/{{id}}", "getJob", "get_job", "read", dto.Job, any_body=True),
    _single("POST", f"{V1}/jobs/{{id}}/actions/cancel", "cancelJob", "cancel_job", "cancel", dto.Job),
    _single("POST", f"{V1}/jobs/{{id}}/actions/retry", "retryJob", "retry_job", "retry", dto.Job),
    Route(
        "POST",
        f"{V1}/jobs/{{id}}/actions/reschedule",
        "rescheduleJob",
        "reschedule_job",
        "reschedule",
        dto.Job,
        body=dto.RescheduleJobRequest,
        errors=SINGLE_JOB_ERRORS,
    ),
    _single("DELETE", f"{V1}/jobs/{{id}}", "deleteJob", "delete_job", "delete", dto.DeleteJob),
    *(
        Route(
            "POST",
            f"{V1}/jobs/actions/{verb}",
            f"{verb}Jobs",
            "bulk",
            f"{verb}Bulk",
            dto.BulkActionResult,
            body=dto.JobSelector,
            errors=MUTATION_ERRORS,
        )
        for verb in ("cancel", "retry", "delete")
    ),
    # -- ours ------------------------------------------------------------------------------------
    *(
        Route(
            "POST",
            f"{X}/jobs/actions/{verb}/count",
            f"x{verb.title()}JobsCount",
            "bulk_count",
            "read",
            dto_ours.XBulkCount,
            body=dto_ours.XSelector,
            errors=READ_ERRORS_OURS,
            upstream=False,
            summary=f"How many jobs a bounded {verb} would reach now, and the asOf to bound it by",
        )
        for verb in BOUNDED_VERBS
    ),
    *(
        Route(
            "POST",
            f"{X}/jobs/actions/{verb}",
            f"x{verb.title()}JobsBounded",
            "bulk_bounded",
            f"{verb}Bulk",
            dto.BulkActionResult,
            body=dto_ours.XBoundedSelector,
            errors=MUTATION_ERRORS,
            upstream=False,
            summary=f"{verb.title()} the selected jobs, never more than the count that returned asOf",
        )
        for verb in BOUNDED_VERBS
    ),
    Route(
        "POST",
        f"{X}/jobs/{{id}}/actions/stop",
        "xStopJob",
        "stop_job",
        "stop",
        dto.Job,
        body=dto_ours.XStopRequest,
        errors=SINGLE_JOB_ERRORS,
        upstream=False,
        summary="Stop a running job: its owner cancels the handler and the job ends cancelled (upstream's cancel "
        "is for pending jobs only)",
    ),
    Route(
        "GET",
        f"{X}/jobs/{{id}}/run",
        "xGetJobRun",
        "job_run",
        "read",
        dto_ours.XJobRun,
        errors=(400, 403, 404, 500),
        upstream=False,
        summary="A job's running attempt: owner, claim time, progress, stop request, time limit",
    ),
    Route(
        "GET",
        f"{X}/error-groups",
        "xListErrorGroups",
        "error_groups",
        "read",
        dto_ours.XErrorGroupList,
        query=dto_ours.XErrorGroupQuery,
        errors=READ_ERRORS_OURS,
        upstream=False,
        summary="Failed and retrying jobs grouped by name, exception type and message",
    ),
    Route(
        "GET",
        f"{X}/jobs/{{id}}/attempts",
        "xListJobAttempts",
        "attempts",
        "read",
        dto_ours.XAttemptList,
        errors=(400, 403, 404, 500),
        upstream=False,
        summary="A job's last finished attempts, oldest first",
    ),
    Route(
        "GET",
        f"{X}/instances",
        "xListInstances",
        "instances",
        "read",
        dto_ours.XInstanceList,
        errors=READ_ERRORS_OURS,
        upstream=False,
        summary="Scheduler instances the store knows of",
    ),
    Route(
        "GET",
        f"{X}/paused",
        "xListPaused",
        "paused",
        "read",
        dto_ours.XPausedList,
        errors=READ_ERRORS_OURS,
        upstream=False,
        summary="Paused job names",
    ),
    *(
        Route(
            "POST",
            f"{X}/queues/actions/{verb}",
            f"x{verb.title()}Queue",
            verb,
            verb,
            dto_ours.XPauseResult,
            body=dto_ours.XQueueName,
            errors=(400, 403, 500),
            upstream=False,
            summary=f"{verb.title()} claiming jobs of one name, on every Python worker of this store",
        )
        for verb in ("pause", "resume")
    ),
)

UPSTREAM_OPERATIONS = tuple(route.operation_id for route in ROUTES if route.upstream)


def match_route(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route for ``method path`` and its path parameters; 404 / 405 as ``ApiError``."""
    segments = tuple(path.strip("/").split("/"))
    matching = [(route, params) for route in ROUTES if (params := _match(route.segments, segments)) is not None]
    # the most literal path wins, whatever the method: /jobs/stats is GET only, not also
    # DELETE /jobs/{id} with the id "stats" (which the 405 listed, against the document)
    fewest = min((len(params) for _, params in matching), default=0)
    matching = [(route, params) for route, params in matching if len(params) == fewest]
    asked = method.upper()
    allowed: list[str] = []
    for route, params in matching:
        if route.method == asked or (asked == "HEAD" and route.method == "GET"):
            return route, params
        allowed.append(route.method)
    if allowed:
        methods = allowed_methods(allowed)
        raise ApiError(
            405, f"{method.upper()} is not allowed on {path}; use {' or '.join(methods)}", {"Allow": ", ".join(methods)}
        )
    raise ApiError(404, f"No route {path}; the routes are listed by GET /api/x/v1/openapi.json")


def allowed_methods(methods: list[str]) -> list[str]:
    """The ``Allow`` list for a path's routes: HEAD wherever GET is (RFC 9110 9.3.2: a HEAD is
    answered as the GET would be, without the body)."""
    return sorted({*methods, *(["HEAD"] if "GET" in methods else [])})


def _match(pattern: tuple[str, ...], segments: tuple[str, ...]) -> dict[str, str] | None:
    if len(pattern) != len(segments):
        return None
    params: dict[str, str] = {}
    for want, have in zip(pattern, segments, strict=True):
        if want.startswith("{"):
            # literal segments win: /jobs/stats is not /jobs/{id}; /jobs/actions/... not /jobs/{id}/...
            params[want[1:-1]] = have
        elif want != have:
            return None
    return params

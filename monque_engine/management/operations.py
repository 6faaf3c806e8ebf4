"""The operations over a ``Monque``: upstream's 13 (``src/orpc/operations.ts``) and ours.

Each takes the validated inputs and returns the response body as a plain dict (validated
by ``core``). Single-job routes resolve the job first (400 for a malformed id, 404 for an
unknown one), as upstream does; bulk routes call the engine's bulk calls, whose selections
``inputs`` built through the engine's rule for filters.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidCursorError
from ..job import BulkOperationResult, Job
from ..scheduler.monque import Monque
from . import dto, dto_ours
from .bounds import decode_as_of, encode_as_of
from .errors import NOT_FOUND, ApiError, not_found
from .inputs import cursor_refused, instant, job_id, limit_of, list_request, listing, selector
from .mapping import attempt_dto, error_group_dto, instance_dto, iso, job_run_dto, queue_view_dto, stats_dto
from .messages import ApiRequest, Policy
from .shown import one_job, shown_jobs

#: The actions ``getCapabilities`` reports, in upstream's order.
CAPABILITY_ACTIONS = ("read", "cancel", "cancelBulk", "retry", "retryBulk", "reschedule", "delete", "deleteBulk")


class Operations:
    def __init__(self, monque: Monque, policy: Policy) -> None:
        self.monque = monque
        self.policy = policy

    # -- upstream: reads -------------------------------------------------------------------------
    async def health(self, **_: Any) -> dict[str, Any]:
        """Upstream reports ``isHealthy()`` (started and sound). A Monque opened only to serve
        this API runs no workers; for it, health is whether its store answers soundly."""
        monque = self.monque
        healthy = monque.is_healthy() if monque.is_running else monque.store.health_error() is None
        return {"status": "ok" if healthy else "unavailable", "scheduler": {"healthy": healthy}}

    async def capabilities(self, request: ApiRequest, **_: Any) -> dict[str, Any]:
        actions = {action: await self.policy.allowed(action, request) for action in CAPABILITY_ACTIONS}
        return {"readOnly": self.policy.read_only, "actions": actions}

    async def queue_views(self, **_: Any) -> dict[str, Any]:
        return {"queueViews": [queue_view_dto(view) for view in await self.monque.get_queue_view_summaries()]}

    async def list_jobs(self, query: dto.JobListQuery, **_: Any) -> dict[str, Any]:
        cursor, limit, listing, sort = list_request(query)
        try:
            page = await self.monque.get_jobs_with_cursor(cursor, limit, "forward", listing, sort)
        except InvalidCursorError as error:
            raise cursor_refused(cursor or "", error) from None
        return {
            "jobs": shown_jobs(page.jobs),
            "cursor": page.cursor,
            "hasNextPage": page.has_next_page,
            "hasPreviousPage": page.has_previous_page,
        }

    async def job_stats(self, query: dto.JobStatsQuery, **_: Any) -> dict[str, Any]:
        if query.name is not None:
            selector(query.name, None, None, None)  # the rule for filters: a blank name is 400
        return stats_dto(await self.monque.get_queue_stats(query.name))

    async def get_job(self, params: dict[str, str], **_: Any) -> dict[str, Any]:
        return one_job(await self._job(params["id"]))

    # -- upstream: single-job writes ---------------------------------------------------------------
    async def cancel_job(self, params: dict[str, str], **_: Any) -> dict[str, Any]:
        job = await self._job(params["id"])
        return self._changed(await self.monque.cancel_job(job.id))

    async def retry_job(self, params: dict[str, str], **_: Any) -> dict[str, Any]:
        job = await self._job(params["id"])
        return self._changed(await self.monque.retry_job(job.id))

    async def reschedule_job(self, params: dict[str, str], body: dto.RescheduleJobRequest, **_: Any) -> dict[str, Any]:
        job = await self._job(params["id"])
        return self._changed(await self.monque.reschedule_job(job.id, instant(body.nextRunAt)))

    async def delete_job(self, params: dict[str, str], **_: Any) -> dict[str, Any]:
        job = await self._job(params["id"])
        if not await self.monque.delete_job(job.id):
            raise not_found()
        return {"deleted": True}

    # -- upstream: bulk writes -------------------------------------------------------------------
    async def bulk(self, request: ApiRequest, body: dto.JobSelector, **_: Any) -> dict[str, Any]:
        chosen = selector(body.name, body.status, body.olderThan, body.newerThan)
        verb = _verb(request.path)
        act = {"cancel": self.monque.cancel_jobs, "retry": self.monque.retry_jobs, "delete": self.monque.delete_jobs}
        return _bulk_result(await act[verb](chosen))

    # -- ours: bounded bulk ----------------------------------------------------------------------
    async def bulk_count(self, request: ApiRequest, body: dto_ours.XSelector, **_: Any) -> dict[str, Any]:
        verb = _verb(request.path.rstrip("/").removesuffix("/count"))
        chosen = listing(body)
        counted = await self.monque.count_bulk(verb, chosen)
        return {"count": int(counted), "asOf": encode_as_of(verb, _selection(body), counted)}

    async def bulk_bounded(self, request: ApiRequest, body: dto_ours.XBoundedSelector, **_: Any) -> dict[str, Any]:
        verb = _verb(request.path)
        counted = decode_as_of(verb, _selection(body), body.asOf, self.monque.store.position_scope)
        chosen = listing(body)
        act = {
            "cancel": self.monque.cancel_jobs,
            "retry": self.monque.retry_jobs,
            "delete": self.monque.delete_jobs,
            "stop": self.monque.stop_jobs,
        }
        return _bulk_result(await act[verb](chosen, as_of=counted))

    # -- ours: running jobs (issue 37) -------------------------------------------------------------
    async def stop_job(self, params: dict[str, str], body: dto_ours.XStopRequest, **_: Any) -> dict[str, Any]:
        """Stop the running attempt (the one claimed at ``claimedAt`` when given). A refusal
        (an owner that cannot hear it, an attempt that already ended) is a 409 that says why."""
        job = await self._job(params["id"])
        claimed_at = instant(body.claimedAt)
        return self._changed(await self.monque.cancel_job(job.id, running=True, claimed_at=claimed_at))

    async def job_run(self, params: dict[str, str], **_: Any) -> dict[str, Any]:
        return one_job(await self._job(params["id"]), build=job_run_dto, model=dto_ours.XJobRun)

    # -- ours: reads the console has -------------------------------------------------------------
    async def error_groups(self, query: dto_ours.XErrorGroupQuery, **_: Any) -> dict[str, Any]:
        if query.name is not None:
            selector(query.name, None, None, None)
        groups = await self.monque.error_groups(query.name, None, limit_of(query.limit, 200, 1000))
        return {"errorGroups": [error_group_dto(group) for group in groups]}

    async def attempts(self, params: dict[str, str], **_: Any) -> dict[str, Any]:
        return one_job(await self._job(params["id"]), build=_attempts_dto, model=dto_ours.XAttemptList)

    async def instances(self, **_: Any) -> dict[str, Any]:
        return {"instances": [instance_dto(info) for info in await self.monque.instances()]}

    async def paused(self, **_: Any) -> dict[str, Any]:
        paused = await self.monque.paused()
        return {"paused": [{"name": name, "pausedAt": iso(_ms(when))} for name, when in sorted(paused.items())]}

    async def pause(self, body: dto_ours.XQueueName, **_: Any) -> dict[str, Any]:
        changed = await self.monque.pause(body.name)
        return {"name": body.name, "paused": True, "changed": changed}

    async def resume(self, body: dto_ours.XQueueName, **_: Any) -> dict[str, Any]:
        changed = await self.monque.resume(body.name)
        return {"name": body.name, "paused": False, "changed": changed}

    # -- helpers ---------------------------------------------------------------------------------
    async def _job(self, text: str) -> Job:
        job = await self.monque.get_job(job_id(text))
        if job is None:
            raise not_found()
        return job

    @staticmethod
    def _changed(job: Job | None) -> dict[str, Any]:
        if job is None:  # gone between the read and the write
            raise ApiError(404, NOT_FOUND)
        return one_job(job, acted=True)


def _attempts_dto(job: Job) -> dict[str, Any]:
    return {"jobId": job.id, "attempts": [attempt_dto(attempt) for attempt in job.attempts]}


def _verb(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _selection(body: dto_ours.XSelector) -> dict[str, Any]:
    """The selection's fields as sent (``asOf`` aside): what an ``asOf`` is bound to."""
    return body.model_dump(mode="json", exclude_unset=True, exclude={"asOf"})


def _bulk_result(result: BulkOperationResult) -> dict[str, Any]:
    return {
        "count": result.count,
        "errors": [
            {"jobId": str(error.get("jobId", "")), "error": str(error.get("error", ""))} for error in result.errors
        ],
    }


def _ms(when: Any) -> int:
    from ..timeutil import datetime_to_ms

    return datetime_to_ms(when)

"""A stored job as the API answers it, checked against the ``Job`` model one job at a time.

A row written around the engine (by hand, by another program) can hold what the engine
reads but the contract cannot carry: a date past the year 9999, a negative or 2**53+ count.
Checked only as a whole response, one such job made a listing page a 500, every page it fell
on. Here a listing leaves it out with one warning, as the engine's listings leave out a row
they cannot read, and a read by id names it (500, the row and what to fix).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from ..job import Job
from .dto import Job as JobModel
from .errors import ApiError
from .mapping import job_dto

log = logging.getLogger("monque_engine.management")


class UnshowableJobError(Exception):
    """The job's one-line reason."""


def _checked(
    job: Job, build: Callable[[Job], dict[str, Any]] = job_dto, model: type[BaseModel] = JobModel
) -> tuple[dict[str, Any], BaseModel]:
    """``build(job)`` (``job_dto``) and ``model`` (``Job``) made from it; ``UnshowableJobError``
    naming the field when the model refuses it. Every route that answers with one stored
    job's fields (the job, its running attempt, its attempts, a listing's jobs) goes through
    here, so none of them turns such a row into a generic 500."""
    try:
        body = build(job)
        return body, model.model_validate(body)
    except ValidationError as error:
        first: Any = error.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"])
        raise UnshowableJobError(f"{field}: {first['msg']}") from None
    except (OverflowError, ValueError) as error:  # a date outside the years 1-9999
        raise UnshowableJobError(f"a date out of range ({error})") from None


def shown_jobs(jobs: list[Job]) -> list[BaseModel]:
    """Every job ``_checked`` accepts, in order, as its validated model (the response's own
    check takes a model instance as it is: each job is validated once); the others are
    logged and left out."""
    shown: list[BaseModel] = []
    for job in jobs:
        try:
            shown.append(_checked(job)[1])
        except UnshowableJobError as error:
            log.warning("management API: stored job %s left out of a listing: %s; fix or delete it", job.id, error)
    return shown


def one_job(
    job: Job,
    *,
    acted: bool = False,
    build: Callable[[Job], dict[str, Any]] = job_dto,
    model: type[BaseModel] = JobModel,
) -> dict[str, Any]:
    """The job's body (``_checked``), or a 500 naming the job and what is wrong (``acted``: after a change
    that was made, which the answer says, so a client does not repeat it)."""
    try:
        return _checked(job, build, model)[0]
    except UnshowableJobError as error:
        done = " (the action was done)" if acted else ""
        message = f"Stored job {job.id} holds a value the API cannot answer with{done}: {error}; fix or delete it"
        log.error("management API: %s", message)
        raise ApiError(500, message) from None

"""Upstream's job guards (``isPendingJob`` … ``isValidJobStatus``), in snake_case.

Node Monque exports these helpers so callers can filter listings (``filter(is_failed_job,
jobs)``) and validate status text from outside (a query string, a config file) without
comparing raw strings. They take our ``Job`` or a stored document (a mapping in Monque's
camelCase schema, as ``Job.to_document`` or a raw MongoDB read gives), so code that works
on exported documents reads the same as code that works on jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .job import STATUS_BY_VALUE, JobStatus

_MISSING = object()


def _field(job: Any, attribute: str, key: str) -> Any:
    if isinstance(job, Mapping):
        return job.get(key, _MISSING)
    return getattr(job, attribute, _MISSING)


def is_valid_job_status(value: object) -> bool:
    """True for one of the five status strings (``"pending"`` … ``"cancelled"``, or a
    ``JobStatus``); False for anything else, other case or type included, as upstream."""
    return isinstance(value, str) and value in STATUS_BY_VALUE


def is_persisted_job(job: Any) -> bool:
    """True when the job has an id (``Job.id``, or ``_id`` in a document) that is not None."""
    if isinstance(job, Mapping):
        return job.get("_id") is not None
    return getattr(job, "id", None) is not None


def _has_status(job: Any, status: JobStatus) -> bool:
    return bool(_field(job, "status", "status") == status.value)


def is_pending_job(job: Any) -> bool:
    return _has_status(job, JobStatus.PENDING)


def is_processing_job(job: Any) -> bool:
    return _has_status(job, JobStatus.PROCESSING)


def is_completed_job(job: Any) -> bool:
    return _has_status(job, JobStatus.COMPLETED)


def is_failed_job(job: Any) -> bool:
    return _has_status(job, JobStatus.FAILED)


def is_cancelled_job(job: Any) -> bool:
    return _has_status(job, JobStatus.CANCELLED)


def is_recurring_job(job: Any) -> bool:
    """True when the job has a ``repeatInterval`` that is not None (an empty string counts,
    as upstream: it is defined, though no schedule)."""
    value = _field(job, "repeat_interval", "repeatInterval")
    return value is not _MISSING and value is not None


__all__ = [
    "is_cancelled_job",
    "is_completed_job",
    "is_failed_job",
    "is_pending_job",
    "is_persisted_job",
    "is_processing_job",
    "is_recurring_job",
    "is_valid_job_status",
]

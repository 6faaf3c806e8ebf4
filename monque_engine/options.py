"""Engine options: upstream's, in snake_case, with intervals in seconds."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field, fields
from typing import Any

from .errors import MonqueError


class InvalidOptionError(MonqueError, ValueError):
    pass


@dataclass(frozen=True, slots=True)
class JobRetention:
    """Delete finished jobs once their ``updatedAt`` is older than these ages (seconds)."""

    completed: float | None = None
    failed: float | None = None
    interval: float = 3600.0


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_retention(retention: object) -> None:
    """Ages are zero or more seconds (or None); the interval is positive, so purging never spins."""
    if not isinstance(retention, JobRetention):
        raise InvalidOptionError(
            f"Option job_retention must be a JobRetention or a dict with completed, failed, interval; got {retention!r}"
        )
    for name in ("completed", "failed"):
        value = getattr(retention, name)
        if value is not None and (not _is_number(value) or value < 0):
            raise InvalidOptionError(f"Option job_retention.{name} must be None or zero or more seconds, got {value!r}")
    if not _is_number(retention.interval) or retention.interval <= 0:
        raise InvalidOptionError(
            f"Option job_retention.interval must be a positive number of seconds, got {retention.interval!r}"
        )


def default_instance_id() -> str:
    """Hostname, pid and a short random tail: readable in the console, unique across restarts."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True, slots=True)
class MonqueOptions:
    collection_name: str = "monque_jobs"
    poll_interval: float = 1.0
    safety_poll_interval: float = 30.0
    max_retries: int = 10
    base_retry_interval: float = 1.0
    max_backoff_delay: float = 86_400.0
    shutdown_timeout: float = 30.0
    worker_concurrency: int = 5
    instance_concurrency: int | None = None
    lock_timeout: float = 1_800.0
    scheduler_instance_id: str = field(default_factory=default_instance_id)
    heartbeat_interval: float = 30.0
    recover_stale_jobs: bool = True
    stale_recovery_interval: float | None = None  # default: lock_timeout / 4, at most 60 s
    job_retention: JobRetention | None = None
    max_payload_size: int | None = None
    stats_cache_ttl: float = 5.0
    skip_index_creation: bool = False

    def __post_init__(self) -> None:
        positive = ("poll_interval", "safety_poll_interval", "base_retry_interval", "max_backoff_delay",
                    "lock_timeout", "heartbeat_interval")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise InvalidOptionError(f"Option {name} must be a positive number of seconds, got {value!r}")
        for name in ("shutdown_timeout", "stats_cache_ttl"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
                raise InvalidOptionError(f"Option {name} must be zero or more seconds, got {value!r}")
        for name in ("max_retries", "worker_concurrency"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidOptionError(f"Option {name} must be an integer of at least 1, got {value!r}")
        for name in ("instance_concurrency", "max_payload_size"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise InvalidOptionError(f"Option {name} must be None or an integer of at least 1, got {value!r}")
        if self.stale_recovery_interval is not None and (
            not _is_number(self.stale_recovery_interval) or self.stale_recovery_interval <= 0
        ):
            raise InvalidOptionError("Option stale_recovery_interval must be a positive number of seconds")
        if not self.scheduler_instance_id or not isinstance(self.scheduler_instance_id, str):
            raise InvalidOptionError("Option scheduler_instance_id must be a non-empty string")
        if isinstance(self.job_retention, dict):
            try:
                object.__setattr__(self, "job_retention", JobRetention(**self.job_retention))
            except TypeError as error:
                raise InvalidOptionError(f"Option job_retention: {error}; use completed, failed, interval") from None
        if self.job_retention is not None:
            _check_retention(self.job_retention)

    @property
    def effective_stale_recovery_interval(self) -> float:
        if self.stale_recovery_interval is not None:
            return self.stale_recovery_interval
        return min(self.lock_timeout / 4, 60.0)

    @classmethod
    def from_kwargs(cls, options: dict[str, Any]) -> MonqueOptions:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise InvalidOptionError(f"Unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}")
        return cls(**options)

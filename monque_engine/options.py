"""Engine options: upstream's, in snake_case, with intervals in seconds."""

from __future__ import annotations

import math
import os
import socket
from dataclasses import dataclass, field, fields
from typing import Any

from .errors import MonqueError
from .timeouts import timeout_problem
from .validation import _CONTROL


class InvalidOptionError(MonqueError, ValueError):
    pass


@dataclass(frozen=True, slots=True)
class JobRetention:
    """Delete finished jobs once their ``updatedAt`` is older than these ages (seconds)."""

    completed: float | None = None
    failed: float | None = None
    interval: float = 3600.0


#: The longest interval or timeout accepted, in seconds (about 31 years). Far above any
#: useful setting, and low enough that ms arithmetic, timers and database integers hold it.
MAX_SECONDS = 1_000_000_000.0
#: The largest count accepted (concurrency, retries, payload size): a signed 32-bit int.
MAX_COUNT = 2**31 - 1


def _is_number(value: object) -> bool:
    """A real, finite number (NaN and infinity are refused: NaN compares false with
    everything, so a NaN interval would spin or never fire, and infinity breaks ms maths)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_seconds(name: str, value: object, *, allow_zero: bool) -> None:
    """An interval option: a finite number of seconds, positive (or zero where allowed)."""
    low_ok = _is_number(value) and (value >= 0 if allow_zero else value > 0)  # type: ignore[operator]
    if not low_ok or value > MAX_SECONDS:  # type: ignore[operator]
        kind = "zero or more" if allow_zero else "a positive number of"
        raise InvalidOptionError(
            f"Option {name} must be {kind} seconds (finite, at most {MAX_SECONDS:.0e}), got {value!r}"
        )


def check_count(name: str, value: object, *, optional: bool = False) -> None:
    """A count option: an integer from 0 to MAX_COUNT (or None where optional).

    Zero is a limit, as upstream keeps it ("preserves zero limits"): concurrency 0 claims
    nothing, ``max_retries=0`` makes the first failure final (as 1 does), and
    ``max_payload_size=0`` refuses every payload.
    """
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_COUNT:
        prefix = "None or " if optional else ""
        raise InvalidOptionError(f"Option {name} must be {prefix}an integer from 0 to {MAX_COUNT}, got {value!r}")


def _check_retention(retention: object) -> None:
    """Ages are zero or more seconds (or None); the interval is positive, so purging never spins."""
    if not isinstance(retention, JobRetention):
        raise InvalidOptionError(
            f"Option job_retention must be a JobRetention or a dict with completed, failed, interval; got {retention!r}"
        )
    for name in ("completed", "failed"):
        value = getattr(retention, name)
        if value is not None:
            check_seconds(f"job_retention.{name}", value, allow_zero=True)
    check_seconds("job_retention.interval", retention.interval, allow_zero=False)


def default_instance_id() -> str:
    """Hostname, pid and a short random tail: readable in the console, unique across restarts.

    The tail is ``os.urandom`` in hex (what ``uuid4().hex[:6]`` was, without importing
    ``uuid``, which imports ``platform``: a few ms of every console's launch, issue 40)."""
    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(3).hex()}"


#: Upstream's older option names, still accepted there (``defaultConcurrency``,
#: ``maxConcurrency``), and here in snake_case.
DEPRECATED_ALIASES = {"default_concurrency": "worker_concurrency", "max_concurrency": "instance_concurrency"}


@dataclass(frozen=True, slots=True)
class MonqueOptions:
    """``Monque``'s options, checked once (``from_kwargs``): the names upstream takes, and ours."""

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
    #: Ours (issue 37): the time limit in seconds of handlers registered without one; None
    #: (the default, as upstream has none) for no limit. See timeouts.py.
    job_timeout: float | None = None
    #: Ours (issue 38): run each job inline at ``enqueue`` instead of by a worker, for an
    #: application's tests (monque_engine/testing.py). Never for production.
    test_mode: bool = False

    def __post_init__(self) -> None:
        # Timers must be positive (zero would spin). lock_timeout too, unlike upstream: zero
        # would call every running job stale at once and run it again in parallel copies.
        for name in ("poll_interval", "safety_poll_interval", "lock_timeout", "heartbeat_interval"):
            check_seconds(name, getattr(self, name), allow_zero=False)
        # base_retry_interval and max_backoff_delay may be 0: retry at once (as upstream).
        for name in ("base_retry_interval", "max_backoff_delay", "shutdown_timeout", "stats_cache_ttl"):
            check_seconds(name, getattr(self, name), allow_zero=True)
        for name in ("max_retries", "worker_concurrency"):
            check_count(name, getattr(self, name))
        for name in ("instance_concurrency", "max_payload_size"):
            check_count(name, getattr(self, name), optional=True)
        if self.stale_recovery_interval is not None:
            check_seconds("stale_recovery_interval", self.stale_recovery_interval, allow_zero=False)
        if not self.scheduler_instance_id or not isinstance(self.scheduler_instance_id, str):
            raise InvalidOptionError("Option scheduler_instance_id must be a non-empty string")
        if _CONTROL.search(self.scheduler_instance_id):
            # It is written on claimed jobs and printed raw in every worker log line: an ESC in
            # it would drive the reader's terminal.
            raise InvalidOptionError(
                f"Option scheduler_instance_id must not contain control characters, got {self.scheduler_instance_id!r}"
            )
        if isinstance(self.job_retention, dict):
            try:
                object.__setattr__(self, "job_retention", JobRetention(**self.job_retention))
            except TypeError as error:
                raise InvalidOptionError(f"Option job_retention: {error}; use completed, failed, interval") from None
        if self.job_retention is not None:
            _check_retention(self.job_retention)
        if not isinstance(self.test_mode, bool):
            raise InvalidOptionError(f"Option test_mode must be True or False, got {self.test_mode!r}")
        if self.job_timeout is not None:
            problem = timeout_problem(self.job_timeout)
            if problem is not None:
                raise InvalidOptionError(f"Option job_timeout {problem}")

    @property
    def effective_stale_recovery_interval(self) -> float:
        if self.stale_recovery_interval is not None:
            return self.stale_recovery_interval
        return min(self.lock_timeout / 4, 60.0)

    @classmethod
    def from_kwargs(cls, options: dict[str, Any]) -> MonqueOptions:
        """Build from keyword options; upstream's deprecated names are read as their
        replacements (``default_concurrency`` → ``worker_concurrency``, ``max_concurrency``
        → ``instance_concurrency``), the new name winning when both are given, as upstream."""
        options = dict(options)
        for alias, name in DEPRECATED_ALIASES.items():
            if alias in options:
                value = options.pop(alias)
                options.setdefault(name, value)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise InvalidOptionError(
                f"Unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}"
            )
        return cls(**options)

"""Time limits of job runs (issue 37): validating a limit, and the deadline a handler sees.

A limit comes from three places, the first set wins: the job's own (``enqueue(...,
timeout=)``, stored on the job, ADR 0019), the registration's (``register(...,
timeout=)``), the instance's default (``MonqueOptions.job_timeout``, the worker's
``--timeout`` / ``MONQUE_TIMEOUT``). None anywhere means no limit, as upstream has none.

Limits are kept as whole milliseconds (what both stores hold); a limit must be more than
zero and at most ``MAX_TIMEOUT_SECONDS``: a bigger one is a unit mistake (milliseconds
given as seconds), not a limit, and is refused rather than silently meaning "never".
"""

from __future__ import annotations

import math
import time
from datetime import datetime

from .timeutil import ms_to_datetime

#: The longest time limit accepted: 30 days. A job that may run longer has no useful limit.
MAX_TIMEOUT_SECONDS = 30 * 86_400
#: The outcome an attempt that ran past its limit is recorded with.
TIMED_OUT = "timed_out"


def timeout_problem(value: object) -> str | None:
    """Why ``value`` is not a time limit in seconds, or None when it is one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a number of seconds, got {type(value).__name__} {value!r:.40}"
    if not math.isfinite(value):
        return f"must be a finite number of seconds, got {value!r}"
    if value <= 0:
        return f"must be more than 0 seconds (leave it unset for no limit), got {value!r}"
    if value > MAX_TIMEOUT_SECONDS:
        return f"must be at most {MAX_TIMEOUT_SECONDS} seconds (30 days), got {value!r}"
    if round(value * 1000) < 1:
        return f"must be at least 0.001 seconds (limits are kept in milliseconds), got {value!r}"
    return None


def timeout_ms(value: float) -> int:
    """A checked limit (seconds) as stored: whole milliseconds."""
    return round(value * 1000)


def limit_text(ms: int) -> str:
    """``2.5 s`` / ``300 s``: a limit as messages and the console say it."""
    return f"{ms / 1000:g} s"


class RunLimit:
    """The deadline of one running attempt, set on the ``Job`` its handler receives.

    Monotonic for ``should_stop`` (a wall clock set back must not extend a run), and the
    same instant as a UTC datetime for ``Job.deadline`` (to log or pass on to a client
    library's own timeout).
    """

    __slots__ = ("deadline_ms", "error", "monotonic", "stop_requested")

    def __init__(self, limit_ms: int | None, started_monotonic: float, started_ms: int) -> None:
        # No limit (a run without one that an operator asked to stop): a deadline never reached.
        self.monotonic = math.inf if limit_ms is None else started_monotonic + limit_ms / 1000
        self.deadline_ms = None if limit_ms is None else started_ms + limit_ms
        #: The TimeoutError this run ended with, once it ran past its limit: the processor
        #: records the attempt as ``timed_out`` when the error it catches is this one.
        self.error: TimeoutError | None = None
        #: An operator asked to stop this run (issue 37): ``should_stop()`` says so, and the
        #: run is recorded ``cancelled`` however it ends.
        self.stop_requested = False

    def timed_out(self, limit: str, returned: bool = False) -> TimeoutError:
        """The run's TimeoutError (kept on ``error``). Its message names the limit, which
        error grouping reads as a number, so a name's timeouts form one group."""
        how = "its sync handler's thread ran on until it returned" if returned else "its handler was cancelled"
        self.error = TimeoutError(f"Job ran past its time limit of {limit}; {how}")
        return self.error

    @property
    def deadline(self) -> datetime | None:
        return None if self.deadline_ms is None else ms_to_datetime(self.deadline_ms)

    def should_stop(self) -> bool:
        return self.stop_requested or time.monotonic() >= self.monotonic

    def passed(self) -> bool:
        return time.monotonic() >= self.monotonic


__all__ = ["MAX_TIMEOUT_SECONDS", "TIMED_OUT", "RunLimit", "limit_text", "timeout_ms", "timeout_problem"]

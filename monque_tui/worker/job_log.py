"""One log line per job event, and a periodic summary, for the headless processor pool.

Lives apart from the runner so the headless demo and the worker log identically. Job
starts are logged at debug: at thousands of jobs a second, two lines per job would make
logging the bottleneck, and the completion line already names the job and its duration.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from monque_engine import Monque, MonqueError
from monque_engine.attempts import error_message, format_traceback, qualified_type
from monque_engine.exception_text import exception_line

from .logging_setup import FIELDS_ATTR

log = logging.getLogger("monque_tui.worker")


def emit(level: int, event: str, message: str, **fields: Any) -> None:
    """Log ``message`` with structured fields; the JSON format lifts them into the object."""
    log.log(level, message, extra={FIELDS_ATTR: {"event": event, **fields}})


def _job_fields(job: Any) -> dict[str, Any]:
    return {
        "job_id": getattr(job, "id", None),
        "name": getattr(job, "name", None),
        "status": str(getattr(job, "status", "")) or None,
        "fail_count": getattr(job, "fail_count", None),
    }


@dataclass(slots=True)
class Counters:
    started: int = 0
    processed: int = 0  # completed
    failed: int = 0  # every failed attempt
    dead: int = 0  # failures with no retry left
    errors: int = 0
    shutdown_timed_out: bool = False


class JobEventLog:
    """Subscribes to a Monque's events, logs each one, counts, and summarises on demand."""

    def __init__(self, monque: Monque) -> None:
        self.monque = monque
        self.counters = Counters()
        self._last_summary_at = time.monotonic()
        self._last_processed = 0
        self._started_at = time.monotonic()

    def attach(self) -> None:
        on = self.monque.on
        on("job:start", self._on_start)
        on("job:complete", self._on_complete)
        on("job:fail", self._on_fail)
        on("job:error", self._on_error)
        on("stale:recovered", self._on_stale)
        on("changestream:connected", lambda _e: emit(logging.DEBUG, "changestream:connected", "change feed connected"))
        on("changestream:error", self._on_feed_error)
        on("changestream:fallback", self._on_fallback)

    # -- listeners ------------------------------------------------------------------------------
    def _on_start(self, job: Any) -> None:
        self.counters.started += 1
        emit(logging.DEBUG, "job:start", f"job:start     {job.name} {job.id}", **_job_fields(job))

    def _on_complete(self, event: Any) -> None:
        self.counters.processed += 1
        job = event.job
        recurring = f" next run {job.next_run_at.astimezone():%H:%M:%S}" if job.repeat_interval else ""
        emit(
            logging.INFO,
            "job:complete",
            f"job:complete  {job.name} {job.id} in {event.duration:.0f} ms{recurring}",
            duration_ms=round(event.duration, 3),
            **_job_fields(job),
        )

    def _on_fail(self, event: Any) -> None:
        """One line: ``Type: first line of the message``. The traceback (the one recorded in
        the job's attempt history) follows at debug level and is a field of the JSON line."""
        self.counters.failed += 1
        job = event.job
        error_type = qualified_type(event.error)
        text = error_message(event.error)
        first = text.split("\n", 1)[0]
        error = f"{error_type}: {first}" if first and first != error_type else error_type
        if event.will_retry:
            retry_at = job.next_run_at.astimezone()
            message = (
                f"job:fail      {job.name} {job.id} attempt {job.fail_count} failed, "
                f"retry at {retry_at:%H:%M:%S}: {error}"
            )
            level = logging.WARNING
        else:
            self.counters.dead += 1
            message = f"job:fail      {job.name} {job.id} failed for good after {job.fail_count} attempt(s): {error}"
            level = logging.ERROR
        last = getattr(job, "last_attempt", None)
        trace = getattr(last, "traceback", None) or format_traceback(event.error)
        emit(
            level,
            "job:fail",
            message,
            error=text,
            error_type=error_type,
            will_retry=event.will_retry,
            traceback=trace,
            **_job_fields(job),
        )
        if log.isEnabledFor(logging.DEBUG):
            emit(
                logging.DEBUG,
                "job:traceback",
                f"job:traceback {job.name} {job.id}\n{trace.rstrip()}",
                **_job_fields(job),
            )

    def _on_error(self, event: Any) -> None:
        self.counters.errors += 1
        error = event.error
        if type(error).__name__ == "ShutdownTimeoutError":
            self.counters.shutdown_timed_out = True
        fields = _job_fields(event.job) if event.job is not None else {}
        emit(
            logging.ERROR,
            "job:error",
            f"job:error     {exception_line(error)}",
            error=str(error),
            error_type=type(error).__name__,
            **fields,
        )

    def _on_stale(self, event: Any) -> None:
        emit(
            logging.WARNING,
            "stale:recovered",
            f"stale:recovered {event.count} job(s) returned to pending",
            count=event.count,
        )

    def _on_feed_error(self, event: Any) -> None:
        emit(logging.WARNING, "changestream:error", f"change feed error: {event.error}", error=str(event.error))

    def _on_fallback(self, event: Any) -> None:
        emit(
            logging.WARNING,
            "changestream:fallback",
            f"change feed unavailable, polling instead: {event.reason}",
            reason=event.reason,
        )

    # -- summary --------------------------------------------------------------------------------
    async def summary(self, *, final: bool = False) -> None:
        now = time.monotonic()
        c = self.counters
        elapsed = max(now - self._last_summary_at, 1e-6)
        rate = (c.processed - self._last_processed) / elapsed
        if final:
            rate = c.processed / max(now - self._started_at, 1e-6)
        self._last_summary_at, self._last_processed = now, c.processed
        active = max(c.started - c.processed - c.failed, 0)
        fields: dict[str, Any] = {
            "processed": c.processed,
            "failed": c.failed,
            "dead": c.dead,
            "active": active,
            "rate": round(rate, 2),
            "final": final,
        }
        queue = ""
        if not final:
            try:
                stats = await self.monque.get_queue_stats()
            except MonqueError:
                stats = None
            if stats is not None:
                fields.update(pending=stats.pending, processing=stats.processing)
                queue = f" | queue pending={stats.pending} processing={stats.processing}"
        label = "total" if final else "summary"
        rate_label = "avg" if final else "rate"
        emit(
            logging.INFO,
            "summary",
            # Named apart from the Workers view's and ``health``'s counts (issue 40): failed attempts
            # of this process (retried or not) and the jobs among them that failed for good.
            f"{label}: processed={c.processed} failed_attempts={c.failed} failed_for_good={c.dead} active={active} "
            f"{rate_label}={rate:.1f}/s{queue}",
            **fields,
        )

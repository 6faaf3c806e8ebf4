"""How jobs read on screen: short ids, relative times, status colours, first error lines."""

from __future__ import annotations

from datetime import UTC, datetime

from monque_engine import Job, JobStatus

STATUS_STYLES: dict[JobStatus, str] = {
    JobStatus.PENDING: "bold cyan",
    JobStatus.PROCESSING: "bold yellow",
    JobStatus.COMPLETED: "green",
    JobStatus.FAILED: "bold red",
    JobStatus.CANCELLED: "dim",
}
#: Tab order and labels of the status views.
STATUS_TABS: tuple[tuple[JobStatus | None, str], ...] = (
    (None, "All"),
    (JobStatus.PENDING, "Pending"),
    (JobStatus.PROCESSING, "Processing"),
    (JobStatus.COMPLETED, "Completed"),
    (JobStatus.FAILED, "Failed"),
    (JobStatus.CANCELLED, "Cancelled"),
)
FINISHED = (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)


def short_id(job_id: str) -> str:
    """The last 8 hex digits: an ObjectId's counter and random tail, distinct between neighbours."""
    return job_id[-8:]


def span(ms: int) -> str:
    """A compact duration: 45s, 12m, 3h, 5d."""
    seconds = abs(ms) // 1000
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86_400:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m" if seconds < 36_000 else f"{seconds // 3600}h"
    return f"{seconds // 86_400}d"


def relative(at_ms: int | None, now_ms: int) -> str:
    if at_ms is None:
        return "-"
    delta = at_ms - now_ms
    if abs(delta) < 1000:
        return "now"
    return f"in {span(delta)}" if delta > 0 else f"{span(delta)} ago"


def absolute(at_ms: int | None) -> str:
    if at_ms is None:
        return "-"
    try:
        moment = datetime.fromtimestamp(at_ms / 1000, UTC)
    except (OverflowError, ValueError, OSError):
        # A job may hold any 64-bit instant (another client wrote it): say so instead of crashing.
        return f"{'after 9999-12-31' if at_ms > 0 else 'before 0001-01-01'} ({at_ms:,} ms since 1970)"
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{at_ms % 1000:03d}Z"


def due_or_finished(job: Job, now_ms: int) -> str:
    """Next run for waiting jobs; when it finished for finished ones."""
    if job.status in FINISHED:
        return relative(job.updated_at_ms, now_ms)
    return relative(job.next_run_at_ms, now_ms)


def first_line(text: str | None, limit: int = 200) -> str:
    if not text:
        return ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:limit]


def error_text(job: Job) -> str:
    """``Type: message`` for the table's error column (issue 12).

    The type is ``job.error_type``, else the latest attempt's; without one, the message alone
    (jobs failed by older versions or by Node workers). A message that already starts with
    its type (some handlers format it so) is not prefixed twice.
    """
    message = first_line(job.fail_reason)
    error_type = job.error_type
    if error_type is None and job.fail_reason:
        last = job.last_attempt
        error_type = last.error_type if last is not None else None
    if not error_type or message.startswith(f"{error_type}:"):
        return message
    return f"{error_type}: {message}" if message else error_type


def per_minute(rate: float) -> str:
    """A rate per minute: one decimal while it is small (``0.4``), whole and grouped once it
    is not (``10,400``; "10400.0" was cut to "10400." in a column sized for "12.2")."""
    return f"{rate:.1f}" if rate < 100 else f"{rate:,.0f}"


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")

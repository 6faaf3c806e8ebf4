"""How jobs read on screen: short ids, relative times, status colours, first error lines."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from rich.text import Text

from monque_engine import Job, JobStatus

from .longtext import clip_line

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


_DAY_S = 86_400
_YEAR_S = 31_556_952  # a Gregorian year on average, 365.2425 days


def span(ms: int) -> str:
    """A compact duration: 45s, 12m, 3h, 5d, 27y; at most 5 characters ("in 27y", "27y ago"
    fit the tables' 9-column time cells whole). A job may hold any 64-bit instant: days ran
    to seven digits ("in 2912100d" was cut to "in 29121…", a number cut mid-digit), so spans
    of 1,000 days and more are years, and 10,000 years and more ">10ky"."""
    seconds = abs(ms) // 1000
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < _DAY_S:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m" if seconds < 36_000 else f"{seconds // 3600}h"
    if seconds < 1000 * _DAY_S:
        return f"{seconds // _DAY_S}d"
    if seconds < 10_000 * _YEAR_S:
        return f"{seconds // _YEAR_S}y"
    return ">10ky"


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
    return f"{date_text(moment)} {moment:%H:%M:%S}.{at_ms % 1000:03d}Z"


def date_text(moment: datetime) -> str:
    """``0001-01-01``: the C library's ``%Y`` writes the year unpadded ("1-01-01")."""
    return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"


def due_or_finished(job: Job, now_ms: int) -> str:
    """Next run for waiting jobs; when it finished for finished ones."""
    if job.status in FINISHED:
        return relative(job.updated_at_ms, now_ms)
    return relative(job.next_run_at_ms, now_ms)


_NONSPACE = re.compile(r"\S")


def first_line(text: str | None, limit: int = 200) -> str:
    """``text.strip().splitlines()[0][:limit]``, reading only the start of ``text``.

    A table cell is drawn on the UI thread for every frame it is in: stripping and splitting
    the whole text cost 23 ms a draw for a 10 MB failReason (a foreign row). This reads at
    most ``limit`` characters from the first one that is not blank (and looks past them only
    as far as the next non-blank one, to strip the end exactly as ``strip`` would).
    """
    if not text:
        return ""
    start = _NONSPACE.search(text)
    if start is None:
        return ""
    line = (text[start.start() : start.start() + limit].splitlines() or [""])[0]
    if _NONSPACE.search(text, start.start() + len(line)) is None:
        line = line.rstrip()  # nothing but blanks after it: ``strip`` would have cut them
    return line


def error_text(job: Job, short_type: bool = False) -> str:
    """``Type: message`` for the table's error column (issue 12), from a bounded prefix of each.

    The type is ``job.error_type``; without one, the message alone (jobs failed by Node
    workers, or by hand). A message that already starts with its type (some handlers format
    it so) is not prefixed twice. The attempt history is not read here: it is JSON text
    that a foreign row may hold megabytes of, and this runs on the UI thread for every frame
    the row is drawn in (the detail parses it, in a thread). Every job our engine fails
    carries ``error_type`` itself, so the history only ever added a type to foreign rows.
    """
    message = first_line(job.fail_reason)
    error_type = clip_line(job.error_type, 200) if job.error_type else None
    if error_type and message.startswith(f"{error_type}:"):
        message = message[len(error_type) + 1 :].lstrip()
    if error_type and short_type:
        # A narrow column: ``ConnectTimeout: timed out…`` says more than ``httpx.ConnectTi…``.
        error_type = error_type.rsplit(".", 1)[-1]
    if not error_type or message.startswith(f"{error_type}:"):
        return message
    return f"{error_type}: {message}" if message else error_type


def per_minute(rate: float) -> str:
    """A rate per minute: one decimal while it is small (``0.4``), whole and grouped once it
    is not (``10,400``; "10400.0" was cut to "10400." in a column sized for "12.2")."""
    return f"{rate:.1f}" if rate < 100 else f"{rate:,.0f}"


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def _middle_tail(width: int) -> int:
    """How much of a text cut to ``width`` in its middle is its end: two thirds (a path's file
    name, a job name's distinct last part)."""
    return (width - 1) * 2 // 3


def middle_cut(text: str, width: int) -> str:
    """``sqlite:////tmp/…/jobs.db``: the start and, longer, the end (the file name) of ``text``."""
    if len(text) <= width:
        return text
    tail = _middle_tail(width)
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def middle_cut_text(text: Text, width: int) -> Text:
    """``middle_cut`` of a styled cell: ``billing.invo…ise-customers`` (a ``⏸ paused`` mark
    after the name stays)."""
    if text.cell_len <= width:
        return text
    if text.cell_len != len(text.plain):  # wide characters: cut by cells at the end instead
        cut = text.copy()
        cut.truncate(width, overflow="ellipsis")
        return cut
    tail = _middle_tail(width)
    cut = text[: width - 1 - tail]
    cut.append("…", style="dim")
    cut.append_text(text[len(text) - tail :])
    return cut

"""Export every job matching a listing filter to JSON Lines or CSV, streaming.

Engine- and console-neutral: the ``monque-tui export`` command and a console key both call
``export_jobs``. Jobs are read in keyset pages (by id, ascending) and written as they
arrive, so memory stays constant however many jobs match, and the progress callback can
report as it goes.

The format is Monque's document, as Node Monque and ``mongoexport`` users know it:
camelCase field names, ``_id`` as the 24-hex id, instants as ISO-8601 UTC with
milliseconds (``2026-12-03T06:42:24.123Z``). A JSON Lines line holds every field the job
has (attempt records, error type and group included), so ``restore.read_export`` reads it
back for ``Monque.import_jobs``; ``export_file.write_export`` writes it to a file safely.
CSV puts ``data`` in one column as compact
JSON text, and by default guards each cell a spreadsheet would run as a formula (see
``spreadsheet_cell``); ``csv_raw=True`` writes every cell exactly. Every line is strict JSON: a NaN or infinity a MongoDB producer stored is written
``{"$numberDouble": "NaN"}``, as relaxed Extended JSON (and mongoexport) writes it.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import re
import uuid
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TextIO

from .attempts import Attempt
from .errors import InvalidJobQueryError
from .export_formats import FORMATS, ExportFormat
from .job import Job, JobListFilter, JobSort
from .timeutil import in_range, ms_to_datetime

if TYPE_CHECKING:
    from .scheduler import Monque

#: The columns of a CSV export, in order (a JSON Lines document has the same keys, minus
#: those a job does not have).
#: ``errorType``, ``errorGroup`` and ``attempts`` came last (after ``data``), so a program
#: reading an older export's columns by position still finds them where they were; then
#: ``timeoutMs`` and ``overLimitAt`` (ADR 0019), then ``result`` (ADR 0020), then
#: ``stopRequestedAt`` and ``progress`` (issue 37), for the same reason. In CSV, ``attempts``
#: is how many attempt records the job keeps; JSON Lines holds the records; ``result`` and
#: ``progress`` are JSON text in CSV (as ``data``) and values in JSON Lines.
FIELDS: tuple[str, ...] = (
    "_id", "name", "status", "nextRunAt", "createdAt", "updatedAt", "failCount", "failReason",
    "lockedAt", "claimedBy", "lastHeartbeat", "heartbeatInterval", "repeatInterval", "uniqueKey", "data",
    "errorType", "errorGroup", "attempts", "timeoutMs", "overLimitAt", "result", "stopRequestedAt", "progress",
)  # fmt: skip
DEFAULT_PAGE_SIZE = 500
#: ``progress(written, total)``: called after each page; ``total`` is the count taken when
#: the export began (jobs added meanwhile may make ``written`` end above it).
Progress = Callable[[int, int], None]


def iso(value: datetime | None) -> str | None:
    """An aware datetime as ISO-8601 UTC with milliseconds and a ``Z``."""
    if value is None:
        return None
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json_default(value: Any) -> Any:
    """What a payload stored by a MongoDB producer may hold besides JSON types."""
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)  # ObjectId, Decimal128, Int64, … : their text form


def _finite(value: Any) -> Any:
    """``value`` with NaN and ±Infinity (a MongoDB producer may store them; JSON has no such
    numbers, so ``json.dumps`` would write ``NaN``, which no JSON reader accepts) written as
    relaxed Extended JSON writes them, ``{"$numberDouble": "NaN"}``, as mongoexport does."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {"$numberDouble": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _dumps(value: Any) -> str:
    options: dict[str, Any] = {"ensure_ascii": False, "default": _json_default, "separators": (",", ":")}
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:  # a NaN or infinity somewhere (rare: only checked when it happens)
        return json.dumps(_finite(value), allow_nan=False, **options)


def _instant(ms: int | None) -> Any:
    """A stored instant: ISO-8601 when a datetime can hold it (years 1-9999), else relaxed
    Extended JSON's ``{"$date": {"$numberLong": "<ms>"}}``. A job may hold any 64-bit instant
    (a Node producer's ``runAt`` up to the year 275760, a hand edit): one such job must not
    end the export with an OverflowError, nor be written as a different instant."""
    if ms is None:
        return None
    if in_range(ms):
        return iso(ms_to_datetime(ms))
    return {"$date": {"$numberLong": str(ms)}}


def export_attempt(attempt: Attempt) -> dict[str, Any]:
    """One attempt record as the MongoDB store keeps it (``durationMs`` included), its
    instants written as the job's are."""
    return attempt.to_fields(_instant)


def export_document(job: Job) -> dict[str, Any]:
    """One job as its export document (JSON-ready: no datetimes, no ObjectIds).

    Every field a job has is here, so ``restore.read_export`` gives back the same ``Job``
    (``Monque.import_jobs`` then stores it as it was): its attempt history and the error
    type and group of its last failure included (issue 34: without them a restore lost the
    job's failures and its place in the error groups).
    """
    doc: dict[str, Any] = {
        "_id": job.id,
        "name": job.name,
        "status": job.status.value,
        "nextRunAt": _instant(job.next_run_at_ms),
        "createdAt": _instant(job.created_at_ms),
        "updatedAt": _instant(job.updated_at_ms),
        "failCount": job.fail_count,
    }
    optional = {
        "failReason": job.fail_reason,
        "lockedAt": _instant(job.locked_at_ms),
        "claimedBy": job.claimed_by,
        "lastHeartbeat": _instant(job.last_heartbeat_ms),
        "heartbeatInterval": job.heartbeat_interval_ms,
        "repeatInterval": job.repeat_interval,
        "uniqueKey": job.unique_key,
    }
    doc.update({key: value for key, value in optional.items() if value is not None})
    doc["data"] = job.data
    if job.error_type is not None:
        doc["errorType"] = job.error_type
    if job.error_group is not None:
        doc["errorGroup"] = job.error_group
    attempts = job.attempts
    if attempts:
        doc["attempts"] = [export_attempt(attempt) for attempt in attempts]
    if job.timeout_ms is not None:
        doc["timeoutMs"] = job.timeout_ms
    if job.over_limit_at_ms is not None:
        doc["overLimitAt"] = _instant(job.over_limit_at_ms)
    if job.result is not None:
        doc["result"] = job.result
    if job.stop_requested_at_ms is not None:
        doc["stopRequestedAt"] = _instant(job.stop_requested_at_ms)
    if job.progress is not None:
        doc["progress"] = job.progress.as_mapping(_instant)
    return doc


#: What makes a spreadsheet read a cell as a formula, per the common CSV-injection guidance
#: (OWASP): a cell starting with one of these.
FORMULA_STARTS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
#: A plain number (``-5``, ``-0.25``, ``-1.5e-07``): the only cells starting with ``-`` left
#: as they are, since a number cannot be a formula and ``'-5`` would be text to a spreadsheet.
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def spreadsheet_cell(text: str) -> str:
    """``text`` as a spreadsheet shows it as text, never running it as a formula.

    A cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
    ``'``, as the OWASP guidance on CSV injection says: a failure message or a unique key
    reading ``=HYPERLINK(...)`` is then shown, not run. Plain numbers (a payload of ``-5``)
    are left as they are. The ``'`` is visible to a program reading the file, which is what
    ``csv_raw=True`` is for.
    """
    if text.startswith(FORMULA_STARTS) and _PLAIN_NUMBER.fullmatch(text) is None:
        return "'" + text
    return text


def _csv_text(value: Any) -> str:
    """A document value as its CSV cell: text as is, anything else (a number) as JSON.

    An instant outside the years 1-9999 is ``{"$date": …}``; written by ``csv`` it was
    Python's ``repr`` (single quotes, not JSON).
    """
    if value is None:
        return ""
    return value if isinstance(value, str) else _dumps(value)


class _Writer:
    def __init__(self, out: TextIO, fmt: str, *, csv_raw: bool = False) -> None:
        self._out = out
        self._cell: Callable[[str], str] = (lambda text: text) if csv_raw else spreadsheet_cell
        # Rows are made with a "\r\n" terminator, then written ending "\n": ``csv`` quotes a
        # cell only for the characters of its terminator, so with "\n" a cell holding a
        # carriage return was written bare, and a reader (a spreadsheet, ``csv`` itself)
        # started a new row there, whose first cell could be a formula.
        self._row = io.StringIO()
        self._csv = (
            csv.DictWriter(self._row, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\r\n")
            if fmt == "csv"
            else None
        )
        if self._csv is not None:
            self._csv.writeheader()
            self._flush_row()

    def _flush_row(self) -> None:
        text = self._row.getvalue()
        self._row.seek(0)
        self._row.truncate()
        self._out.write(text.removesuffix("\r\n"))
        self._out.write("\n")

    def write(self, job: Job) -> None:
        doc = export_document(job)
        if self._csv is None:
            self._out.write(_dumps(doc))
            self._out.write("\n")
            return
        doc["data"] = _dumps(job.data)  # always JSON text, also when it is a string
        doc["attempts"] = len(job.attempts)  # the records themselves are JSON Lines' (and long)
        if job.result is not None:
            doc["result"] = _dumps(job.result)  # JSON text, as ``data``
        self._csv.writerow({key: self._cell(_csv_text(value)) for key, value in doc.items()})
        self._flush_row()


async def export_jobs(
    monque: Monque,
    out: TextIO,
    filter: JobListFilter | None = None,
    format: str = "jsonl",
    *,
    progress: Progress | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    csv_raw: bool = False,
) -> int:
    """Write every job matching ``filter`` to ``out``; return how many were written.

    Keyset-paged by id (one page in memory at a time); ``progress(written, total)`` is
    called once at the start and after every page. Raises ``InvalidJobQueryError`` for an
    unknown format or a bad filter before anything is written.

    CSV cells a spreadsheet would run as formulas get a leading ``'`` (``spreadsheet_cell``);
    ``csv_raw=True`` writes every cell exactly as stored, for programs rather than
    spreadsheets. JSON Lines is always exact.
    """
    if format not in FORMATS:
        raise InvalidJobQueryError(f"Unknown export format {format!r}; use one of {', '.join(FORMATS)}")
    total = await monque.count_jobs(filter)  # validates the filter, and sizes the progress
    writer = _Writer(out, format, csv_raw=csv_raw)
    written = 0
    if progress is not None:
        progress(0, total)
    cursor: str | None = None
    sort = JobSort("id", "asc")
    while True:
        page = await monque.get_jobs_with_cursor(cursor, limit=page_size, filter=filter, sort=sort)
        for job in page.jobs:
            writer.write(job)
        written += len(page.jobs)
        if progress is not None and page.jobs:
            progress(written, total)
        if not page.has_next_page or page.cursor is None:
            break
        cursor = page.cursor
    out.flush()
    return written


__all__ = [
    "FIELDS",
    "FORMATS",
    "FORMULA_STARTS",
    "ExportFormat",
    "export_attempt",
    "export_document",
    "export_jobs",
    "iso",
    "spreadsheet_cell",
]

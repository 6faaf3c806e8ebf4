"""Read a JSON Lines export back as jobs, for ``Monque.import_jobs``: the restore of an export.

An export (``export.export_document``) writes every field a job has, instants as ISO-8601
UTC with milliseconds or, outside the years 1-9999, as relaxed Extended JSON's
``{"$date": {"$numberLong": "<ms>"}}``. Read back here, each line is the same ``Job`` it was
written from, attempt history, error type and error group included, so::

    with open("jobs.jsonl", encoding="utf-8") as lines:
        await monque.import_jobs(read_export(lines))

stores the jobs as they were, on either store. Only the job's own fields are translated
back; ``data`` is kept as the JSON says (a NaN a MongoDB producer stored was written
``{"$numberDouble": "NaN"}`` and comes back as that object, and a BSON date or ObjectId in a
payload as its text, as ``mongoexport``'s relaxed form would need a schema to undo).

A line that is not a job raises ``InvalidExportLineError`` (an ``InvalidJobDocumentError``)
naming the line, before ``import_jobs`` has stored anything (it reads the whole iterable first).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from .errors import InvalidJobDocumentError
from .job import Job
from .timeutil import datetime_to_ms

#: The job's instants, as ``export_document`` writes them.
INSTANT_FIELDS: tuple[str, ...] = ("nextRunAt", "createdAt", "updatedAt", "lockedAt", "lastHeartbeat")
#: An attempt record's instants.
ATTEMPT_INSTANTS: tuple[str, ...] = ("startedAt", "endedAt")


def read_instant(value: Any) -> Any:
    """An exported instant as epoch ms; anything else unchanged (``Job.from_document`` then
    says what is wrong with it, naming the field).

    ISO-8601 text, or relaxed / canonical Extended JSON's ``{"$date": …}`` (what the export
    writes for an instant a datetime cannot hold, and what ``mongoexport`` writes).
    """
    if isinstance(value, str):
        try:
            return datetime_to_ms(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
        except ValueError:
            return value
    if isinstance(value, Mapping) and len(value) == 1 and "$date" in value:
        inner = value["$date"]
        if isinstance(inner, Mapping) and len(inner) == 1 and isinstance(inner.get("$numberLong"), str):
            try:
                return int(inner["$numberLong"])
            except ValueError:
                return value
        if isinstance(inner, int) and not isinstance(inner, bool):
            return inner
        if isinstance(inner, str):
            return read_instant(inner)
    return value


def _attempt(record: Any) -> Any:
    if not isinstance(record, Mapping):
        return record  # parse_attempts leaves out what is not a record, as for a stored one
    return {key: read_instant(value) if key in ATTEMPT_INSTANTS else value for key, value in record.items()}


def job_from_export(doc: Mapping[str, Any]) -> Job:
    """One export document (a parsed JSON Lines line) as the ``Job`` it was written from."""
    stored: dict[str, Any] = dict(doc)
    for key in INSTANT_FIELDS:
        if key in stored:
            stored[key] = read_instant(stored[key])
    attempts = stored.get("attempts")
    if isinstance(attempts, list):
        stored["attempts"] = [_attempt(record) for record in attempts]
    return Job.from_document(stored)


class InvalidExportLineError(InvalidJobDocumentError):
    """A line of an export that cannot be read as a job: which line, and why."""

    def __init__(self, line: int, reason: str, job_id: str | None = None) -> None:
        super().__init__(job_id, reason)
        self.line = line
        which = f"line {line}" + (f" (job {job_id})" if job_id is not None else "")
        self.args = (f"Export {which} is not a readable Monque job: {reason}; fix that line or leave it out",)


def read_export(lines: Iterable[str]) -> Iterator[Job]:
    """The jobs of a JSON Lines export, in its order; blank lines are skipped.

    Raises ``InvalidExportLineError`` (an ``InvalidJobDocumentError``) for a line that is not
    JSON, not an object, or not a job, naming the line, so a restore from a damaged file
    stops with the place to fix (``import_jobs`` reads every job before storing any).
    """
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError as error:
            raise InvalidExportLineError(number, f"it is not JSON ({error})") from None
        if not isinstance(doc, dict):
            raise InvalidExportLineError(number, f"it is a JSON {type(doc).__name__}, not an object")
        try:
            yield job_from_export(doc)
        except InvalidJobDocumentError as error:
            raise InvalidExportLineError(number, error.reason, error.job_id) from None


__all__ = [
    "ATTEMPT_INSTANTS",
    "INSTANT_FIELDS",
    "InvalidExportLineError",
    "job_from_export",
    "read_export",
    "read_instant",
]

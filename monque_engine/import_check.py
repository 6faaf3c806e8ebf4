"""What ``Monque.import_jobs`` checks before a store writes anything (issue 34).

``Job`` is a plain value object: it holds whatever it was built with. An import writes its
fields as they are, so a field of the wrong type or out of range used to reach the store
(``next_run_at_ms="soon"``) and fail later readers far from the cause: an export's sort, a
console's age column, stale recovery. Every field is checked here the way intake checks an
enqueue, on both stores, and the first bad one refuses the whole import with its item and
field named; nothing is stored. A processing job must name its owner and its lock time: no
other worker could complete it, and without an instant stale recovery had nothing to judge.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import (
    InvalidCronError,
    InvalidJobIdentifierError,
    InvalidJobQueryError,
    InvalidResultError,
    MonqueError,
    PayloadTooLargeError,
    PayloadValidationError,
)
from .job import Job, JobStatus
from .results import MAX_RESULT_BYTES, stored_result
from .timeouts import MAX_TIMEOUT_SECONDS
from .timeutil import MAX_MS, MIN_MS
from .validation import _CONTROL, encode_payload, normalize_job_id, validate_job_name, validate_unique_key

#: A fail count as both stores and Node Monque hold it (a 32-bit int in MongoDB's documents).
MAX_FAIL_COUNT = 2**31 - 1
_INSTANTS = ("next_run_at_ms", "created_at_ms", "updated_at_ms")
_OPTIONAL_INSTANTS = ("locked_at_ms", "last_heartbeat_ms", "over_limit_at_ms", "stop_requested_at_ms")
_OPTIONAL_TEXTS = ("fail_reason", "error_type", "error_group")


def check_imported(jobs: Sequence[Job], max_payload_size: int | None) -> None:
    """Raise for the first job of ``jobs`` a store must not write; return quietly otherwise.

    Errors keep their usual class (an id, name or unique key: InvalidJobIdentifierError; a
    payload: PayloadValidationError or PayloadTooLargeError; a schedule: InvalidCronError;
    any other field: InvalidJobQueryError), their message prefixed with the item's index
    and id."""
    seen: dict[str, int] = {}
    for index, job in enumerate(jobs):
        try:
            _check(job, max_payload_size)
            first = seen.setdefault(job.id, index)
            if first != index:
                raise InvalidJobIdentifierError("id", job.id, f"is also item {first} of this import; ids are unique")
        except (
            InvalidJobIdentifierError,
            InvalidJobQueryError,
            InvalidCronError,
            PayloadValidationError,
            PayloadTooLargeError,
        ) as error:
            raise _at(index, job, error) from None


def _at(index: int, job: Job, error: MonqueError) -> MonqueError:
    """``error``, same class and attributes, its message naming the item."""
    error.args = (f"import_jobs item {index} (id {job.id!r:.40}): {error}",)
    return error


def _bad(field: str, value: object, must: str) -> InvalidJobQueryError:
    return InvalidJobQueryError(f"{field} is {value!r:.60}; it must be {must}")


def _instant(field: str, value: object) -> None:
    if type(value) is not int or not MIN_MS <= value <= MAX_MS:
        raise _bad(field, value, "epoch milliseconds, an int within the years 1-9999")


def _check(job: Job, max_payload_size: int | None) -> None:
    if normalize_job_id(job.id) != job.id:
        raise InvalidJobIdentifierError("id", job.id, "must be 24 lower-case hex digits (an ObjectId)")
    validate_job_name(job.name)
    if job.unique_key is not None:
        validate_unique_key(job.unique_key)
    if not isinstance(job.status, JobStatus):
        raise _bad("status", job.status, "a JobStatus (pending, processing, completed, failed or cancelled)")
    for field in _INSTANTS:
        _instant(field, getattr(job, field))
    for field in _OPTIONAL_INSTANTS:
        value = getattr(job, field)
        if value is not None:
            _instant(field, value)
    count = job.fail_count
    if type(count) is not int or not 0 <= count <= MAX_FAIL_COUNT:
        raise _bad("fail_count", count, f"an int from 0 to {MAX_FAIL_COUNT}")
    interval = job.heartbeat_interval_ms
    if interval is not None and (type(interval) is not int or not 0 < interval <= MAX_MS):
        raise _bad("heartbeat_interval_ms", interval, "None or a positive int (milliseconds)")
    limit = job.timeout_ms
    if limit is not None and (type(limit) is not int or not 0 < limit <= MAX_TIMEOUT_SECONDS * 1000):
        raise _bad("timeout_ms", limit, f"None or a positive int (milliseconds, at most {MAX_TIMEOUT_SECONDS * 1000})")
    owner = job.claimed_by
    if owner is not None and (not isinstance(owner, str) or not owner.strip() or _CONTROL.search(owner)):
        raise _bad("claimed_by", owner, "None or an instance id (non-blank text without control characters)")
    if job.status is JobStatus.PROCESSING and (owner is None or job.locked_at_ms is None):
        raise _bad(
            "claimed_by" if owner is None else "locked_at_ms",
            None,
            "set on a processing job (its owner and when it was claimed), or import the job as pending",
        )
    for field in _OPTIONAL_TEXTS:
        value = getattr(job, field)
        if value is not None and not isinstance(value, str):
            raise _bad(field, value, "None or text")
    if job.repeat_interval is not None:
        from .cron import next_run_ms  # here: only a recurring job needs the cron module

        next_run_ms(job.repeat_interval, 0)  # InvalidCronError for a schedule that never runs
    try:
        job.attempts  # noqa: B018  # parsed leniently; a history of another type is refused
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        raise _bad("attempts", job._attempts, f"Attempt records ({error})") from None
    encode_payload(job.data, max_payload_size)
    if job.result is not None:
        try:
            stored_result(job.result)
        except InvalidResultError:
            raise _bad("result", job.result, f"None or JSON of at most {MAX_RESULT_BYTES} bytes") from None

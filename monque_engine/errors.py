"""Errors raised by the engine.

The names and fields mirror upstream Monque so code written against either reads the same.
Every message says what is wrong and, where there is one, what to do about it.
"""

from __future__ import annotations

import json
from typing import Any


class MonqueError(Exception):
    """Base class: catch this to handle every error the engine raises on purpose."""


class InvalidCronError(MonqueError):
    def __init__(self, expression: str, reason: str = "") -> None:
        self.expression = expression
        # Worded as upstream's (expression in double quotes, the field order, an example), so
        # a message logged by a Node worker and one logged here read the same.
        shown = json.dumps(expression, ensure_ascii=False) if isinstance(expression, str) else repr(expression)
        detail = f": {reason}" if reason else ""
        super().__init__(
            f"Invalid cron expression {shown}{detail}. Expected 5 fields "
            '("minute hour day-of-month month day-of-week"), 6 with seconds first, '
            'or a macro such as @hourly, @daily, @weekly. Example: "0 9 * * 1" (every Monday at 9am)'
        )


class ConnectionError(MonqueError):
    """The store could not be reached or a database operation failed; ``__cause__`` keeps why."""


class StoreUnavailableError(ConnectionError):
    """The store could not take the operation now, and the same call may succeed later: SQLite
    locked past ``busy_timeout``, a full disk or an I/O error, MongoDB unreachable, electing a
    primary or shutting down. The engine writes a successful run's completion again while its
    store raises this (ADR 0026); any other ``ConnectionError`` is not retried."""


class PartialInsertError(ConnectionError):
    """``enqueue_many`` (or ``import_jobs``) on MongoDB stored the first ``len(stored)`` of ``total`` jobs, then failed.

    A MongoDB transaction is bounded (60 s, the cache, 16 MB per oplog entry), so a large
    batch is written in transactions of at most ``MongoStore.TRANSACTION_BATCH`` jobs and
    ``MongoStore.TRANSACTION_MAX_BYTES`` encoded bytes, each all or none: the
    batches before the failing one stay stored (workers may already run them), nothing
    after it is. ``stored`` are those jobs, in item order (their ids, or the live jobs their
    unique keys found); submitting the items from index ``len(stored)`` on completes the
    call. ``__cause__`` is why the failing batch was rolled back.
    """

    def __init__(self, message: str, stored: list[Any], total: int) -> None:
        super().__init__(message)
        self.stored = stored
        self.total = total


class StoreLostError(ConnectionError):
    """The store can no longer be trusted, for good: its SQLite file was deleted or replaced
    (or damaged: ``StoreDamagedError``).

    Unlike a dropped connection it never heals in this process (the open file is the old
    one), so every later operation raises it and the process must be restarted. ``job:error``
    reports it once per ``initialize()``; the engine's loops meet it again on every tick.
    """


class StoreDamagedError(StoreLostError):
    """The store's data is damaged: its SQLite file is corrupt (SQLite said so, or its header
    was overwritten). Final in this process, as a lost file is, but restarting does not help:
    the file must be checked and restored from a backup; the message says how.
    """


class ShutdownTimeoutError(MonqueError):
    def __init__(self, message: str, incomplete_jobs: list[Any]) -> None:
        self.incomplete_jobs = incomplete_jobs
        super().__init__(message)


class WorkerRegistrationError(MonqueError):
    def __init__(self, message: str, job_name: str) -> None:
        self.job_name = job_name
        super().__init__(message)


class JobStateError(MonqueError):
    def __init__(self, message: str, job_id: str, current_status: str, attempted_action: str) -> None:
        self.job_id = job_id
        self.current_status = current_status
        self.attempted_action = attempted_action
        super().__init__(message)


class StopRefusedError(JobStateError):
    """A running job's stop could not be requested (issue 37). ``reason``: ``"unknown_owner"``
    (its owner is not in the instance registry: a Node worker or an older Python one, which
    would never hear the request), ``"dead_owner"`` (its owner stopped beating: release its
    jobs instead, ``release_dead_owner_jobs``), or ``"not_running"`` (the attempt asked about
    ended meanwhile, or the job is running again as a later attempt: nothing was changed)."""

    def __init__(self, message: str, job_id: str, current_status: str, reason: str, owner: str | None) -> None:
        self.reason = reason
        self.owner = owner
        super().__init__(message, job_id, current_status, "stop")


class UniqueKeyConflictError(MonqueError):
    """Retrying a job would make a second live job with a unique key another job now holds."""

    def __init__(self, job_id: str, name: str, unique_key: str, holder_id: str) -> None:
        self.job_id = job_id
        self.name = name
        self.unique_key = unique_key
        self.holder_id = holder_id
        super().__init__(
            f"Cannot retry job {job_id}: job {holder_id} of {name!r} already holds unique key "
            f"{unique_key!r} while pending or processing; wait for it to finish, or cancel or delete it first"
        )


class NonRetryableError(MonqueError):
    """Raise from a handler to fail its job at once, without automatic retries (upstream's).

    The job ends ``failed`` whatever ``max_retries`` allows (a recurring job stops recurring
    and frees its unique key); ``job:fail`` reports ``will_retry=False``. An operator can
    still retry it by hand. Only this class (or a subclass) counts: another exception
    merely named alike is retried as usual.
    """


class InvalidResultError(NonRetryableError):
    """A handler returned a value that cannot be kept as its job's ``result``: not JSON, or
    over ``monque_engine.results.MAX_RESULT_BYTES`` once encoded.

    Recorded on the job as a failure, without retries: the handler's work is done, and a
    retry would do it again only to return the same value. The message says what to do.
    """


class JobNotFoundError(MonqueError, LookupError):
    """``wait()`` was given the id of no stored job, or the job was deleted while waited for."""

    def __init__(self, job_id: str, message: str) -> None:
        self.job_id = job_id
        super().__init__(message)


class WaitTimeoutError(MonqueError, TimeoutError):
    """``wait()`` ran out of time before the job reached a final state. ``job`` is the job as
    last seen (still pending or processing); waiting again picks up from there."""

    def __init__(self, job_id: str, timeout: float, job: Any) -> None:
        self.job_id = job_id
        self.timeout = timeout
        self.job = job
        status = getattr(getattr(job, "status", None), "value", "unknown")
        super().__init__(
            f"Job {job_id} is still {status} after waiting {timeout:g} s; wait longer, or check that a "
            "worker runs its name (monque-tui --worker, or Monque.start())"
        )


class InvalidEventError(MonqueError, ValueError):
    """``on`` / ``once`` got an unknown event name or a listener that cannot be called.

    A ``ValueError`` too, as an unknown event name always raised."""


class InvalidCursorError(MonqueError):
    pass


class CursorSortMismatchError(InvalidCursorError):
    """A cursor made for another sort than the one asked for. ``made_by`` / ``made_direction``
    and ``asked_by`` / ``asked_direction`` are the engine's sort names (``created_at``,
    ``desc``), so a caller with its own names for them (the management API's ``createdAt``)
    can say the same in its own words."""

    def __init__(self, made_by: str, made_direction: str, asked_by: str, asked_direction: str) -> None:
        self.made_by = made_by
        self.made_direction = made_direction
        self.asked_by = asked_by
        self.asked_direction = asked_direction
        super().__init__(
            f"Cursor was made for sort {made_by} {made_direction}, not {asked_by} {asked_direction}; "
            "start again without a cursor after changing the sort"
        )


class InvalidJobIdentifierError(MonqueError):
    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(f"Invalid job {field} {value!r}: {reason}")


class InvalidJobQueryError(MonqueError):
    """A listing argument (limit, skip, sort, filter) is out of range or of the wrong type."""


class AggregationTimeoutError(MonqueError):
    """A statistics query ran past its time limit (30 s on MongoDB, as upstream)."""

    def __init__(
        self,
        message: str = "Statistics aggregation exceeded 30 second timeout; "
        "try again, scope it to one job name, or check the store's indexes",
    ) -> None:
        super().__init__(message)


class PayloadTooLargeError(MonqueError):
    def __init__(self, actual_size: int, max_size: int, limit: str = "the configured max_payload_size") -> None:
        self.actual_size = actual_size
        self.max_size = max_size
        super().__init__(
            f"Job payload is {actual_size} bytes, over {limit} of "
            f"{max_size} bytes; store large data elsewhere and enqueue a reference to it"
        )


class PayloadValidationError(MonqueError):
    """The payload cannot be stored: not JSON-serialisable, NaN/Infinity, or nested too deep."""


class ChangeFeedHistoryLostError(MonqueError):
    """A watch() resume token points before the oldest change the store still keeps.

    Also raised when the feed was invalidated (its collection or database dropped or
    renamed): the caller must reopen without the old token, since resuming from it would
    replay the invalidation.
    """


class ChangeFeedUnsupportedError(ConnectionError):
    """The deployment cannot provide a change feed at all (a standalone MongoDB server).

    Permanent: a resilient watch falls back to polling once and says so, instead of
    retrying and warning on every interval.
    """


class InvalidJobDocumentError(MonqueError, ValueError):
    """A stored document cannot be read as a Monque job (a field is missing or has the
    wrong type, e.g. written by hand or by another program). Listings and claims skip such
    documents with one warning; reading one by id raises this."""

    def __init__(
        self, job_id: str | None, reason: str, *, what: str = "document", fix: str = "for example in mongosh"
    ) -> None:
        self.job_id = job_id
        self.reason = reason
        which = f"Stored {what} {job_id}" if job_id is not None else f"A stored {what}"
        super().__init__(f"{which} is not a readable Monque job: {reason}; fix or delete it ({fix})")


class UnsupportedServerVersionError(ConnectionError):
    """The MongoDB server is older than the oldest version the store supports."""

    def __init__(self, where: str, version: str, minimum: str, reason: str) -> None:
        self.version = version
        self.minimum = minimum
        super().__init__(
            f"{where} runs MongoDB {version}; Monque needs {minimum} or newer ({reason}); upgrade the server"
        )


__all__ = [
    "AggregationTimeoutError",
    "ChangeFeedHistoryLostError",
    "ChangeFeedUnsupportedError",
    "ConnectionError",
    "CursorSortMismatchError",
    "InvalidCronError",
    "InvalidCursorError",
    "InvalidEventError",
    "InvalidJobDocumentError",
    "InvalidJobIdentifierError",
    "InvalidJobQueryError",
    "JobStateError",
    "MonqueError",
    "NonRetryableError",
    "PayloadTooLargeError",
    "PayloadValidationError",
    "ShutdownTimeoutError",
    "StopRefusedError",
    "StoreDamagedError",
    "StoreLostError",
    "UniqueKeyConflictError",
    "UnsupportedServerVersionError",
    "WorkerRegistrationError",
]

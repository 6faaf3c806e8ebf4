"""monque_engine: a durable job queue, a Python port of Monque (@monque/core).

Jobs live in one collection in Monque's MongoDB schema: an embedded SQLite file by default,
MongoDB for scale-out. This package never imports Textual; the console lives in monque_tui.

Its names load on first use (PEP 562, ``__getattr__`` below): ``import monque_engine`` alone
runs no submodule, so a program that needs ``Monque`` does not pay for what it does not use
(the console's launch, issue 40: the management, export, sync client, cron, error groups
and metrics modules, each with its dataclasses, are ~40 ms it need not spend before its
first rows). ``from monque_engine import X``, ``monque_engine.X`` and ``import *`` work as
before; type checkers read the imports under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import atexit
import importlib
import sys
from typing import TYPE_CHECKING, Any

from .version import __version__

if TYPE_CHECKING:
    from .attempts import Attempt
    from .backoff import (
        DEFAULT_BASE_INTERVAL,
        DEFAULT_MAX_BACKOFF_DELAY,
        apply_jitter,
        calculate_backoff,
        calculate_backoff_delay,
    )
    from .cron import get_next_cron_date, validate_cron_expression
    from .errorgroups import ErrorGroup
    from .errors import (
        AggregationTimeoutError,
        ChangeFeedHistoryLostError,
        ChangeFeedUnsupportedError,
        ConnectionError,
        InvalidCronError,
        InvalidCursorError,
        InvalidEventError,
        InvalidJobDocumentError,
        InvalidJobIdentifierError,
        InvalidJobQueryError,
        InvalidResultError,
        JobNotFoundError,
        JobStateError,
        MonqueError,
        NonRetryableError,
        PartialInsertError,
        PayloadTooLargeError,
        PayloadValidationError,
        ShutdownTimeoutError,
        StopRefusedError,
        StoreDamagedError,
        StoreLostError,
        StoreUnavailableError,
        UniqueKeyConflictError,
        UnsupportedServerVersionError,
        WaitTimeoutError,
        WorkerRegistrationError,
    )
    from .events import (
        ChangeStreamEvent,
        CountEvent,
        JobCompleteEvent,
        JobDeletedEvent,
        JobErrorEvent,
        JobEvent,
        JobFailEvent,
        JobRetriedEvent,
        QueueControlEvent,
    )
    from .guards import (
        is_cancelled_job,
        is_completed_job,
        is_failed_job,
        is_pending_job,
        is_persisted_job,
        is_processing_job,
        is_recurring_job,
        is_valid_job_status,
    )
    from .job import (
        BulkCount,
        BulkOperationResult,
        ChangeEvent,
        CursorPage,
        InstanceInfo,
        Job,
        JobListFilter,
        JobSelector,
        JobSort,
        JobStatus,
        MinuteCount,
        OwnerCheck,
        QueueHealth,
        QueueStats,
        QueueViewSummary,
        WorkerSummary,
    )
    from .options import InvalidOptionError, JobRetention, MonqueOptions
    from .progress import DEFAULT_STEP_JOBS, CountProgress, PageProgress
    from .results import MAX_RESULT_BYTES
    from .run_progress import MAX_PROGRESS_MESSAGE, InvalidProgressError, Progress
    from .scheduler import Monque
    from .scheduler.resilient_watch import FeedState, ResilientWatch, WatchEvent
    from .store import DEFAULT_URL, InvalidStoreUrlError, JobStore, open_store
    from .store.urls import mask_url
    from .sync import SyncMonque

#: Each exported name and the submodule (relative to this package) that defines it.
_EXPORTS: dict[str, str] = {
    "Attempt": ".attempts",
    "DEFAULT_BASE_INTERVAL": ".backoff",
    "DEFAULT_MAX_BACKOFF_DELAY": ".backoff",
    "apply_jitter": ".backoff",
    "calculate_backoff": ".backoff",
    "calculate_backoff_delay": ".backoff",
    "get_next_cron_date": ".cron",
    "validate_cron_expression": ".cron",
    "ErrorGroup": ".errorgroups",
    "AggregationTimeoutError": ".errors",
    "ChangeFeedHistoryLostError": ".errors",
    "ChangeFeedUnsupportedError": ".errors",
    "ConnectionError": ".errors",
    "StoreUnavailableError": ".errors",
    "InvalidCronError": ".errors",
    "InvalidCursorError": ".errors",
    "InvalidEventError": ".errors",
    "InvalidJobDocumentError": ".errors",
    "InvalidJobIdentifierError": ".errors",
    "InvalidJobQueryError": ".errors",
    "InvalidResultError": ".errors",
    "JobNotFoundError": ".errors",
    "JobStateError": ".errors",
    "MonqueError": ".errors",
    "NonRetryableError": ".errors",
    "PartialInsertError": ".errors",
    "PayloadTooLargeError": ".errors",
    "PayloadValidationError": ".errors",
    "ShutdownTimeoutError": ".errors",
    "StopRefusedError": ".errors",
    "StoreDamagedError": ".errors",
    "StoreLostError": ".errors",
    "UniqueKeyConflictError": ".errors",
    "UnsupportedServerVersionError": ".errors",
    "WaitTimeoutError": ".errors",
    "WorkerRegistrationError": ".errors",
    "ChangeStreamEvent": ".events",
    "CountEvent": ".events",
    "JobCompleteEvent": ".events",
    "JobDeletedEvent": ".events",
    "JobErrorEvent": ".events",
    "JobEvent": ".events",
    "JobFailEvent": ".events",
    "JobRetriedEvent": ".events",
    "QueueControlEvent": ".events",
    "is_cancelled_job": ".guards",
    "is_completed_job": ".guards",
    "is_failed_job": ".guards",
    "is_pending_job": ".guards",
    "is_persisted_job": ".guards",
    "is_processing_job": ".guards",
    "is_recurring_job": ".guards",
    "is_valid_job_status": ".guards",
    "BulkCount": ".job",
    "BulkOperationResult": ".job",
    "ChangeEvent": ".job",
    "CursorPage": ".job",
    "InstanceInfo": ".job",
    "Job": ".job",
    "JobListFilter": ".job",
    "JobSelector": ".job",
    "JobSort": ".job",
    "JobStatus": ".job",
    "MinuteCount": ".job",
    "OwnerCheck": ".job",
    "QueueHealth": ".job",
    "QueueStats": ".job",
    "QueueViewSummary": ".job",
    "WorkerSummary": ".job",
    "InvalidOptionError": ".options",
    "JobRetention": ".options",
    "MonqueOptions": ".options",
    "DEFAULT_STEP_JOBS": ".progress",
    "CountProgress": ".progress",
    "PageProgress": ".progress",
    "MAX_RESULT_BYTES": ".results",
    "MAX_PROGRESS_MESSAGE": ".run_progress",
    "InvalidProgressError": ".run_progress",
    "Progress": ".run_progress",
    "Monque": ".scheduler",
    "FeedState": ".scheduler.resilient_watch",
    "ResilientWatch": ".scheduler.resilient_watch",
    "WatchEvent": ".scheduler.resilient_watch",
    "DEFAULT_URL": ".store",
    "InvalidStoreUrlError": ".store",
    "JobStore": ".store",
    "open_store": ".store",
    "mask_url": ".store.urls",
    "SyncMonque": ".sync",
}


def _close_sync_clients_at_exit() -> None:
    """Registered here, at import, not when the sync client's loop module first loads: an
    ``atexit`` handler the application registers after ``import monque_engine`` must run
    before the clients close (handlers run last-registered first), as the docs promise; the
    lazy loop module registered later, and such a handler met closed clients."""
    loop = sys.modules.get("monque_engine.sync.loop")
    if loop is not None:
        loop.close_all_at_exit()


atexit.register(_close_sync_clients_at_exit)


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first use, and keep the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "DEFAULT_BASE_INTERVAL",
    "DEFAULT_MAX_BACKOFF_DELAY",
    "DEFAULT_STEP_JOBS",
    "DEFAULT_URL",
    "MAX_PROGRESS_MESSAGE",
    "MAX_RESULT_BYTES",
    "AggregationTimeoutError",
    "Attempt",
    "BulkCount",
    "BulkOperationResult",
    "ChangeEvent",
    "ChangeFeedHistoryLostError",
    "ChangeFeedUnsupportedError",
    "ChangeStreamEvent",
    "ConnectionError",
    "CountEvent",
    "CountProgress",
    "CursorPage",
    "ErrorGroup",
    "FeedState",
    "InstanceInfo",
    "InvalidCronError",
    "InvalidCursorError",
    "InvalidEventError",
    "InvalidJobDocumentError",
    "InvalidJobIdentifierError",
    "InvalidJobQueryError",
    "InvalidOptionError",
    "InvalidProgressError",
    "InvalidResultError",
    "InvalidStoreUrlError",
    "Job",
    "JobCompleteEvent",
    "JobDeletedEvent",
    "JobErrorEvent",
    "JobEvent",
    "JobFailEvent",
    "JobListFilter",
    "JobNotFoundError",
    "JobRetention",
    "JobRetriedEvent",
    "JobSelector",
    "JobSort",
    "JobStateError",
    "JobStatus",
    "JobStore",
    "MinuteCount",
    "Monque",
    "MonqueError",
    "MonqueOptions",
    "NonRetryableError",
    "OwnerCheck",
    "PageProgress",
    "PartialInsertError",
    "PayloadTooLargeError",
    "PayloadValidationError",
    "Progress",
    "QueueControlEvent",
    "QueueHealth",
    "QueueStats",
    "QueueViewSummary",
    "ResilientWatch",
    "ShutdownTimeoutError",
    "StopRefusedError",
    "StoreDamagedError",
    "StoreLostError",
    "StoreUnavailableError",
    "SyncMonque",
    "UniqueKeyConflictError",
    "UnsupportedServerVersionError",
    "WaitTimeoutError",
    "WatchEvent",
    "WorkerRegistrationError",
    "WorkerSummary",
    "__version__",
    "apply_jitter",
    "calculate_backoff",
    "calculate_backoff_delay",
    "get_next_cron_date",
    "is_cancelled_job",
    "is_completed_job",
    "is_failed_job",
    "is_pending_job",
    "is_persisted_job",
    "is_processing_job",
    "is_recurring_job",
    "is_valid_job_status",
    "mask_url",
    "open_store",
    "validate_cron_expression",
]

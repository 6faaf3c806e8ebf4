"""monque_engine: a durable job queue, a Python port of Monque (@monque/core).

Jobs live in one collection in Monque's MongoDB schema: an embedded SQLite file by default,
MongoDB for scale-out. This package never imports Textual; the console lives in monque_tui.
"""

from .errors import (
    AggregationTimeoutError,
    ChangeFeedHistoryLostError,
    ChangeFeedUnsupportedError,
    ConnectionError,
    InvalidCronError,
    InvalidCursorError,
    InvalidJobIdentifierError,
    InvalidJobQueryError,
    JobStateError,
    MonqueError,
    PayloadTooLargeError,
    PayloadValidationError,
    ShutdownTimeoutError,
    UniqueKeyConflictError,
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
)
from .job import (
    BulkOperationResult,
    ChangeEvent,
    CursorPage,
    Job,
    JobListFilter,
    JobSelector,
    JobSort,
    JobStatus,
    QueueStats,
    QueueViewSummary,
    WorkerSummary,
)
from .options import InvalidOptionError, JobRetention, MonqueOptions
from .scheduler import Monque
from .scheduler.resilient_watch import FeedState, ResilientWatch, WatchEvent
from .store import DEFAULT_URL, InvalidStoreUrlError, JobStore, open_store
from .store.urls import mask_url

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_URL",
    "AggregationTimeoutError",
    "BulkOperationResult",
    "ChangeEvent",
    "ChangeFeedHistoryLostError",
    "ChangeFeedUnsupportedError",
    "ChangeStreamEvent",
    "ConnectionError",
    "CountEvent",
    "CursorPage",
    "FeedState",
    "InvalidCronError",
    "InvalidCursorError",
    "InvalidJobIdentifierError",
    "InvalidJobQueryError",
    "InvalidOptionError",
    "InvalidStoreUrlError",
    "Job",
    "JobCompleteEvent",
    "JobDeletedEvent",
    "JobErrorEvent",
    "JobEvent",
    "JobFailEvent",
    "JobListFilter",
    "JobRetention",
    "JobRetriedEvent",
    "JobSelector",
    "JobSort",
    "JobStateError",
    "JobStatus",
    "JobStore",
    "Monque",
    "MonqueError",
    "MonqueOptions",
    "PayloadTooLargeError",
    "PayloadValidationError",
    "QueueStats",
    "QueueViewSummary",
    "ResilientWatch",
    "ShutdownTimeoutError",
    "UniqueKeyConflictError",
    "WatchEvent",
    "WorkerRegistrationError",
    "WorkerSummary",
    "__version__",
    "mask_url",
    "open_store",
]

"""monque_engine: a durable job queue, a Python port of Monque (@monque/core).

Jobs live in one collection in Monque's MongoDB schema: an embedded SQLite file by default,
MongoDB for scale-out. This package never imports Textual; the console lives in monque_tui.
"""

from .attempts import Attempt
from .errorgroups import ErrorGroup
from .errors import (
    AggregationTimeoutError,
    ChangeFeedHistoryLostError,
    ChangeFeedUnsupportedError,
    ConnectionError,
    InvalidCronError,
    InvalidCursorError,
    InvalidJobDocumentError,
    InvalidJobIdentifierError,
    InvalidJobQueryError,
    JobStateError,
    MonqueError,
    PayloadTooLargeError,
    PayloadValidationError,
    ShutdownTimeoutError,
    UniqueKeyConflictError,
    UnsupportedServerVersionError,
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
from .job import (
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
    QueueHealth,
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
    "Attempt",
    "BulkOperationResult",
    "ChangeEvent",
    "ChangeFeedHistoryLostError",
    "ChangeFeedUnsupportedError",
    "ChangeStreamEvent",
    "ConnectionError",
    "CountEvent",
    "CursorPage",
    "ErrorGroup",
    "FeedState",
    "InstanceInfo",
    "InvalidCronError",
    "InvalidCursorError",
    "InvalidJobDocumentError",
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
    "MinuteCount",
    "Monque",
    "MonqueError",
    "MonqueOptions",
    "PayloadTooLargeError",
    "PayloadValidationError",
    "QueueControlEvent",
    "QueueHealth",
    "QueueStats",
    "QueueViewSummary",
    "ResilientWatch",
    "ShutdownTimeoutError",
    "UniqueKeyConflictError",
    "UnsupportedServerVersionError",
    "WatchEvent",
    "WorkerRegistrationError",
    "WorkerSummary",
    "__version__",
    "mask_url",
    "open_store",
]

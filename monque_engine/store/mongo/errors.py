"""Driver errors → engine errors, with the password masked and the cause kept.

The scheduler only knows ``monque_engine.errors``; it must never need ``pymongo.errors``.
Every message names the server (hosts from the URL, never credentials) so an operator can
tell *which* database failed, and is passed through the URL's password mask because driver
messages may quote the URI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bson.errors import BSONError, InvalidDocument
from pymongo.errors import (
    ConnectionFailure,
    NotPrimaryError,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
    WriteConcernError,
)

from ...errors import (
    AggregationTimeoutError,
    ChangeFeedHistoryLostError,
    ChangeFeedUnsupportedError,
    ConnectionError,
    InvalidJobDocumentError,
    MonqueError,
    PayloadValidationError,
    StoreUnavailableError,
)

MAX_TIME_MS_EXPIRED = 50
CHANGE_STREAM_HISTORY_LOST = 286
CHANGE_STREAM_FATAL = 280
STANDALONE_CHANGE_STREAM = 40573
_STANDALONE_TEXT = "only supported on replica sets"


def error_code(error: BaseException) -> int | None:
    code = getattr(error, "code", None)
    return code if isinstance(code, int) else None


#: Server codes of an operation the cluster could not take *now*: the retryable-writes spec's
#: list (not primary, node recovering or shutting down, host unreachable, network timeout;
#: PyMongo's private ``helpers_shared._RETRYABLE_ERROR_CODES``, checked against 4.x), plus a
#: lock (24) or a write concern (64) that timed out. The same write may pass later.
_PASSING_CODES = frozenset({6, 7, 24, 64, 89, 91, 134, 189, 262, 9001, 10058, 10107, 11600, 11602, 13435, 13436})


def passes(error: BaseException) -> bool:
    """Whether ``error`` says the cluster cannot take an operation now, not that it never will
    (a validator's refusal, a missing privilege, a document too large are not retried)."""
    if isinstance(error, ConnectionFailure | NotPrimaryError | WriteConcernError):
        return True  # ServerSelectionTimeoutError, AutoReconnect, NetworkTimeout are ConnectionFailures
    has_label = getattr(error, "has_error_label", None)
    if callable(has_label) and (has_label("RetryableWriteError") or has_label("TransientTransactionError")):
        return True
    return error_code(error) in _PASSING_CODES


def is_change_stream_unsupported(error: BaseException) -> bool:
    return error_code(error) == STANDALONE_CHANGE_STREAM or _STANDALONE_TEXT in str(error)


class ErrorTranslator:
    """Builds the engine error for a driver error in the context of one store."""

    def __init__(self, where: str, mask: Callable[[str], str]) -> None:
        self.where = where  # e.g. "MongoDB db@host1,host2 (collection monque_jobs)"
        self.mask = mask

    def translate(self, action: str, error: BaseException, timeout_hint: str | None = None) -> MonqueError:
        """The engine error for ``error``; ``timeout_hint`` replaces the generic advice when
        the server stopped the operation at its ``maxTimeMS``."""
        detail = self.mask(str(error))
        if isinstance(error, ServerSelectionTimeoutError):
            return StoreUnavailableError(f"Cannot reach {self.where} while trying to {action}: {detail}")
        if isinstance(error, OperationFailure):
            code = error_code(error)
            if code == MAX_TIME_MS_EXPIRED:
                hint = timeout_hint or (
                    "the collection is large or the server is busy: try again, filter by name, or add the "
                    "missing indexes"
                )
                return AggregationTimeoutError(
                    f"Could not {action} on {self.where}: it exceeded its time limit ({detail}); {hint}"
                )
            if code == CHANGE_STREAM_HISTORY_LOST or (code == CHANGE_STREAM_FATAL and "resume" in detail.lower()):
                # The wording is what the scheduler's feed loop keys on to drop its token.
                return ChangeFeedHistoryLostError(
                    f"Resume token is older than the oldest change the oplog of {self.where} still keeps "
                    f"({detail}); reload the full state, then watch without a token"
                )
            if is_change_stream_unsupported(error):
                # Permanent: the feed loop falls back to polling once instead of retrying.
                return ChangeFeedUnsupportedError(
                    f"Change streams are not available on {self.where}: it is a standalone server, and change "
                    "streams need a replica set or a sharded cluster (a single-node replica set will do: "
                    "mongod --replSet rs0, then rs.initiate()); the scheduler falls back to polling"
                )
        kind = StoreUnavailableError if passes(error) else ConnectionError
        return kind(f"MongoDB could not {action} on {self.where}: {detail}")

    @contextmanager
    def guard(self, action: str, timeout_hint: str | None = None) -> Iterator[None]:
        """Turn any driver error raised inside into an engine error (``from`` the cause),
        and BSON's refusals of a document into ``PayloadValidationError``."""
        try:
            yield
        except PyMongoError as error:
            raise self.translate(action, error, timeout_hint) from error
        except (InvalidDocument, OverflowError) as error:
            raise PayloadValidationError(
                f"MongoDB cannot store this job ({action}): {self.mask(str(error))}; payloads must be JSON-like, "
                "with integers within 64 bits and keys without NUL characters"
            ) from error
        except BSONError as error:  # InvalidBSON: a reply PyMongo cannot decode
            raise InvalidJobDocumentError(
                None, f"PyMongo cannot decode it ({self.mask(str(error))}) while trying to {action} on {self.where}"
            ) from error

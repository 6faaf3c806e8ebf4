"""A handler's return value, kept on its job as ``result`` (issue 38, ADR 0020).

What a handler returns is stored when its job completes, and read back as ``Job.result``
(``wait()`` hands it over). It must be JSON (dicts, lists, strings, numbers, booleans,
None), as payloads are, and it is bounded: a result is an answer, not a blob store, and
every read of the job (listings with data, the console's detail, an export) carries it.

``None`` is no result: nothing is written, and a one-off completion stays on the SQLite
store's batched path (the drain's hot path pays one ``is None`` test for the feature).
"""

from __future__ import annotations

from typing import Any

from .errors import InvalidResultError, PayloadValidationError
from .validation import encode_payload_as_stored

#: The largest result kept: 64 KiB of compact UTF-8 JSON. Larger values fail the job with
#: ``InvalidResultError`` (store big outputs elsewhere and return a reference to them).
MAX_RESULT_BYTES = 64 * 1024


def stored_result(value: Any) -> tuple[str, Any]:
    """The result's compact JSON text and its value as every reader will see it (a tuple
    comes back a list, as payloads do); ``InvalidResultError`` when it cannot be kept."""
    try:
        text, stored = encode_payload_as_stored(value, None)
    except PayloadValidationError as error:
        detail = str(error).replace("Job payload", "the value", 1)
        raise InvalidResultError(
            f"The handler returned a result that cannot be stored as JSON: {detail}. Return JSON "
            "(dicts, lists, strings, numbers, booleans, None), or return None and keep the outcome elsewhere"
        ) from None
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    if size > MAX_RESULT_BYTES:
        raise InvalidResultError(
            f"The handler returned a result of {size} bytes of JSON, over the limit of {MAX_RESULT_BYTES} "
            "bytes; store large outputs elsewhere (a file, a table) and return a reference to them"
        )
    return text, stored

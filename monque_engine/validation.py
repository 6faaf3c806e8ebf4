"""Input checks shared by intake, management and listings.

Rules follow upstream Monque: a job name is what an operator types and reads in logs, a
unique key is an opaque dedup handle, ids are ObjectId hex strings.
"""

from __future__ import annotations

import json
import re
import sys
from json.encoder import encode_basestring
from typing import Any

try:
    from _json import make_encoder as _c_make_encoder

    c_make_encoder: Any = _c_make_encoder
except ImportError:  # pragma: no cover
    c_make_encoder = None


from .errors import InvalidJobIdentifierError, PayloadTooLargeError, PayloadValidationError

MAX_NAME_LENGTH = 255
MAX_UNIQUE_KEY_LENGTH = 1024
# As upstream's ``\p{Cc}`` (C0 and C1 controls, U+0000-U+001F and U+007F-U+009F) and JS's
# ``\s`` (Python's plus U+FEFF), so a name or key one side accepts the other accepts too.
# Lone surrogates (U+D800-U+DFFF) cannot be encoded as UTF-8, so no store can keep them.
_NAME_FORBIDDEN = re.compile("[\\s\\x00-\\x1f\\x7f-\\x9f\ufeff\ud800-\udfff]")
_CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f\ud800-\udfff]")
_HEX24 = re.compile(r"[0-9a-f]{24}")
_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"))


def _make_encoder() -> Any:
    """CPython's C encoder, built once instead of per call as ``JSONEncoder.encode`` does
    (0.4 µs instead of 1.9 µs a payload). Same settings; circular references detected."""
    if c_make_encoder is None:  # pragma: no cover - interpreters without the C accelerator
        return None
    return c_make_encoder({}, _ENCODER.default, encode_basestring, None, ":", ",", False, False, False)


_c_encoder = _make_encoder()


def _encode(data: Any) -> str:
    global _c_encoder
    if _c_encoder is None:  # pragma: no cover
        return _ENCODER.encode(data)
    if isinstance(data, str):
        return encode_basestring(data)
    try:
        return "".join(_c_encoder(data, 0))
    except BaseException:
        _c_encoder = _make_encoder()  # its circular-reference markers may be half filled
        raise


def _js_length(text: str) -> int:
    """The length JavaScript reports (UTF-16 code units: a character beyond U+FFFF counts
    twice), which upstream's 255 / 1024 limits are measured in; a name a Node producer can
    store is then exactly a name we accept."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF) if not text.isascii() else len(text)


#: Names already validated: enqueue of a known name skips the checks (enqueue_many tests
#: membership itself, before calling). Only ever holds valid names; capped in size.
KNOWN_NAMES: set[str] = set()
_valid_names = KNOWN_NAMES


def validate_job_name(name: object) -> str:
    if type(name) is str and name in _valid_names:  # the type first: a list is not hashable
        return name
    if not isinstance(name, str):
        raise InvalidJobIdentifierError("name", name, "must be a string")
    if not name:
        raise InvalidJobIdentifierError("name", name, "must not be empty")
    if _js_length(name) > MAX_NAME_LENGTH:
        raise InvalidJobIdentifierError(
            "name",
            name[:40] + "…",
            f"must be at most {MAX_NAME_LENGTH} characters (UTF-16 units, as JavaScript counts)",
        )
    if _NAME_FORBIDDEN.search(name):
        raise InvalidJobIdentifierError(
            "name", name, "must not contain whitespace, control characters or unpaired surrogates"
        )
    if len(_valid_names) < 10_000:
        _valid_names.add(name)
    return name


def validate_unique_key(key: object) -> str:
    if not isinstance(key, str):
        raise InvalidJobIdentifierError("uniqueKey", key, "must be a string")
    if not key.replace("\ufeff", "").strip():  # JS's trim() also drops U+FEFF
        raise InvalidJobIdentifierError("uniqueKey", key, "must not be empty or blank")
    if _js_length(key) > MAX_UNIQUE_KEY_LENGTH:
        raise InvalidJobIdentifierError(
            "uniqueKey",
            key[:40] + "…",
            f"must be at most {MAX_UNIQUE_KEY_LENGTH} characters (UTF-16 units, as JavaScript counts)",
        )
    if _CONTROL.search(key):
        raise InvalidJobIdentifierError("uniqueKey", key, "must not contain control characters or unpaired surrogates")
    return key


def _is_object_id(value: object) -> bool:
    """An ``ObjectId``, without importing ``bson``: one can only exist once bson is imported,
    and a console on SQLite never imports it (18 ms of its start-up; issue 40)."""
    bson = sys.modules.get("bson")
    return bson is not None and isinstance(value, bson.ObjectId)


def is_job_id(value: object) -> bool:
    """True for a 24-hex ObjectId string (any case) or an ObjectId."""
    if _is_object_id(value):
        return True
    return isinstance(value, str) and len(value) == 24 and _HEX24.fullmatch(value.lower()) is not None


def normalize_job_id(value: object) -> str | None:
    """The canonical lower-case hex id, or None when the value cannot be a job id."""
    if _is_object_id(value):
        return str(value)
    if is_job_id(value):
        return str(value).lower()
    return None


def encode_payload(data: Any, max_size: int | None) -> str:
    """Encode the payload as compact JSON, refusing what would not round-trip cleanly.

    The size limit is measured as upstream measures it (the BSON size of ``{data}``) so a
    limit means the same on both stores; values BSON cannot hold are measured as JSON bytes.
    """
    return encode_payload_as_stored(data, max_size)[0]


def encode_payload_as_stored(data: Any, max_size: int | None) -> tuple[str, Any]:
    """``encode_payload``, and the payload as every reader will see it: ``data`` itself when
    it holds only dicts, lists and plain scalars, else its JSON decoded (a tuple comes back a
    list, an ``OrderedDict`` or ``IntEnum`` a dict or int), so the job ``enqueue`` returns
    holds what ``get_job``, listings and the handler get."""
    try:
        text = _encode(data)
    except ValueError as error:  # NaN / Infinity, or a circular reference
        if "ircular" in str(error):
            raise PayloadValidationError(
                "Job payload contains itself (a circular reference), which JSON cannot hold; pass a copy "
                "without the cycle"
            ) from None
        raise PayloadValidationError(
            f"Job payload cannot be stored as JSON ({error}); replace NaN/Infinity with null or a string"
        ) from None
    except TypeError as error:
        raise PayloadValidationError(
            f"Job payload is not JSON-serialisable ({error}); pass dicts, lists, strings, numbers, "
            "booleans and None, and convert other objects (datetimes, sets, bytes) yourself"
        ) from None
    except RecursionError:
        raise PayloadValidationError(_too_deep_message(f"over {MAX_PAYLOAD_DEPTH}")) from None
    # A chain of MAX_PAYLOAD_DEPTH + 1 containers takes twice that many brackets: most
    # payloads are settled by their length alone, the rest by counting before the walk.
    if len(text) > 2 * MAX_PAYLOAD_DEPTH and text.count("[") + text.count("{") > MAX_PAYLOAD_DEPTH:
        depth = _nesting_depth(data)
        if depth > MAX_PAYLOAD_DEPTH:
            raise PayloadValidationError(_too_deep_message(str(depth)))
    if not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:
            raise PayloadValidationError(
                "Job payload holds a string with an unpaired surrogate (e.g. '\\ud800'), which is not valid "
                "Unicode text and cannot be stored; clean or escape it first"
            ) from None
    # Cheap pre-check on the text; the walk decides exactly. Two plain tests instead of one
    # alternation (which tried both at every position: a fifth of encode_payload).
    if _NUL_ESCAPE in text or (len(text) >= 19 and _LONG_DIGITS.search(text)):
        problem = _bson_problem(data)
        if problem is not None:
            raise PayloadValidationError(problem)
    plain = True
    if type(data) not in _FLAT:
        non_string_key, plain = _scan(data)
        if non_string_key:
            raise PayloadValidationError(
                "Job payload has a dict key that is not a string; JSON (and BSON) keys are strings, so it would "
                "come back changed (1 -> '1'): convert the keys to strings yourself"
            )
    if max_size is not None:
        size = payload_size(data, text)
        if size > max_size:
            raise PayloadTooLargeError(size, max_size)
    if len(text) > _MEASURE_FROM:
        size = payload_size(data, text)
        if size > MAX_PAYLOAD_BYTES:
            raise PayloadTooLargeError(size, MAX_PAYLOAD_BYTES, _HARD_LIMIT)
    return text, _as_stored(data, text, plain)


def _as_stored(data: Any, text: str, plain: bool) -> Any:
    """The payload every reader will see, never the caller's own containers: the job
    ``enqueue`` returned shared them, so a caller that changed its dict afterwards saw data
    that was never stored (a data probe). A flat dict (the usual payload) is copied for
    0.2 µs; anything nested or not plain is decoded from the stored text."""
    kind = type(data)
    if kind in _FLAT:
        return data
    if plain and kind is dict and all(type(value) in _FLAT for value in data.values()):
        return dict(data)
    return json.loads(text)


#: The largest payload (BSON size of ``{data}``, as ``max_payload_size`` measures) either
#: store takes. A MongoDB document holds at most 16 MiB, and the job's own fields and its
#: attempt history (10 records of up to 8,192-character messages and tracebacks) grow it
#: after the insert: a payload that filled the document would make the job's failure or
#: completion unwritable, so it would stay processing and run again after every recovery.
#: The same limit on SQLite keeps a job movable between the stores.
MAX_PAYLOAD_BYTES = 15 * 1024 * 1024
_HARD_LIMIT = "the 15 MiB every store allows (MongoDB's 16 MiB document, less room for the job's attempt history)"
#: JSON text shorter than this cannot reach MAX_PAYLOAD_BYTES as BSON (an array of one-digit
#: ints, BSON's worst case, takes under 8 bytes per JSON character), so it is not measured.
_MEASURE_FROM = MAX_PAYLOAD_BYTES // 8

#: Containers (dicts, lists) nested in a payload, at most: MongoDB refuses a document nested
#: more than 100 levels deep and the job document is the first level. Checked on both stores,
#: so a payload SQLite takes can also be moved to, or written by, a MongoDB deployment.
MAX_PAYLOAD_DEPTH = 99


def _too_deep_message(depth: str) -> str:
    return (
        f"Job payload nests containers {depth} levels deep; at most {MAX_PAYLOAD_DEPTH} are stored "
        "(MongoDB's limit of 100 levels, the job document being the first): flatten it, or store "
        "the deep part as a JSON string"
    )


def _nesting_depth(data: Any) -> int:
    """How many dicts/lists deep ``data`` goes (a scalar is 0, ``[]`` is 1), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list | tuple):
            children = value
        else:
            continue
        if depth > deepest:
            deepest = depth
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))
    return deepest


#: An int that may not fit BSON's int64 has at least 19 digits; a NUL in a key shows as \u0000.
_LONG_DIGITS = re.compile(r"\d{19}")
_NUL_ESCAPE = "\\u0000"
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def _bson_problem(data: Any) -> str | None:
    """What BSON (so the MongoDB store) could not hold, checked on both stores so a payload
    means the same everywhere: ints outside int64 (OverflowError in PyMongo) and dict keys
    with a NUL byte (InvalidDocument: BSON keys are NUL-terminated)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, int) and not isinstance(value, bool):
            if not INT64_MIN <= value <= INT64_MAX:
                shown = str(value)
                shown = shown if len(shown) <= 30 else f"{shown[:12]}… ({len(shown)} digits)"
                return (
                    f"Job payload holds the integer {shown}, outside the 64-bit range BSON stores "
                    f"({INT64_MIN} to {INT64_MAX}); store it as a string instead"
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and "\x00" in key:
                    return f"Job payload has a dict key with a NUL byte ({key!r}), which BSON cannot store; rename it"
                stack.append(item)
        elif isinstance(value, list | tuple):
            stack.extend(value)
    return None


_CONTAINERS = (dict, list, tuple)
#: Exact types that hold no dict (a subclass of one of them is not in here, so it takes the walk).
_FLAT = frozenset({str, int, float, bool, type(None)})


def _scan(data: Any) -> tuple[bool, bool]:
    """``(has_non_string_key, plain)``: whether a dict anywhere in the payload has a key that
    is not a str (json.dumps would silently turn 1, 1.5, True or None into a string, so the job
    would not round-trip), and whether the payload is only dicts, lists and exact scalar types
    (so it reads back as it is).

    A dict of str keys and plain scalar values (most payloads) is settled in one pass;
    anything nested, or of a subclass, takes the full walk.
    """
    if type(data) is dict:
        flat = _FLAT
        for key, value in data.items():
            if type(key) is not str or type(value) not in flat:
                return _walk(data)
        return False, True
    if isinstance(data, _CONTAINERS):
        return _walk(data)
    return False, False  # a scalar of a subclass (an IntEnum, a str subclass)


def _walk(data: Any) -> tuple[bool, bool]:
    plain = True
    flat = _FLAT
    stack = [data]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict or isinstance(value, dict):
            plain = plain and kind is dict
            for key, item in value.items():
                if type(key) is not str:
                    if not isinstance(key, str):
                        return True, False
                    plain = False
                if type(item) not in flat:
                    stack.append(item)
        elif kind is list or isinstance(value, list | tuple):
            plain = plain and kind is list
            stack.extend(item for item in value if type(item) not in flat)
        else:
            plain = False  # a scalar of a subclass
    return False, plain


def payload_size(data: Any, text: str) -> int:
    import bson

    try:
        return len(bson.encode({"data": data}))
    except Exception:  # noqa: BLE001 - BSON cannot hold it (e.g. a huge int): fall back to JSON bytes
        return len(text.encode())

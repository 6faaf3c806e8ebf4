"""Opaque keyset cursors for job listings.

A cursor is a direction prefix (``F``/``B``) plus base64url JSON naming the anchor job, the
sort it was made for and the anchor's sort value, with a short checksum. The checksum is for
integrity, not secrecy: an edited or truncated cursor is refused with InvalidCursorError
instead of silently listing the wrong page.
"""

from __future__ import annotations

import base64
import json
from typing import NamedTuple

from .errors import CursorSortMismatchError, InvalidCursorError
from .job import CursorDirection, JobSort
from .validation import normalize_job_id

try:  # hashlib's own blake2s, without importing hashlib (it starts OpenSSL: ~5 ms of the launch)
    from _blake2 import blake2s
except ImportError:  # pragma: no cover - an interpreter without CPython's built-in module
    from hashlib import blake2s

_SORT_FIELDS = ("id", "created_at", "updated_at", "next_run_at", "locked_at")
_KEY = b"monque-cursor-v1"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class CursorAnchor(NamedTuple):
    """The job a cursor page starts after (or before), and its sort value."""

    job_id: str
    value_ms: int | None  # the anchor's sort value; None for id sorts


def _digest(body: bytes) -> str:
    return blake2s(body, key=_KEY, digest_size=6).hexdigest()


def encode_cursor(anchor: CursorAnchor, direction: CursorDirection, sort: JobSort) -> str:
    payload = {"id": anchor.job_id, "by": sort.by, "dir": sort.direction, "v": anchor.value_ms}
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    token = json.dumps({"p": payload, "c": _digest(body)}, separators=(",", ":")).encode()
    prefix = "F" if direction == "forward" else "B"
    return prefix + base64.urlsafe_b64encode(token).decode().rstrip("=")


def decode_cursor(cursor: str, sort: JobSort) -> CursorAnchor:
    """Decode a cursor made for ``sort``; any mismatch or damage raises InvalidCursorError."""
    if not isinstance(cursor, str) or len(cursor) < 2:
        raise InvalidCursorError("Cursor is empty or too short; pass the cursor a previous page returned")
    prefix, body = cursor[0], cursor[1:]
    if prefix not in ("F", "B"):
        raise InvalidCursorError(f"Invalid cursor prefix {prefix!r}; pass the cursor a previous page returned")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        token = json.loads(raw)
        payload = token["p"]
        check = token["c"]
    except (ValueError, TypeError, KeyError):
        raise InvalidCursorError("Cursor is not one this engine made (cannot decode it)") from None
    if not isinstance(payload, dict) or not isinstance(check, str):
        raise InvalidCursorError("Cursor is not one this engine made (unexpected layout)")
    canonical = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    if _digest(canonical) != check:
        raise InvalidCursorError("Cursor was modified or truncated (checksum mismatch)")
    job_id = normalize_job_id(payload.get("id"))
    value = payload.get("v")
    if job_id is None or payload.get("by") not in _SORT_FIELDS:
        raise InvalidCursorError("Cursor names an invalid job id or sort field")
    if payload.get("by") != sort.by or payload.get("dir") != sort.direction:
        raise CursorSortMismatchError(str(payload.get("by")), str(payload.get("dir")), sort.by, sort.direction)
    if sort.by == "id":
        return CursorAnchor(job_id, None)
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidCursorError("Cursor lacks the sort value its sort needs")
    if not _INT64_MIN <= value <= _INT64_MAX:  # no stored instant is; SQLite could not even bind it
        raise InvalidCursorError("Cursor holds a sort value out of range; pass the cursor a previous page returned")
    return CursorAnchor(job_id, value)

"""Cursor encoding: opaque, round-trips, refuses tampering and sort mismatches."""

from __future__ import annotations

import base64
import json

import pytest
from bson import ObjectId

from monque_engine import InvalidCursorError, JobSort
from monque_engine.cursor import CursorAnchor, decode_cursor, encode_cursor

ID = str(ObjectId())


@pytest.mark.parametrize("by", ["id", "created_at", "updated_at", "next_run_at"])
@pytest.mark.parametrize("sort_dir", ["asc", "desc"])
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_round_trip(by, sort_dir, direction):
    sort = JobSort(by=by, direction=sort_dir)
    value = None if by == "id" else 1_700_000_000_123
    cursor = encode_cursor(CursorAnchor(ID, value), direction, sort)
    assert cursor[0] == ("F" if direction == "forward" else "B")
    assert "=" not in cursor and "+" not in cursor and "/" not in cursor
    assert decode_cursor(cursor, sort) == CursorAnchor(ID, value)


def _token(cursor):
    body = cursor[1:]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def _make(prefix, token):
    return prefix + base64.urlsafe_b64encode(json.dumps(token).encode()).decode().rstrip("=")


def test_tampering_is_detected():
    sort = JobSort(by="created_at", direction="desc")
    cursor = encode_cursor(CursorAnchor(ID, 5), "forward", sort)
    token = _token(cursor)
    for field, value in (("v", 6), ("id", str(ObjectId())), ("by", "updated_at"), ("dir", "asc")):
        edited = json.loads(json.dumps(token))
        edited["p"][field] = value
        with pytest.raises(InvalidCursorError, match="checksum"):
            decode_cursor(_make("F", edited), sort)


def test_sort_mismatch_is_rejected():
    cursor = encode_cursor(CursorAnchor(ID, 5), "forward", JobSort(by="created_at", direction="desc"))
    for other in (JobSort(by="created_at", direction="asc"), JobSort(by="updated_at", direction="desc"), JobSort()):
        with pytest.raises(InvalidCursorError, match="sort"):
            decode_cursor(cursor, other)


@pytest.mark.parametrize("cursor", ["", "F", "Z" + "e30", "F@@@", "Fe30", "F" + "bnVsbA", 123, None])
def test_garbage_is_rejected(cursor):
    with pytest.raises(InvalidCursorError):
        decode_cursor(cursor, JobSort())  # type: ignore[arg-type]


def test_valid_checksum_but_bad_content_is_rejected():
    from monque_engine.cursor import _digest

    def forge(payload):
        body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        return _make("F", {"p": payload, "c": _digest(body)})

    with pytest.raises(InvalidCursorError):
        decode_cursor(forge({"id": "not-an-id", "by": "id", "dir": "asc", "v": None}), JobSort())
    with pytest.raises(InvalidCursorError):
        decode_cursor(forge({"id": ID, "by": "name", "dir": "asc", "v": None}), JobSort())
    with pytest.raises(InvalidCursorError):  # a non-id sort needs an integer value
        decode_cursor(forge({"id": ID, "by": "created_at", "dir": "asc", "v": "x"}), JobSort(by="created_at"))
    with pytest.raises(InvalidCursorError):
        decode_cursor(forge({"id": ID, "by": "created_at", "dir": "asc", "v": True}), JobSort(by="created_at"))

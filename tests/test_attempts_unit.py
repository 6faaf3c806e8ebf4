"""Attempt records and error-group keys as pure functions: trimming, hostile exceptions,
normalised messages, the stored shape and its lenient reading."""

from __future__ import annotations

import json
import traceback
from datetime import UTC, datetime

import pytest

from monque_engine import exception_text
from monque_engine.attempts import (
    MAX_TRACEBACK_CHARS,
    AppendedHistory,
    Attempt,
    failure_attempt,
    format_traceback,
    parse_attempts,
    qualified_type,
    trim_traceback,
)
from monque_engine.errorgroups import error_group_key, fold_buckets, hour_window, normalize_message


def _raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:  # noqa: BLE001
        return caught


def test_trimming_keeps_the_innermost_frames_and_the_exception_line() -> None:
    def ping(n: int) -> None:
        if n == 0:
            raise ValueError("deepest")
        pong(n - 1)

    def pong(n: int) -> None:
        ping(n)  # alternating frames: Python does not fold them into "[Previous line repeated]"

    try:
        ping(300)
    except ValueError as error:
        full = "".join(traceback.format_exception(error))
        text = format_traceback(error)
    assert len(full) > MAX_TRACEBACK_CHARS
    assert len(text) <= MAX_TRACEBACK_CHARS + 60
    assert text.startswith("[") and "characters of outer frames trimmed]\n" in text.split("\n", 1)[0] + "\n"
    assert text.rstrip().endswith("ValueError: deepest")
    assert 'raise ValueError("deepest")' in text  # the innermost frame survives
    assert text.split("\n", 1)[1].startswith("  ")  # cut at a line start
    assert trim_traceback("short") == "short"


def test_chained_causes_and_contexts_are_in_the_traceback() -> None:
    try:
        try:
            {}["k"]
        except KeyError:
            raise RuntimeError("while handling")  # noqa: B904 - the implicit context is the point
    except RuntimeError as error:
        text = format_traceback(error)
    assert "KeyError: 'k'" in text and "During handling of the above exception" in text


def test_an_exception_that_cannot_be_formatted_still_gives_a_record(monkeypatch: pytest.MonkeyPatch) -> None:
    class Hostile(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    error = _raised(Hostile())

    def broken(*args: object, **kwargs: object) -> list[str]:
        raise RecursionError("formatter broke")

    monkeypatch.setattr(exception_text._traceback, "TracebackException", broken)
    record = failure_attempt(0, "me", 1, 2, error, will_retry=False)
    assert record.outcome == "failed" and record.error_type.endswith("Hostile")
    assert record.error_message == "Hostile (its message could not be read)"
    # The frames are kept, with the exception's line as it was described.
    assert record.traceback.startswith("Traceback (most recent call last):\n") and "in _raised" in record.traceback
    assert record.traceback.endswith(
        f"{record.error_type}: Hostile (its message could not be read)\n"
        "[the rest of the traceback could not be formatted: RecursionError]\n"
    )
    assert json.loads(record.to_json())["traceback"] == record.traceback


def test_surrogates_and_hostile_classes_are_made_storable() -> None:
    error = _raised(OSError("bad name \udcff"))
    record = failure_attempt(2, "me", 1, 2, error, will_retry=True)
    assert record.number == 3 and record.outcome == "retrying"
    assert "\\udcff" in record.error_message and "\\udcff" in record.traceback
    record.to_json().encode("utf-8")  # storable

    class Weird(Exception):
        pass

    Weird.__module__ = 42  # type: ignore[assignment]
    assert qualified_type(Weird()) == "test_surrogates_and_hostile_classes_are_made_storable.<locals>.Weird"
    assert qualified_type(KeyError("x")) == "KeyError"
    assert qualified_type(json.JSONDecodeError("m", "d", 0)) == "json.decoder.JSONDecodeError"


def test_stored_shape_round_trips_and_is_read_leniently() -> None:
    record = Attempt(2, "retrying", "host-1", 1_000, 1_250, "KeyError", "'k'", "tb")
    stored = json.loads(record.to_json())
    assert stored == {
        "attempt": 2,
        "outcome": "retrying",
        "instanceId": "host-1",
        "startedAt": 1_000,
        "endedAt": 1_250,
        "errorType": "KeyError",
        "errorMessage": "'k'",
        "traceback": "tb",
    }
    assert record.to_document()["startedAt"] == datetime.fromtimestamp(1, UTC)
    assert record.to_document()["durationMs"] == 250  # MongoDB keeps it; SQLite derives it
    assert parse_attempts(record.to_json()) == ()  # an object, not an array
    assert parse_attempts("[" + record.to_json() + "]") == (record,)
    assert parse_attempts([record.to_document()]) == (record,)
    assert parse_attempts("not json") == () and parse_attempts(None) == ()
    assert parse_attempts([42, {"outcome": "x"}, {"endedAt": 5}]) == (Attempt(0, "unknown", None, None, 5),)
    appended = AppendedHistory("[" + record.to_json() + "]", 3, "host-2", 2_000, 2_010)
    assert [a.outcome for a in parse_attempts(appended)] == ["retrying", "completed"]
    assert record.summary == "KeyError: 'k'" and Attempt(1, "completed", None, None, 5).summary == "completed"
    assert record.duration_ms == 250 and Attempt(1, "stale", None, None, 5).duration_ms is None


@pytest.mark.parametrize(
    ("message", "pattern"),
    [
        ("'signing_secret'", "'<str>'"),
        ("order 1234 failed after 2.5 s", "order <n> failed after <n> s"),
        ("job 65f0a1b2c3d4e5f601234567 not found", "job <id> not found"),
        ("user 3fa85f64-5717-4562-b3fc-2c963f66afa6 missing", "user <uuid> missing"),
        ('key "a-b" at 0xdeadbeef', 'key "<str>" at <id>'),
        ("first line 7\nsecond line 8", "first line <n>"),
        ("", ""),
        ("decade", "decade"),  # a word of hex letters is not an id
    ],
)
def test_messages_are_normalised_to_a_pattern(message: str, pattern: str) -> None:
    assert normalize_message(message) == pattern


def test_group_keys_separate_names_and_types_and_join_variants() -> None:
    a = error_group_key("orders", "KeyError", "'a1'")
    assert a == error_group_key("orders", "KeyError", "'b2'")
    assert a != error_group_key("billing", "KeyError", "'a1'")
    assert a != error_group_key("orders", "ValueError", "'a1'")
    assert len(a) == 16 and int(a, 16) >= 0


def test_buckets_fold_into_one_row_per_group() -> None:
    now = 10 * 3_600_000 + 30_000
    start = hour_window(now)
    assert (now - start) // 60_000 == 59
    rows = [("g", "n", None, -1, 2, 0, 100, 200), ("g", "n", "E", 59, 1, 1, now, now), ("h", "m", "F", 0, 1, 0, 5, 5)]
    folded = {row.key: row for row in fold_buckets(rows, start)}
    g = folded["g"]
    assert (g.count, g.retrying, g.error_type, g.first_seen_ms, g.last_seen_ms) == (3, 1, "E", 100, now)
    assert g.per_minute[-1] == 1 and sum(g.per_minute) == 1 and folded["h"].per_minute[0] == 1

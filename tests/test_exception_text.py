"""``describe_exception``: any exception object as plain, bounded, storable text, and never
a raise (issue 25, point 6). The engine-level tests of the same shapes are in
test_failure_recording_hostile_exceptions.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from monque_engine.exception_text import (
    MAX_MESSAGE_CHARS,
    MAX_NAME_CHARS,
    MAX_TRACEBACK_CHARS,
    describe_exception,
)
from tests.hostile_exceptions import SHAPES, HostileClass, HugeMessage, NotesRaise, ReprRaises, odd_names
from tests.hostile_exceptions import storable_text as _storable


def _raised(make: Callable[[], BaseException]) -> BaseException:
    try:
        raise make()
    except BaseException as caught:  # noqa: BLE001
        return caught


class InterruptingStr(Exception):
    def __str__(self) -> str:
        raise KeyboardInterrupt


@pytest.mark.parametrize(
    "make",
    [
        *(make for make, _ in SHAPES.values()),
        InterruptingStr,
        Exception,  # no message: the type's name
        lambda: type("N" * 100_000, (Exception,), {})(),  # a 100,000-character class name
    ],
    ids=[*SHAPES, "__str__-raises-KeyboardInterrupt", "empty", "huge-class-name"],
)
def test_any_exception_is_described_as_plain_bounded_storable_text(make: Callable[[], BaseException]) -> None:
    for error in (make(), _raised(make)):
        described = describe_exception(error)
        assert _storable(described.name, MAX_NAME_CHARS + 1) and _storable(described.type, MAX_NAME_CHARS + 1)
        assert _storable(described.message, MAX_MESSAGE_CHARS + 1) and described.message
        assert _storable(described.traceback, MAX_TRACEBACK_CHARS + 200)


def test_a_hostile_metaclass_does_not_rename_the_exception() -> None:
    described = describe_exception(_raised(HostileClass))
    assert (described.name, described.message) == ("HostileClass", "HostileClass")
    assert described.type == "tests.hostile_exceptions.HostileClass"
    assert described.traceback.startswith("Traceback (most recent call last):\n")


def test_odd_class_names_are_stored_escaped() -> None:
    described = describe_exception(odd_names())
    assert (described.name, described.type, described.message) == ("OddNames", "module.Odd\\udcffNames\\x00", "m")


def test_a_formatter_that_fails_still_leaves_the_frames() -> None:
    described = describe_exception(_raised(lambda: NotesRaise("notes")))
    assert "in _raised" in described.traceback
    assert described.traceback.endswith(
        f"{described.type}: notes\n[the rest of the traceback could not be formatted: RuntimeError]\n"
    )


def test_a_huge_message_leaves_the_frames_in_the_traceback() -> None:
    described = describe_exception(_raised(HugeMessage))
    assert "in _raised" in described.traceback and "x" * 100 + "…" in described.traceback


def test_not_even_an_exception_is_described() -> None:
    described = describe_exception(ReprRaises())  # type: ignore[arg-type]
    assert (described.name, described.message) == ("ReprRaises", "ReprRaises (its message could not be read)")

"""Hostile exception shapes, shared by the tests that record and describe them (issue 25,
point 6): each one breaks a naive ``str(error)``, ``len(message)``, ``type(error).__name__``
or ``traceback.format_exception`` in its own way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from monque_engine.attempts import MAX_REASON_CHARS

#: The bound of a message (``failReason``'s).
MAX_MESSAGE_CHARS = MAX_REASON_CHARS


class LenRaises(str):
    """The issue's example: a str whose len() raises."""

    def __len__(self) -> int:
        raise RuntimeError("no len for you")


class EveryMethodRaises(str):
    """A str whose every method that code might call on text raises."""

    def _no(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no")

    __len__ = __bool__ = __iter__ = __getitem__ = __contains__ = _no
    __eq__ = __ne__ = __lt__ = __hash__ = __add__ = __radd__ = __mul__ = __mod__ = _no  # type: ignore[assignment]
    __str__ = __repr__ = __format__ = _no  # type: ignore[assignment]
    encode = split = splitlines = strip = rstrip = replace = find = join = startswith = endswith = _no  # type: ignore[assignment]


class StrReturnsLenRaises(Exception):
    def __str__(self) -> str:
        return LenRaises("the issue's example")


class StrReturnsEveryMethodRaises(Exception):
    def __str__(self) -> str:
        return EveryMethodRaises("every method raises")


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot describe myself")


class StrReturnsNonString(Exception):
    def __str__(self) -> str:
        return 42  # type: ignore[return-value]


class StrRecurses(Exception):
    def __str__(self) -> str:
        return str(self)


class StrRaisesItself(Exception):
    def __str__(self) -> str:
        raise self


class StrRaisesCancelled(Exception):
    def __str__(self) -> str:
        raise asyncio.CancelledError()


class StrRaisesSystemExit(Exception):
    def __str__(self) -> str:
        raise SystemExit(3)


class HugeMessage(Exception):
    def __str__(self) -> str:
        return "x" * 5_000_000


class ReprRaises:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


class HostileMeta(type):
    """Its classes' ``__name__`` and ``__module__`` raise (``__qualname__`` cannot be a property)."""

    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("no name")

    @property
    def __module__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("no module")


class HostileClass(Exception, metaclass=HostileMeta):
    pass


class TracebackRaises(Exception):
    @property  # type: ignore[override]
    def __traceback__(self) -> Any:
        raise RuntimeError("no traceback")

    @__traceback__.setter
    def __traceback__(self, value: Any) -> None:
        raise RuntimeError("no traceback")


class NotesRaise(Exception):
    @property
    def __notes__(self) -> Any:
        raise RuntimeError("no notes")


class EveryAttributeRaises(Exception):
    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


def _cycle() -> BaseException:
    first, second = ValueError("first"), KeyError("second")
    first.__cause__, second.__cause__ = second, first
    second.__context__ = first
    return first


def _long_chain() -> BaseException:
    error: BaseException = ValueError("root " + "r" * 20_000)
    for i in range(300):
        outer = RuntimeError(f"level {i} " + "m" * 20_000)
        outer.__cause__ = error
        error = outer
    return error


def _group() -> BaseException:
    note = ValueError("with a hostile note")
    note.__notes__ = [LenRaises("note"), 42]
    return ExceptionGroup(
        "batch failed", [StrReturnsLenRaises(), StrRaises(), NotesRaise(), EveryAttributeRaises(), note]
    )


def odd_names() -> BaseException:
    """A class ``__qualname__`` may be any str (lone surrogate, NUL), ``__module__`` anything."""
    cls = type("OddNames", (Exception,), {})
    cls.__qualname__ = "Odd\udcffNames\x00"
    cls.__module__ = EveryMethodRaises("module")
    return cls("m")


def _bad_args() -> BaseException:
    error = Exception("placeholder")
    error.args = (EveryMethodRaises("args"), ReprRaises())
    return error


#: name -> (make the exception, check on the stored failReason).
SHAPES: dict[str, tuple[Callable[[], BaseException], Callable[[str], bool]]] = {
    "str-subclass-raising-on-len": (StrReturnsLenRaises, lambda r: r == "the issue's example"),
    "str-subclass-every-method-raising": (StrReturnsEveryMethodRaises, lambda r: r == "every method raises"),
    "__str__-raises": (StrRaises, lambda r: r == "StrRaises (its message could not be read)"),
    "__str__-returns-non-string": (StrReturnsNonString, lambda r: r.endswith("(its message could not be read)")),
    "__str__-recurses": (StrRecurses, lambda r: r.endswith("(its message could not be read)")),
    "__str__-raises-itself": (StrRaisesItself, lambda r: r.endswith("(its message could not be read)")),
    "__str__-raises-CancelledError": (StrRaisesCancelled, lambda r: r.endswith("(its message could not be read)")),
    "__str__-raises-SystemExit": (StrRaisesSystemExit, lambda r: r.endswith("(its message could not be read)")),
    "5-MB-message": (HugeMessage, lambda r: r == "x" * MAX_MESSAGE_CHARS + "…"),
    "surrogates-and-NUL": (
        lambda: OSError("cannot open bad-\udcff-name\x00tail"),
        lambda r: r == "cannot open bad-\\udcff-name\\x00tail",
    ),
    "KeyError-of-repr-raising": (
        lambda: KeyError(ReprRaises()),
        lambda r: r.endswith("(its message could not be read)"),
    ),
    "args-weird": (_bad_args, lambda r: r.endswith("(its message could not be read)")),
    "metaclass-names-raise": (HostileClass, lambda r: r == "HostileClass"),
    "class-qualname-and-module-odd": (odd_names, lambda r: r == "m"),
    "cause-context-cycle": (_cycle, lambda r: r == "first"),
    "300-chained-causes-of-20-KB": (_long_chain, lambda r: r.startswith("level 299 ")),
    "__traceback__-raises": (lambda: TracebackRaises("tb"), lambda r: r == "tb"),
    "__notes__-raise": (lambda: NotesRaise("notes"), lambda r: r == "notes"),
    "__getattribute__-raises": (lambda: EveryAttributeRaises("attrs"), lambda r: r == "attrs"),
    "exception-group-of-hostile-members": (_group, lambda r: r == "batch failed (5 sub-exceptions)"),
}


def storable_text(text: Any, limit: int) -> bool:
    """Exact str, encodable as UTF-8 (no lone surrogate), no NUL, within its bound."""
    if type(text) is not str or "\x00" in text or len(text) > limit:
        return False
    text.encode("utf-8")
    return True

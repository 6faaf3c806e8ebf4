"""Describing an exception that may be hostile: its type, message and traceback as plain,
storable, bounded text, without ever raising.

Why a module of its own: a handler's exception is arbitrary code, and the failure of its job
is recorded from its description. Its ``__str__`` may raise, recurse, return a non-string,
return megabytes, or return a ``str`` subclass whose own methods raise (even ``len()``);
its class may have a metaclass whose ``__name__`` raises; its ``__cause__`` and
``__context__`` may form a cycle; its ``__traceback__`` or ``__notes__`` may be properties
that raise; its text may hold lone surrogates (which neither store can encode) or NUL
characters (which cut the text short for C-string readers such as ``sqlite3``'s shell).
A description that raised used to leave the job ``processing``, to be re-run after every
lock timeout past ``max_retries``, with no event at all (issue 25).

So everything such code can influence is read here, each piece under its own guard, and
what leaves is an exact ``str`` (a ``str`` subclass would bring its methods along). The
guards catch ``BaseException``, as the standard library's own traceback formatter does
(``traceback._safe_string``): a ``KeyboardInterrupt`` or ``SystemExit`` raised by an
exception's ``__str__`` is not the program being asked to stop, and the handler's own
exception keeps the treatment ADR 0010 gives it.
"""

from __future__ import annotations

import traceback as _traceback
from types import TracebackType
from typing import Any, NamedTuple

#: Bound of a message (``failReason``'s bound too); longer text is cut and ends in ``…``.
MAX_MESSAGE_CHARS = 8_192
#: Bound of a class name (one built with ``type()`` can be any length).
MAX_NAME_CHARS = 1_024
#: Bound of a traceback; the innermost frames are kept (where the error was raised).
MAX_TRACEBACK_CHARS = 8_192
#: Bound of each piece of a traceback (a frame, an exception's line): a huge message must
#: not push every frame out (the message itself is recorded on its own, to its own bound).
MAX_PIECE_CHARS = MAX_TRACEBACK_CHARS // 4

#: The C-level attributes of every class and exception, read past any override by a
#: metaclass, a property or ``__getattribute__``.
_CLASS_NAME = type.__dict__["__name__"]
_CLASS_QUALNAME = type.__dict__["__qualname__"]
_CLASS_MODULE = type.__dict__["__module__"]
_TRACEBACK = BaseException.__dict__["__traceback__"]


class ExceptionText(NamedTuple):
    """An exception as the stores record it; every field an exact, storable ``str``."""

    #: The class's own name: ``KeyError``.
    name: str
    #: ``module.QualName`` of the class; builtins (and ``__main__``) by bare name.
    type: str
    #: ``str(error)``, bounded; the class name when it is empty, a fixed sentence when it
    #: cannot be read.
    message: str
    #: The formatted traceback with its chained causes, innermost end kept.
    traceback: str


def describe_exception(error: BaseException) -> ExceptionText:
    """Type, message and traceback of ``error``; never raises, whatever ``error`` does."""
    try:
        name = exception_name(error)
        kind = exception_type(error)
        message = exception_message(error, name)
        return ExceptionText(name, kind, message, exception_traceback(error, kind, message))
    except BaseException:  # noqa: BLE001 - only a MemoryError can get here: still describe
        return ExceptionText("Exception", "Exception", "(the exception could not be described)", "")


def exception_name(error: object) -> str:
    """The class's own ``__name__``, as the class was created (not as a metaclass says)."""
    return bounded(_class_attribute(type(error), _CLASS_NAME) or "Exception", MAX_NAME_CHARS)


def exception_line(error: BaseException) -> str:
    """``OSError: [Errno 24] Too many open files`` on one line, or the name alone when the
    exception has no text (``MemoryError``: "MemoryError: " read like a cut line)."""
    text = " ".join(str(error).split())
    return f"{exception_name(error)}: {text}" if text else exception_name(error)


def exception_type(error: object) -> str:
    """``module.QualName`` of the exception's class; builtins by bare name (``KeyError``)."""
    cls = type(error)
    kind = _class_attribute(cls, _CLASS_QUALNAME) or exception_name(error)
    module = _class_attribute(cls, _CLASS_MODULE)
    if module is not None and module not in ("builtins", "__main__"):
        kind = f"{module}.{kind}"
    return bounded(kind, MAX_NAME_CHARS)


def exception_message(error: object, name: str | None = None) -> str:
    """``str(error)``, plain, storable and bounded; ``name`` when it is empty, and
    ``<name> (its message could not be read)`` when reading it fails or gives no ``str``."""
    if name is None:
        name = exception_name(error)
    try:
        text = _plain(str(error))
    except BaseException:  # noqa: BLE001 - see the module docstring
        text = None
    if text is None:
        text = f"{name} (its message could not be read)"
    return bounded(text or name, MAX_MESSAGE_CHARS)


def exception_traceback(error: object, kind: str | None = None, message: str | None = None) -> str:
    """The traceback with its chained causes and contexts, as Python prints it, trimmed to
    its innermost ``MAX_TRACEBACK_CHARS``; each piece (a frame, a message line) is bounded
    to ``MAX_PIECE_CHARS``, so a huge message cannot push every frame out.

    When the standard formatter fails (a hostile ``__notes__``, ``__cause__`` or exception
    group member), the frames of ``error`` itself and its ``kind: message`` line are kept,
    with a line saying what could not be shown.
    """
    tb = _traceback_of(error)
    try:
        text = _standard_traceback(error, tb)
    except BaseException as failure:  # noqa: BLE001 - see the module docstring
        if kind is None:
            kind = exception_type(error)
        if message is None:
            message = exception_message(error)
        text = _frames_only(tb, kind, message, exception_name(failure))
    return trim_traceback(storable(text))


def storable(text: str) -> str:
    """``text`` with what a store cannot take, or a reader would cut, escaped visibly:
    lone surrogates (``\\udcff``: no UTF-8 encoding exists) and NUL (``\\x00``)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def bounded(text: str, limit: int) -> str:
    """``storable(text)`` cut to ``limit`` characters, ending in ``…`` when cut."""
    cut = len(text) > limit
    text = storable(text[:limit])  # escaping can only lengthen it
    if len(text) > limit:
        text, cut = text[:limit], True
    return f"{text}…" if cut else text


def trim_traceback(text: str, limit: int = MAX_TRACEBACK_CHARS) -> str:
    """Keep the end (the innermost frames and the exception line), cut at a line start."""
    if len(text) <= limit:
        return text
    tail = text[len(text) - limit :]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) - 1:
        tail = tail[newline + 1 :]
    cut = len(text) - len(tail)
    return f"[{cut} characters of outer frames trimmed]\n{tail}"


# -- guarded reads ----------------------------------------------------------------------------
def _plain(value: object) -> str | None:
    """An exact ``str`` copy of a ``str`` or ``str`` subclass, without calling any of its
    methods (``str.__str__`` of a subclass copies the characters); None for anything else."""
    if issubclass(type(value), str):
        return str.__str__(value)
    return None


def _class_attribute(cls: type, descriptor: Any) -> str | None:
    try:
        return _plain(descriptor.__get__(cls, type))
    except BaseException:  # noqa: BLE001 - no __module__ in the class dict, or worse
        return None


def _traceback_of(error: object) -> TracebackType | None:
    try:
        tb = _TRACEBACK.__get__(error, BaseException)
    except BaseException:  # noqa: BLE001 - not an exception at all
        return None
    return tb if isinstance(tb, TracebackType) else None


def _standard_traceback(error: object, tb: TracebackType | None) -> str:
    """``traceback.format_exception(error)``, piece by piece, each piece plain and bounded."""
    formatted = _traceback.TracebackException(type(error), error, tb, compact=True)  # type: ignore[arg-type]
    pieces: list[str] = []
    for chunk in formatted.format():
        piece = _plain(chunk)
        if piece is None:
            raise TypeError("the traceback formatter produced a non-string")
        pieces.append(piece if len(piece) <= MAX_PIECE_CHARS else f"{piece[:MAX_PIECE_CHARS]}…\n")
    return "".join(pieces)


def _frames_only(tb: TracebackType | None, kind: str, message: str, failure: str) -> str:
    try:
        frames = "".join(_traceback.format_list(_traceback.extract_tb(tb)))
    except BaseException:  # noqa: BLE001 - a frame's source could not be read either
        frames = ""
    head = f"Traceback (most recent call last):\n{frames}" if frames else ""
    line = f"{kind}: {message}"
    if len(line) > MAX_PIECE_CHARS:
        line = f"{line[:MAX_PIECE_CHARS]}…"
    return f"{head}{line}\n[the rest of the traceback could not be formatted: {failure}]\n"


__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PIECE_CHARS",
    "MAX_TRACEBACK_CHARS",
    "ExceptionText",
    "bounded",
    "describe_exception",
    "exception_message",
    "exception_name",
    "exception_traceback",
    "exception_type",
    "storable",
    "trim_traceback",
]

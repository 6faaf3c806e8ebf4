"""What a text search finds (ADR 0008): one definition for the stores and the console.

``text`` is found in a job when its failReason or its error type contains it, or when its
payload does, read as the values the producer passed rather than as JSON text: each object
key, each string (decoded: a newline is one character, not the two of its escape ``\\n``),
and the JSON text of each number, ``true``, ``false`` and ``null``, each on its own. A match
never runs from one of them into the next, or through JSON's own quotes, colons and commas.
ASCII letters match either case (as SQLite's ``LIKE``); every other character only itself.

The SQLite store first narrows the rows with ``LIKE`` on the needle as the payload encoder
escapes it (``escaped``), which every match must contain, and asks ``stored_payload_contains``
only about the rows where that ``LIKE`` could be wrong (see ``may_span_tokens``).
"""

from __future__ import annotations

import json
import string
from json.encoder import encode_basestring
from typing import Any

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
#: Characters JSON writes between tokens (structure and insignificant whitespace): a needle
#: holding one can match the JSON text across two tokens, so such rows are always decoded.
_BETWEEN_TOKENS = frozenset("{}[]:, \t\n\r")


def fold(text: str) -> str:
    """ASCII letters lower-cased, nothing else changed: the case rule of SQLite's ``LIKE``."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def escaped(text: str) -> str:
    """``text`` as the payload encoder (``validation.encode_payload``) writes it inside a JSON
    string: ``"`` and ``\\`` escaped, control characters as ``\\n`` / ``\\u001f``, the rest as is.
    The encoder escapes character by character, so a value that contains ``text`` has JSON
    text that contains ``escaped(text)``."""
    return encode_basestring(text)[1:-1]


def may_span_tokens(text: str) -> bool:
    """Whether a ``LIKE`` match of ``escaped(text)`` on a payload without any backslash can be
    wrong: only when the needle holds a character that can stand between JSON tokens.

    With no backslash in the row no escape can be matched half, and without such a character
    (a ``"`` in the needle is escaped, so it needs a backslash in the row) the match lies in
    one token, whose JSON text is then exactly what the producer passed.
    """
    return not _BETWEEN_TOKENS.isdisjoint(text)


def _scalar_text(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value)  # as the JSON encoder writes it
    return ""


def value_contains(data: Any, folded: str) -> bool:
    """Whether a key, a string, or a number / true / false / null's JSON text in the decoded
    payload ``data`` contains ``folded`` (a needle already passed through ``fold``)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if folded in fold(value):
                return True
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and folded in fold(key):
                    return True
                stack.append(item)
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif folded in _scalar_text(value):
            return True
    return False


def stored_payload_contains(raw: bytes | str | None, folded: str) -> bool:
    """``value_contains`` for a stored payload's JSON text (SQLite hands it over as bytes, so
    text that is not UTF-8 is read with U+FFFD as listings read it, never an error).

    A payload that is not JSON (written by hand) is searched as the text it is. Never raises:
    SQLite calls this inside a query, where an exception would fail the whole listing."""
    if raw is None:
        return False
    try:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return folded in fold(text)
        return value_contains(data, folded)
    except Exception:  # noqa: BLE001 - see the docstring; MemoryError and the like included
        return False


def plain_text_contains(value: str | None, folded: str) -> bool:
    """A plain text field (failReason, error type) contains ``folded``, ASCII case ignored."""
    return value is not None and folded in fold(value)

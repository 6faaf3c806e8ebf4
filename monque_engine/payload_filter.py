"""Structured payload filters: ``data.customer_id missing``, ``data.tenant = acme``.

Why: "contains" text cannot say "has no ``customer_id``" (issue 40: 64 pending jobs with a
bad payload could not be selected at all). A payload term names a path through the payload's
objects and asks whether it is there, or equal to a value.

Semantics, the same on every store (``DataTerm.matches`` is the reference; each store's
query is tested against it):

- A path is ``data.`` and one or more keys, each ``[A-Za-z_][A-Za-z0-9_-]*``. It goes
  through objects only: a key whose parent is not an object (an array, a string…) is not
  there. A key that is a number (``data.items.0``) is refused: a path into an array is not
  supported yet.
- ``missing``: the path is not there (null is there). ``exists``: it is, whatever its value.
- ``= VALUE``: the path is there and its value equals VALUE, with JSON types deciding:
  ``5`` equals ``5`` and ``5.0`` (numbers compare as numbers), ``"5"`` is a string and
  equals neither; ``true`` / ``false`` are booleans (never 1 or 0); ``null`` means present
  and null. A bare word is a string (``acme``); quote a string that reads as a number,
  boolean or null (``"5"``), or holds spaces. An array or object value is refused.
- A payload that is not a JSON object (a list, a string, unreadable text) has no keys.

SQLite reads it with ``json_type`` / ``json_extract`` (no index: read in steps, as
"contains" is); MongoDB with dotted paths, each parent required to be an object and never
an array (a dotted path would otherwise reach into arrays' elements).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from .errors import InvalidJobQueryError

DataOp = Literal["missing", "exists", "eq"]
#: One key of a path.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
#: ``data.a.b missing`` / ``data.a.b exists`` / ``data.a.b = value`` (value: the rest).
_TERM = re.compile(r"\s*data((?:\.[^\s=]*)+)\s*(?:(missing|exists)\s*$|=\s*(.*?)\s*$)", re.DOTALL | re.IGNORECASE)
#: At most this many keys in a path, and this many terms in one filter.
MAX_DEPTH = 16
MAX_TERMS = 8
#: A string value longer than this cannot be sensible (as ``MAX_TEXT_CHARS`` for contains).
MAX_VALUE_CHARS = 500
#: A JSON number SQLite and MongoDB both hold exactly.
_MAX_EXACT = 2**53

EXAMPLE = "data.customer_id missing, data.tenant = acme, data.amount = 5"


@dataclass(frozen=True, slots=True)
class DataTerm:
    """One payload condition (see the module docstring for what each means)."""

    path: tuple[str, ...]
    op: DataOp
    value: str | int | float | bool | None = None

    def __post_init__(self) -> None:
        check_term(self)

    @property
    def dotted(self) -> str:
        return "data." + ".".join(self.path)

    def describe(self) -> str:
        """``data.tenant = acme`` (as typed, the value as JSON where a bare word would misread)."""
        if self.op != "eq":
            return f"{self.dotted} {self.op}"
        return f"{self.dotted} = {value_text(self.value)}"

    def matches(self, payload: Any) -> bool:
        """The reference semantics, on a payload as Python values (``json.loads``' types)."""
        node = payload
        for key in self.path:
            if not isinstance(node, dict) or key not in node:
                return self.op == "missing"
            node = node[key]
        if self.op == "missing":
            return False
        if self.op == "exists":
            return True
        return json_equal(node, self.value)


def json_equal(stored: Any, value: Any) -> bool:
    """JSON types decide: numbers by value (never a bool), strings, booleans, null."""
    if value is None:
        return stored is None
    if isinstance(value, bool):
        return isinstance(stored, bool) and stored is value
    if isinstance(value, int | float):
        return isinstance(stored, int | float) and not isinstance(stored, bool) and stored == value
    return isinstance(stored, str) and stored == value


def value_text(value: Any) -> str:
    """How a value is written in a term: a bare word where it reads back as the same string."""
    if isinstance(value, str) and re.fullmatch(r"[^\s\"',=]+", value) and _literal(value) is _NOT_LITERAL:
        return value
    return json.dumps(value, ensure_ascii=False)


_NOT_LITERAL = object()


def _literal(text: str) -> Any:
    """``text`` as a JSON number, boolean, null or quoted string, else ``_NOT_LITERAL``."""
    try:
        value = json.loads(text)
    except ValueError:
        return _NOT_LITERAL
    except RecursionError:  # [[[[…: an array, nested past what json reads
        value = []
    if isinstance(value, list | dict):
        raise InvalidJobQueryError(
            f"data filter value {_quoted(text)} is an array or object: compare one value (a string, number, "
            "true, false or null)"
        )
    return value


def _quoted(text: str) -> str:
    """Input echoed in an error, cut (``_clip``) and quoted as the filter's own strings are,
    JSON's way (``"acme"``): one spelling for the command line, the console and the API,
    whose clients write JSON (Python's ``'acme'`` and ``'\\x01'`` are no one's input)."""
    return json.dumps(_clip(text), ensure_ascii=False)


def _clip(text: str) -> str:
    """Input echoed in an error, cut to 60 characters: a 40 KB path or value stays out of
    the one line that refuses it (the command line, the console and the API show it)."""
    return text if len(text) <= 60 else text[:60] + "…"


def parse_term(text: str) -> DataTerm:
    """``data.customer_id missing`` → ``DataTerm``; a clear ``InvalidJobQueryError`` otherwise."""
    match = _TERM.fullmatch(text)
    if match is None:
        raise InvalidJobQueryError(
            f"data filter {_quoted(text.strip())}: write data.PATH missing, data.PATH exists or data.PATH = VALUE, "
            f"e.g. {EXAMPLE}"
        )
    path = tuple(match.group(1)[1:].split("."))
    if match.group(2):
        return DataTerm(path, "missing" if match.group(2).lower() == "missing" else "exists")
    raw = match.group(3)
    if not raw:
        raise InvalidJobQueryError(
            f'data filter {_quoted(text.strip())} has no value after "=": write a value, or null for a null, or use '
            "missing for a key that is not there"
        )
    value = _literal(raw)
    if value is _NOT_LITERAL:
        _refuse_typo(text.strip(), match.group(1)[1:], raw)
    return DataTerm(path, "eq", raw if value is _NOT_LITERAL else value)


def _refuse_typo(text: str, dotted: str, raw: str) -> None:
    """A bare value that reads as a typo, refused instead of compared as that odd string.

    ``data.tenant == acme`` compared the string ``= acme`` and ``data.tenant = "acme`` the
    string ``"acme``: both matched nothing, and the console's "0 matching" read as "no such
    jobs" (probe finding). A real string of that shape can still be written, quoted.
    """
    if raw.startswith("="):
        raise InvalidJobQueryError(
            f'data filter {_quoted(text)}: one "=" compares (data.{dotted} = {raw[1:].strip() or "VALUE"}); '
            'quote a string that starts with "=", e.g. "=x"'
        )
    if raw.startswith('"'):
        raise InvalidJobQueryError(
            f"data filter {_quoted(text)}: the value's double quote is not closed (or a \\ escape in it is not JSON's): "
            f'write data.{dotted} = "..." whole'
        )
    if len(raw) > 1 and raw[0] == raw[-1] == "'":
        raise InvalidJobQueryError(
            f'data filter {_quoted(text)}: quote a string with double quotes (data.{dotted} = "{raw[1:-1]}"), '
            f"or leave a plain word bare (data.{dotted} = {raw[1:-1]})"
        )


def parse_terms(text: str) -> tuple[DataTerm, ...]:
    """Terms separated by commas or by the start of another ``data.`` (``data.a missing data.b = 1``),
    outside double quotes: ``data.city = "Paris, TX"`` is one term (it was cut at its comma)."""
    return tuple(parse_term(part) for part in _split_terms(text) if part.strip())


def _split_terms(text: str) -> list[str]:
    parts: list[str] = []
    start, quoted, escaped = 0, False, False
    for i, char in enumerate(text):
        if quoted:
            escaped, quoted = (False, True) if escaped else (char == "\\", char != '"')
            continue
        if char == '"':
            quoted = True
        elif char == ",":
            parts.append(text[start:i])
            start = i + 1
        elif text.startswith("data.", i) and i > start and (text[i - 1].isspace() or text[i - 1] == ","):
            parts.append(text[start:i])
            start = i
    parts.append(text[start:])
    return parts


def check_term(term: DataTerm) -> None:
    """The path and value rules (module docstring): refused with a one-line reason."""
    if not isinstance(term.path, tuple) or not term.path:
        raise InvalidJobQueryError(f"data filter: a path needs at least one key after 'data.', e.g. {EXAMPLE}")
    shown = _clip("data." + ".".join(str(key) for key in term.path))
    if len(term.path) > MAX_DEPTH:
        raise InvalidJobQueryError(f"data filter {shown}: at most {MAX_DEPTH} keys in a path")
    for key in term.path:
        if isinstance(key, str) and key.isdigit():
            raise InvalidJobQueryError(
                f"data filter {shown}: {_quoted(key)} would index an array; a path into an array is not supported yet "
                "(a path goes through objects only)"
            )
        if not isinstance(key, str) or _KEY.fullmatch(key) is None:
            raise InvalidJobQueryError(
                f"data filter {shown}: {_quoted(str(key))} is not a key this filter reads; keys are letters, digits, _ and -, "
                "starting with a letter or _"
            )
    if term.op not in ("missing", "exists", "eq"):
        raise InvalidJobQueryError(
            f"data filter {shown}: the test must be missing, exists or =, not {_quoted(str(term.op))}"
        )
    value = term.value
    if term.op != "eq":
        if value is not None:
            raise InvalidJobQueryError(f"data filter {shown} {term.op} takes no value")
        return
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        named = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        raise InvalidJobQueryError(f"data filter {shown}: {named} is not a JSON number")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_EXACT:
        big = str(value) if abs(value) < 10**60 else "a number of more than 60 digits"
        raise InvalidJobQueryError(f"data filter {shown}: {big} is beyond the numbers every store holds exactly")
    if isinstance(value, str):
        if len(value) > MAX_VALUE_CHARS:
            raise InvalidJobQueryError(f"data filter {shown}: the value is longer than {MAX_VALUE_CHARS} characters")
        if "\x00" in value or any("\ud800" <= c <= "\udfff" for c in value):
            raise InvalidJobQueryError(f"data filter {shown}: the value holds a NUL or an unpaired surrogate")
    elif value is not None and not isinstance(value, bool | int | float):
        raise InvalidJobQueryError(
            f"data filter {shown}: compare one value (a string, number, true, false or null), "
            f"not {type(value).__name__}"
        )


def check_terms(terms: Any, field: str = "data") -> tuple[DataTerm, ...] | None:
    """A filter's ``data`` field: None, or a non-empty sequence of ``DataTerm`` (checked)."""
    if terms is None:
        return None
    if isinstance(terms, DataTerm):
        terms = (terms,)
    if isinstance(terms, str):
        terms = parse_terms(terms)
    if not isinstance(terms, tuple | list) or not all(isinstance(term, DataTerm) for term in terms):
        raise InvalidJobQueryError(f"{field} must be DataTerm values (or text such as {EXAMPLE!r})")
    if not terms:
        raise InvalidJobQueryError(
            f"{field} is empty; a filter that is given must filter: leave {field} unset to not filter by it"
        )
    if len(terms) > MAX_TERMS:
        raise InvalidJobQueryError(f"{field}: at most {MAX_TERMS} payload terms in one filter")
    for term in terms:
        check_term(term)
    return tuple(terms)


def describe_terms(terms: tuple[DataTerm, ...]) -> str:
    return ", ".join(term.describe() for term in terms)


__all__ = ["EXAMPLE", "DataTerm", "check_terms", "describe_terms", "json_equal", "parse_term", "parse_terms"]

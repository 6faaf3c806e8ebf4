"""JavaScript's ``Number(text)`` for a query string, as upstream reads ``limit`` with it
(``src/surface/request-mapping.ts``: ``Number(value)``, then ``Number.isInteger`` and at
least 1), so a client written for upstream's API gets the same page size here.

The grammar is ECMAScript's StringNumericLiteral: surrounding JavaScript whitespace
(Unicode space separators, line terminators, the BOM) ignored; a decimal with an optional
sign, fraction and exponent (``5``, ``+5``, ``5.0``, ``.5e1``, ``1e2``), ``Infinity``; or an
unsigned ``0x`` / ``0o`` / ``0b`` integer. Nothing else is a number (NaN): no ``_``
separators, no other scripts' digits, no ``inf`` or ``nan``. The value is the nearest
double, as JavaScript's is (Python's ``float`` rounds the same way).
"""

from __future__ import annotations

import math
import re

#: JavaScript's WhiteSpace and LineTerminator: what ``Number`` trims.
_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_RADIX = re.compile(r"0(?:[xX](?P<hex>[0-9a-fA-F]+)|[oO](?P<oct>[0-7]+)|[bB](?P<bin>[01]+))")


def js_number(text: str) -> float:
    """``Number(text)`` in JavaScript: a float, NaN for text that is not a number, 0 for
    blank text (as JavaScript's ``Number("")``)."""
    body = text.strip(_SPACE)
    if not body:
        return 0.0
    radix = _RADIX.fullmatch(body)
    if radix is not None:
        base = 16 if radix["hex"] else 8 if radix["oct"] else 2
        try:
            return float(int(radix[radix.lastgroup or "hex"], base))
        except OverflowError:  # past the largest double: JavaScript's Infinity
            return math.inf
    if _DECIMAL.fullmatch(body) is None:
        return math.nan
    if body.lstrip("+-") == "Infinity":
        return -math.inf if body.startswith("-") else math.inf
    return float(body)


def js_whole_number(text: str) -> int | None:
    """``text`` when ``Number.isInteger(Number(text))`` holds (a finite whole number, however
    written: ``1e2``, ``5.0``, ``0x10``), as an int; None otherwise."""
    value = js_number(text)
    if not math.isfinite(value) or value != math.floor(value):
        return None
    return int(value)

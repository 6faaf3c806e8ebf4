"""``asOf``: a bulk count's store position, carried over HTTP and checked when it comes back.

The engine's ``BulkCount`` is an ``int`` that remembers where the store stood when it was
counted (``as_of``); the action given it reaches only jobs that count saw, unchanged since:
never more than counted. Over HTTP the count travels as text, ``POSITION.COUNT.CHECK``, where
CHECK binds it to the action, the selection and the store (``JobStore.position_scope``) it
was counted for. A token handed back with another action or selection, or to a server on
another store, is refused (400): a position means nothing under another selection, and in
another store it would bound nothing (a count of 25 on staging once deleted all 125 matching
jobs of another store). The check is for integrity, not secrecy
(anyone who may act can count).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..job import BulkCount
from .errors import bad_request, shown

_KEY = b"monque-management-asof-v1"
_TOKEN = re.compile(r"^(?P<position>-?\d{1,19})\.(?P<count>\d{1,19})\.(?P<check>[0-9a-f]{16})$")


def _check(action: str, selection: dict[str, Any], position: int, count: int, scope: str) -> str:
    canonical = json.dumps([action, selection, position, count, scope], sort_keys=True, separators=(",", ":"))
    return hashlib.blake2s(canonical.encode(), key=_KEY, digest_size=8).hexdigest()


def encode_as_of(action: str, selection: dict[str, Any], counted: BulkCount) -> str:
    count = int(counted)
    return f"{counted.as_of}.{count}.{_check(action, selection, counted.as_of, count, counted.scope)}"


def decode_as_of(action: str, selection: dict[str, Any], token: str, scope: str) -> BulkCount:
    """The ``BulkCount`` a token carries, if it was made for this action and selection on the
    store ``scope`` names."""
    match = _TOKEN.match(token)
    if match is None:
        raise bad_request(
            f"Invalid asOf {shown(token)}: pass the asOf the count route returned (POST …/count with the same body)"
        )
    position, count = int(match.group("position")), int(match.group("count"))
    if not (-(2**63) <= position < 2**63 and count < 2**63):  # a store position is a 64-bit integer
        raise bad_request(f"Invalid asOf {shown(token)}: its position is out of range; count again")
    if _check(action, selection, position, count, scope) != match.group("check"):
        raise bad_request(
            f"asOf was not counted for this {action} and this selection on this store: count again here "
            "with the same body, then act with the asOf it returns"
        )
    return BulkCount(count, position, scope)

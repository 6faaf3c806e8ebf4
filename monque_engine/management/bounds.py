"""``asOf``: a bulk count's store position, carried over HTTP and checked when it comes back.

The engine's ``BulkCount`` is an ``int`` that remembers where the store stood when it was
counted (``as_of``); the action given it reaches only jobs that count saw, unchanged since:
never more than counted. Over HTTP the count travels as text, ``POSITION.COUNT.CHECK``, where
CHECK binds it to the action and the selection it was counted for. A token handed back with
another action or selection is refused (400): acting on a different selection under an
earlier count's position would promise nothing. The check is for integrity, not secrecy
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


def _check(action: str, selection: dict[str, Any], position: int, count: int) -> str:
    canonical = json.dumps([action, selection, position, count], sort_keys=True, separators=(",", ":"))
    return hashlib.blake2s(canonical.encode(), key=_KEY, digest_size=8).hexdigest()


def encode_as_of(action: str, selection: dict[str, Any], counted: BulkCount) -> str:
    count = int(counted)
    return f"{counted.as_of}.{count}.{_check(action, selection, counted.as_of, count)}"


def decode_as_of(action: str, selection: dict[str, Any], token: str) -> BulkCount:
    """The ``BulkCount`` a token carries, if it was made for this action and selection."""
    match = _TOKEN.match(token)
    if match is None:
        raise bad_request(
            f"Invalid asOf {shown(token)}: pass the asOf the count route returned (POST …/count with the same body)"
        )
    position, count = int(match.group("position")), int(match.group("count"))
    if not (-(2**63) <= position < 2**63 and count < 2**63):  # a store position is a 64-bit integer
        raise bad_request(f"Invalid asOf {shown(token)}: its position is out of range; count again")
    if _check(action, selection, position, count) != match.group("check"):
        raise bad_request(
            f"asOf was not counted for this {action} and this selection: count again with the same body, "
            "then act with the asOf it returns"
        )
    return BulkCount(count, position)

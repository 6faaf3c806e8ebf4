"""Job ids: BSON ObjectIds as 24-hex strings, generated without building ObjectId objects.

Same layout as the BSON spec (4-byte seconds, 5-byte per-process random, 3-byte counter),
so ids sort by creation second and look the same on both stores; about 5x cheaper than
``str(ObjectId())``, which matters when enqueue_many builds 100k ids a second.
"""

from __future__ import annotations

import os
import random
import threading
import time

_lock = threading.Lock()
#: ``prefix`` is the hex of ``second`` (the timestamp part) and ``random``: rebuilt once a
#: second instead of formatting both for every id (a single enqueue mints one per call).
_state = {"pid": -1, "random": "", "counter": 0, "second": -1, "prefix": ""}


def _reseed() -> None:
    _state["pid"] = os.getpid()
    _state["random"] = os.urandom(5).hex()
    _state["counter"] = random.SystemRandom().randint(0, 0xFFFFFF)
    _state["second"] = -1


def _forked() -> None:
    _state["pid"] = -1  # the child reseeds on its first id: never the parent's random part


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _prefix(second: int) -> str:
    """The first 18 hex digits for ``second`` (call with the lock held)."""
    if _state["second"] != second:
        _state["second"] = second
        _state["prefix"] = f"{second & 0xFFFFFFFF:08x}{_state['random']}"
    return _state["prefix"]  # type: ignore[return-value]


def new_object_id() -> str:
    with _lock:
        if _state["pid"] == -1:  # first use, or we are a forked child (see _forked)
            _reseed()
        counter = _state["counter"] = (_state["counter"] + 1) & 0xFFFFFF  # type: ignore[operator]
        prefix = _prefix(int(time.time()))
    return f"{prefix}{counter:06x}"


def new_object_ids(count: int) -> list[str]:
    """``count`` fresh ids in one go (one lock, one clock read): what ``enqueue_many`` uses,
    where a per-id lock and clock read were a tenth of the per-job cost. Same layout and
    order as ``count`` calls of :func:`new_object_id`."""
    if count <= 0:
        return []
    with _lock:
        if _state["pid"] == -1:
            _reseed()
        first = _state["counter"] + 1  # type: ignore[operator]
        _state["counter"] = (first + count - 1) & 0xFFFFFF
        prefix = _prefix(int(time.time()))
    return [f"{prefix}{(first + k) & 0xFFFFFF:06x}" for k in range(count)]

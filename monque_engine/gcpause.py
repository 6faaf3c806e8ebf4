"""Pause CPython's cyclic garbage collector around a burst of allocations the loop makes.

Why (ADR 0001, addendum 3b): ``enqueue_many`` allocates a few objects per item (the job
being built, the ``Job`` returned) while the caller's own item dicts are alive too. Every
700 tracked allocations start a collection; objects still alive are promoted, and enough
promotions start a full collection of the whole heap. In a profile of ``enqueue_many`` the
collector was 13 % of the loop thread, for no garbage: everything it visited was alive.
Paused for the synchronous build (never across an ``await``), the allocations are counted
as usual and the collector runs once, at the first allocation after it is resumed.

Only a collector that was running is paused and resumed: a program that turned it off
keeps it off. The switch is process-wide, so another thread's allocations in those few
milliseconds are not collected until it is resumed either (nothing is lost, only delayed).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()

"""Python's cyclic garbage collector stays off while ``monque-tui`` starts (issue 40: launch to first rows).

Importing the console and building its first screen creates some 80,000 long-lived objects
(modules, classes, Textual's compiled CSS, our widgets) and almost no garbage; the collector
still ran about 110 young passes over them during the imports alone, and more while Textual
started: 30-40 ms of a ~450 ms launch, all before the first rows, for nothing it could free.

``hold`` turns the collector off on the command's first line (``cli.main``). Whatever is not
the console gives it back at once (``release``: the worker, the script commands, ``--serve``,
``--demo --headless`` run as they always did); the console gives it back after its first
rows, with a full collection and ``gc.freeze`` of what start-up left (``console/heap.py``),
or after ``HOLD_LIMIT_S`` should no rows come (a store that is slow to answer). Reference
counting frees nearly everything meanwhile: only cycles wait, and only for those seconds.
``cli.main`` releases on its way out whatever happened, so a test that calls it in-process
never leaves the collector off.
"""

from __future__ import annotations

import gc

#: The longest the console keeps the collector off while it waits for its first rows.
HOLD_LIMIT_S = 5.0

_held = False


def hold() -> None:
    """Turn the collector off for the start-up, unless someone else already turned it off."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """Turn the collector on again if ``hold`` turned it off (idempotent)."""
    global _held
    if _held:
        _held = False
        gc.enable()


def held() -> bool:
    """The collector is off because of ``hold`` (and not released yet)."""
    return _held


__all__ = ["HOLD_LIMIT_S", "held", "hold", "release"]

"""Names a module still answers for after they moved to a module of their own (PEP 562).

Issue 40 moved records a console's start never uses out of ``job`` and ``events`` (into
``fleet_records`` and ``event_payloads``), so they are not created on every launch; the old
import paths (``from monque_engine.job import InstanceInfo``) load them on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection
from typing import Any


def forwarder(module_name: str, source: str, names: Collection[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module_name``: each of ``names`` read from ``source``
    (a module of the ``monque_engine`` package, e.g. ``".fleet_records"``) when first asked for."""

    def resolve(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(source, __package__), name)
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    return resolve

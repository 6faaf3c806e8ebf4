"""How the console is launched: the contract between the CLI (`cli.py`) and the app.

The Textual app owns the event loop, and a store is bound to the loop that opened it, so
the CLI never builds a `Monque` itself for the console: it describes one here and the app
builds it on its own loop, then calls ``setup`` (register handlers, start producers).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from monque_engine import Monque

Setup = Callable[[Monque], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ConsoleConfig:
    url: str
    read_only: bool = False
    #: Options passed to Monque(url, **options) (e.g. scheduler_instance_id).
    monque_options: dict[str, Any] = field(default_factory=dict)
    #: Called once on the app's loop after initialize(): register handlers, start producers.
    setup: Setup | None = None
    #: Start the processor pool in-process (``--app`` / ``--demo``).
    start_workers: bool = False
    #: Shown in the header, e.g. "demo".
    label: str | None = None

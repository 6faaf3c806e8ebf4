"""How the console is launched: the contract between the CLI (`cli/entry.py`) and the app.

The Textual app owns the event loop, and a store is bound to the loop that opened it, so
the CLI never builds a `Monque` itself for the console: it describes one here and the app
builds it on its own loop, then calls ``setup`` (register handlers, start producers).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from monque_engine import Monque
from monque_engine.store.urls import mask_url

Setup = Callable[[Monque], Awaitable[None]]


def read_only_url(url: str) -> str:
    """The same store, opened read-only: for SQLite, ``mode=ro`` (never creates or changes the
    file). Other stores have no read-only URL; for them read-only means no index creation
    (see ``ConsoleConfig``) and no mutating actions."""
    if not url.lower().startswith("sqlite://"):
        return url
    location, _, query = url.partition("?")
    params = [(key, value) for key, value in parse_qsl(query, keep_blank_values=True) if key != "mode"]
    return f"{location}?{urlencode([*params, ('mode', 'ro')], safe='/:')}"


@dataclass(frozen=True, slots=True)
class ConsoleConfig:
    """``read_only`` opens the store read-only as well as disabling every mutating key,
    unless the console also runs workers (``start_workers``), which must write."""

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
    #: MongoDB: where display reads go ("primary" or "secondaryPreferred"; docs/scale-out.md).
    read_preference: str = "primary"
    #: Jobs read per step of a "contains" view's counts and pages (None: the engine's default,
    #: ``DEFAULT_STEP_JOBS``); tests make it small to see the steps on a small store.
    scan_step: int | None = None

    def __post_init__(self) -> None:
        if self.read_only and not self.start_workers:
            object.__setattr__(self, "url", read_only_url(self.url))
            object.__setattr__(
                self,
                "monque_options",
                {**self.monque_options, "skip_index_creation": True, "recover_stale_jobs": False},
            )

    @property
    def display_url(self) -> str:
        """The URL with any password masked: the only form fit for the screen."""
        return mask_url(self.url)

"""What a screen may read of the console app, or ask it in passing, as a type.

The app hands itself to each screen it builds, as this Protocol (``JobsScreen(session, self)``),
and screens use it as ``self.console``: typed by this Protocol instead of ``MonqueConsole``,
``app.py`` stays out of the screens' imports (the app imports the screens, never the other
way round: the ``console-layers`` contract in pyproject.toml), and mypy checks at each of
those calls that ``MonqueConsole`` offers every member listed here. No screen casts
``self.app`` (Textual types it as a bare ``App``): ``tests/tui/test_console_one_hub.py``.

What a screen asks the app to *do* (open a screen, act on jobs, export, pause a name,
release an owner) is not here: it posts an intent (messages.py) and the app handles it.
What remains is the app's state (clock, config), frame timing and the live view's rhythm
(counts, pausing the feed), which a screen reads or drives in passing.

Members that Textual runs as workers (``@work``) return the worker; screens ignore it, so
they are typed ``object`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from textual.timer import Timer

from .clock import Clock
from .config import ConsoleConfig


class ConsoleApp(Protocol):
    """The console app's members that screens use."""

    @property
    def live(self) -> bool:
        """False for snapshots: no feed, no timers, no cursor blink."""

    @property
    def config(self) -> ConsoleConfig:
        """What the console was opened with (store URL, label, options)."""

    @property
    def read_only(self) -> bool:
        """Opened read-only: no key changes a stored job."""

    @property
    def clock(self) -> Clock:
        """The console's clock (frozen in snapshots and tests)."""

    # -- frames and reads
    def first_paint(self) -> None: ...
    def call_after_key_frame(self, callback: Callable[[], None]) -> None: ...
    async def after_key_frame(self) -> None: ...
    def refresh_stats_if_due(self) -> object: ...
    def request_stats(self) -> object: ...
    def set_paused(self, paused: bool) -> None: ...
    def say_if_slow(self, message: str) -> Timer: ...


__all__ = ["ConsoleApp"]

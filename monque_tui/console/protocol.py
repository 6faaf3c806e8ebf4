"""What a screen may ask of the console app, as a type.

Screens reach the running app through ``self.app``; typing that against this Protocol instead
of ``MonqueConsole`` keeps ``app.py`` out of the screens' imports (the app imports the screens,
never the other way round: the ``console-layers`` contract in pyproject.toml). ``app.py``
checks that ``MonqueConsole`` offers every member listed here.

Members that Textual runs as workers (``@work``) return the worker; screens ignore it, so
they are typed ``object`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.timer import Timer

from .actions import ActionKind
from .clock import Clock
from .config import ConsoleConfig
from .query import JobQuery


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

    # -- screens
    def show_job(self, job_id: str, row: Any = None) -> None: ...
    def show_error_group(self, query: JobQuery) -> None: ...
    def show_jobs_named(self, name: str) -> None: ...

    # -- actions and export (the fleet keys post intents instead: messages.py)
    def act_on_jobs(self, kind: ActionKind, jobs: list[Any] | None = None, marked: bool | None = None) -> None: ...
    def export_view(self) -> None: ...


__all__ = ["ConsoleApp"]

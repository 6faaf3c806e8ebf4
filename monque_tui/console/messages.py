"""The Textual messages between the console app and its screens.

They live here, below both, so the app and the screens need not import each other: the app
imports the screens to open them, and a screen that handles or posts a message imports only
this. The app sends ``SessionMessage`` down; screens post intents (``ConsoleIntent``) up to
the app, which handles each in ``MonqueConsole.on_<intent>``.
"""

from __future__ import annotations

from textual.message import Message

from .actions import ActionKind
from .query import JobQuery
from .session import SessionEvent


class SessionMessage(Message):
    """A session event, delivered to the screens as a Textual message."""

    def __init__(self, event: SessionEvent) -> None:
        super().__init__()
        self.event = event


class ConsoleIntent(Message):
    """Something a screen asks the app to do (posted with ``self.app.post_message``)."""


class ActOnQuery(ConsoleIntent):
    """Count every job ``query`` matches (default: the session's view), ask, then act on them."""

    def __init__(self, kind: ActionKind, query: JobQuery | None = None) -> None:
        super().__init__()
        self.kind = kind
        self.query = query


class TogglePause(ConsoleIntent):
    """Pause ``job_name`` for every Python worker on the store, or resume it when it is paused."""

    def __init__(self, job_name: str) -> None:
        super().__init__()
        self.job_name = job_name


class ReleaseOwner(ConsoleIntent):
    """Watch owner ``instance_id``'s heartbeat, ask, then release its processing jobs."""

    def __init__(self, instance_id: str) -> None:
        super().__init__()
        self.instance_id = instance_id


__all__ = ["ActOnQuery", "ConsoleIntent", "ReleaseOwner", "SessionMessage", "TogglePause"]

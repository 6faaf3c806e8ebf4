"""The Textual messages the app sends its screens.

They live here, below both, so the app and the screens need not import each other: the app
imports the screens to open them, and a screen that handles a message imports only this.
"""

from __future__ import annotations

from textual.message import Message

from .session import SessionEvent


class SessionMessage(Message):
    """A session event, delivered to the screens as a Textual message."""

    def __init__(self, event: SessionEvent) -> None:
        super().__init__()
        self.event = event


__all__ = ["SessionMessage"]

"""The console's Textual-free core: see ``core.ConsoleSession``. Never imports Textual."""

from __future__ import annotations

from .core import ConsoleSession, SessionError
from .events import SessionEvent
from .feed import ChangeBatch, ChangeBuffer, Throughput

__all__ = ["ChangeBatch", "ChangeBuffer", "ConsoleSession", "SessionError", "SessionEvent", "Throughput"]

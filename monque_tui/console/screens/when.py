"""Ask when to reschedule: "+10m", "+2h", "now" or an ISO time."""

from __future__ import annotations

from datetime import datetime

from textual.binding import Binding

from ..clock import Clock
from ..query import WhenError, parse_when
from .prompt import PromptError, PromptScreen


class WhenScreen(PromptScreen[datetime]):
    DEFAULT_CSS = """
    WhenScreen > Vertical { width: 72; max-width: 95%; border: thick $warning; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Keep jobs as they are", key_display="Esc"),
        # Ctrl+C aborts the prompt (the input's copy would swallow it silently; probe 5).
        Binding("ctrl+c", "cancel", "Keep jobs as they are", show=False, priority=True),
    ]
    ID_PREFIX = "when"

    def __init__(self, question: str, clock: Clock, blink: bool = True) -> None:
        super().__init__(
            question,
            "+10m, +2h, +1d, now, or an ISO time such as 2030-01-02T15:04 (UTC unless an offset is given); "
            "Enter on an empty field: +10m",
            placeholder="+10m",
            blink=blink,
        )
        self._clock = clock

    def parse(self, text: str) -> datetime:
        try:
            return parse_when(text or "+10m", self._clock())
        except WhenError as error:
            raise PromptError(str(error)) from error

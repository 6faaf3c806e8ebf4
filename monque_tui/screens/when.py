"""Ask when to reschedule: "+10m", "+2h", "now" or an ISO time."""

from __future__ import annotations

from datetime import datetime

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from ..clock import Clock
from ..query import WhenError, parse_when


class WhenScreen(ModalScreen[datetime | None]):
    DEFAULT_CSS = """
    WhenScreen { align: center middle; }
    WhenScreen > Vertical { width: 72; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    WhenScreen #when-question { text-style: bold; }
    WhenScreen #when-error { color: $error; height: auto; }
    WhenScreen .when-hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "refuse", "Keep jobs as they are")]

    def __init__(self, question: str, clock: Clock, blink: bool = True) -> None:
        super().__init__()
        self._question = question
        self._clock = clock
        self._blink = blink

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._question, id="when-question", markup=False)
            yield Static(
                "+10m, +2h, +1d, now, or an ISO time such as 2030-01-02T15:04 (UTC unless an offset is given)",
                classes="when-hint",
            )
            yield Input(placeholder="+10m", id="when-input")
            yield Static("", id="when-error", markup=False)

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = self._blink
        field.focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            moment = parse_when(event.value or "+10m", self._clock())
        except WhenError as error:
            self.query_one("#when-error", Static).update(str(error))
            return
        self.dismiss(moment)

    def action_refuse(self) -> None:
        self.dismiss(None)

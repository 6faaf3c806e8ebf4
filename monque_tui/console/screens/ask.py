"""A yes/no question for actions that are not job plans (release a dead owner's jobs)."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from ..widgets.console_footer import ConsoleFooter


class AskScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    AskScreen { align: center middle; }
    AskScreen > Vertical {
        width: 90%; max-width: 100; height: auto; border: thick $warning; background: $surface; padding: 1 2;
    }
    AskScreen #ask-question { text-style: bold; margin-bottom: 1; width: 100%; height: auto; }
    AskScreen .ask-detail { width: 100%; height: auto; color: $text-muted; }
    AskScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    AskScreen Button { margin-left: 2; }
    AskScreen.-narrow Button { min-width: 0; margin-left: 1; }
    """
    BINDINGS = [
        Binding("escape,n", "refuse", "No", key_display="Esc"),
        Binding("y", "accept", "Yes"),
        # Ctrl+C at a prompt aborts it, as in any terminal program (it did nothing; probe 5).
        Binding("ctrl+c", "refuse", "No", show=False, priority=True),
    ]

    def __init__(self, question: str, details: list[str], verb: str) -> None:
        super().__init__()
        self.question = question
        self.details = details
        self.verb = verb

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.question, id="ask-question", markup=False)
            for line in self.details:
                yield Static(line, classes="ask-detail", markup=False)
            with Horizontal():
                yield Button("Keep (n)", id="refuse")
                yield Button(f"{self.verb} (y)", id="accept", variant="warning")
        yield ConsoleFooter()  # its own keys, not the dead ones of the screen below

    def on_mount(self) -> None:
        self.query_one("#refuse", Button).focus()

    @on(Button.Pressed, "#accept")
    def action_accept(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#refuse")
    def on_resize(self, event: events.Resize) -> None:
        """Below 60 columns the buttons take their labels' width: at 40 the default 16-cell
        buttons cut "Cancel (y)" to "Cancel" (probe 5)."""
        self.set_class(event.size.width < 60, "-narrow")

    def action_refuse(self) -> None:
        self.dismiss(False)

"""Ask where to export the view: a path, prefilled with ``./monque-export-<time>.jsonl``."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class ExportScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    ExportScreen > Vertical {
        width: 90%; max-width: 100; height: auto; border: thick $primary; background: $surface; padding: 1 2;
    }
    ExportScreen #export-question { text-style: bold; width: 100%; }
    ExportScreen .export-detail { color: $text-muted; width: 100%; }
    ExportScreen Input { margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, what: str, path: str, blink: bool = True) -> None:
        super().__init__()
        self.what = what
        self.path = path
        self._blink = blink

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Export {self.what} to:", id="export-question", markup=False)
            yield Static(
                "A path ending in .csv writes CSV; anything else writes JSON Lines. Enter writes, Esc "
                "cancels. An existing file is never overwritten.",
                classes="export-detail",
                markup=False,
            )
            yield Input(self.path, id="export-path")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = self._blink
        field.focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)

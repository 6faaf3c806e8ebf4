"""`?`: every key, grouped, rendered from the binding registry."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..bindings import REGISTRY, Scope, bindings_for, display_keys
from ..widgets.console_footer import ConsoleFooter

SCOPE_NAMES: dict[Scope, str] = {
    "table": "jobs",
    "jobs": "jobs",
    "detail": "detail",
    "queues": "queues",
    "errors": "errors",
    "workers": "workers",
    "app": "everywhere",
    "back": "detail, queues, errors, workers, help",
}


def help_table(read_only: bool = False) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    table.add_column(style="dim")
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for spec in REGISTRY:
        where = ", ".join(dict.fromkeys(SCOPE_NAMES[s] for s in spec.scopes))
        text = spec.help or spec.description
        if spec.mutating and read_only:
            text += " (disabled: read-only)"
        groups.setdefault(spec.group, []).append((display_keys(spec), text, where))
    for group, rows in groups.items():
        table.add_row(Text(group, style="bold underline"), "", "")
        for keys, text, where in rows:
            table.add_row(keys, text, where)
        table.add_row("", "", "")
    return table


class HelpScreen(ModalScreen[None]):
    SCOPES: tuple[Scope, ...] = ("back", "app")
    BINDINGS = bindings_for("back")
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 100; max-width: 95%; height: 90%; border: thick $primary; background: $surface;
                                  padding: 0 1; }
    """

    def __init__(self, read_only: bool = False) -> None:
        super().__init__()
        self._read_only = read_only

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys"
            yield Static(help_table(self._read_only))
        yield ConsoleFooter()

    def action_back(self) -> None:
        self.dismiss(None)

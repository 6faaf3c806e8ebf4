"""`?`: every key, grouped, rendered from the binding registry."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..bindings import REGISTRY, Scope, bindings_for, display_keys
from ..widgets.console_footer import ConsoleFooter

SCOPE_NAMES: dict[Scope, str] = {
    # j/k, g/G, PgUp/PgDn move on the Queues, Errors and Workers tables too (issue 40); the help
    # said "jobs" beside them.
    "table": "every table",
    "jobs": "jobs",
    "detail": "detail",
    "queues": "queues",
    "errors": "errors",
    "workers": "workers",
    "app": "everywhere",
    "back": "detail, queues, errors, workers, help",
}


def help_table(read_only: bool = False) -> RenderableType:
    """Each group's title on a line of its own, then its keys, descriptions and screens.

    The titles used to sit in the keys column, which never wraps: "Act on everything
    matching" made it 26 cells wide, and with the screens column beside it an 80-column
    terminal left the descriptions ~20 cells, most of them wrapped over two to five lines
    (probe finding). Now the keys column is as wide as the widest key, and the descriptions
    take most of what is left.
    """
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for spec in REGISTRY:
        where = ", ".join(dict.fromkeys(SCOPE_NAMES[s] for s in spec.scopes))
        text = spec.help or spec.description
        if spec.mutating and read_only:
            text += " (disabled: read-only)"
        groups.setdefault(spec.group, []).append((display_keys(spec), text, where))
    key_width = max(cell_len(keys) for rows in groups.values() for keys, _text, _where in rows)
    parts: list[RenderableType] = [
        Text(
            "Every key of the console. The footer shows those that fit the terminal's width; "
            "ctrl+p (or :) finds and runs any of them by name.",
            style="italic",
        ),
        Text(""),
    ]
    for group, rows in groups.items():
        table = Table.grid(padding=(0, 2), expand=True)
        table.add_column(style="bold cyan", no_wrap=True, width=key_width)
        table.add_column(ratio=3)
        table.add_column(style="dim", ratio=1, min_width=10)
        for keys, text, where in rows:
            table.add_row(keys, text, where)
        parts += [Text(group, style="bold underline"), table, Text("")]
    return Group(*parts)


class HelpScreen(ModalScreen[None]):
    SCOPES: tuple[Scope, ...] = ("back", "app")
    #: The move keys of the tables scroll the help too (only the arrows and PgUp/PgDn did:
    #: the console probe pressed ``j`` and ``G`` here first); hidden, as on the tables.
    BINDINGS = [
        *bindings_for("back"),
        Binding("j", "scroll_help('down')", show=False),
        Binding("k", "scroll_help('up')", show=False),
        Binding("g", "scroll_help('home')", show=False),
        Binding("G", "scroll_help('end')", show=False),
    ]
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

    def action_scroll_help(self, where: str) -> None:
        scroll = self.query_one(VerticalScroll)
        {"down": scroll.scroll_down, "up": scroll.scroll_up, "home": scroll.scroll_home, "end": scroll.scroll_end}[
            where
        ](animate=False)

"""Ask where to export the view: a path, prefilled with ``./monque-export-<time>.jsonl``.

The path's extension is the format (``.csv`` writes CSV, anything else JSON Lines): the
dialog says which one the path will write as it is typed, and ``ctrl+t`` switches the
format by switching the extension, so the two never disagree.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.widgets import Input, Static

from ..session.export import ExportError, check_target, format_for
from .prompt import PromptError, PromptScreen

FORMAT_NAMES = {"csv": "CSV", "jsonl": "JSON Lines"}
EXTENSIONS = {"csv": ".csv", "jsonl": ".jsonl"}


def with_format(path: str, fmt: str) -> str:
    """``path`` with the extension of ``fmt``: a known extension is replaced, any other kept
    and the new one added (``jobs.txt`` → ``jobs.txt.csv``)."""
    for extension in EXTENSIONS.values():
        if path.lower().endswith(extension):
            return path[: -len(extension)] + EXTENSIONS[fmt]
    return path + EXTENSIONS[fmt]


class ExportScreen(PromptScreen[str]):
    DEFAULT_CSS = """
    ExportScreen > Vertical { width: 90%; max-width: 100; border: thick $primary; }
    ExportScreen Input { margin-top: 1; }
    ExportScreen #export-format { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", key_display="Esc"),
        Binding("ctrl+t", "switch_format", "CSV ⇄ JSON Lines"),
        # Ctrl+C aborts the prompt (the input's copy would swallow it silently; probe 5).
        Binding("ctrl+c", "cancel", "Cancel", show=False, priority=True),
    ]
    ID_PREFIX = "export"

    def __init__(self, what: str, path: str, blink: bool = True, store_url: str | None = None) -> None:
        super().__init__(
            f"Export {what} to:",
            "A path ending in .csv writes CSV; anything else writes JSON Lines (ctrl+t switches). "
            "Enter writes, Esc cancels. An existing file is never overwritten.",
            value=path,
            blink=blink,
            # The whole path selected meant one Backspace wiped it (issue 40): the cursor starts
            # at its end instead.
            select_on_focus=False,
        )
        self.what = what
        self.path = path
        #: The console's store: a path leading to its files is refused here (``check_target``).
        self.store_url = store_url

    def on_mount(self) -> None:
        super().on_mount()
        field = self.query_one(Input)
        field.parent.mount(Static(self._format_line(field.value), id="export-format", markup=False), after=field)  # type: ignore[union-attr]

    @staticmethod
    def _format_line(path: str) -> str:
        return f"Writes {FORMAT_NAMES[format_for(path)]}."

    @on(Input.Changed)
    def _path_changed(self, event: Input.Changed) -> None:
        for line in self.query("#export-format").results(Static):
            line.update(self._format_line(event.value))

    def action_switch_format(self) -> None:
        field = self.query_one(Input)
        other = "jsonl" if format_for(field.value) == "csv" else "csv"
        field.value = with_format(field.value, other)
        field.cursor_position = len(field.value)

    def parse(self, text: str) -> str | None:
        try:
            check_target(text, self.store_url)
        except ExportError as error:
            raise PromptError(str(error).removeprefix("Export: ")) from None
        return text.strip()

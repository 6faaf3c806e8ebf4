"""Ask where to export the view: a path, prefilled with ``./monque-export-<time>.jsonl``."""

from __future__ import annotations

from textual.binding import Binding

from ..session.export import ExportError, check_target
from .prompt import PromptError, PromptScreen


class ExportScreen(PromptScreen[str]):
    DEFAULT_CSS = """
    ExportScreen > Vertical { width: 90%; max-width: 100; border: thick $primary; }
    ExportScreen Input { margin-top: 1; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        # Ctrl+C aborts the prompt (the input's copy would swallow it silently; probe 5).
        Binding("ctrl+c", "cancel", "Cancel", show=False, priority=True),
    ]
    ID_PREFIX = "export"

    def __init__(self, what: str, path: str, blink: bool = True, store_url: str | None = None) -> None:
        super().__init__(
            f"Export {what} to:",
            "A path ending in .csv writes CSV; anything else writes JSON Lines. Enter writes, Esc "
            "cancels. An existing file is never overwritten.",
            value=path,
            blink=blink,
        )
        self.what = what
        self.path = path
        #: The console's store: a path leading to its files is refused here (``check_target``).
        self.store_url = store_url

    def parse(self, text: str) -> str | None:
        try:
            check_target(text, self.store_url)
        except ExportError as error:
            raise PromptError(str(error).removeprefix("Export: ")) from None
        return text.strip()

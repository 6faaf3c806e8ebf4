"""Status tabs with the store's live counts: `1 All 1,234  2 Pending 12 …`."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from monque_engine import JobStatus, QueueStats

from ..formatting import STATUS_STYLES, STATUS_TABS


class StatusTabs(Static):
    DEFAULT_CSS = """
    StatusTabs { height: auto; padding: 0 1; }
    """

    # A long view description wraps to a second line rather than hiding the count: re-measure on change.
    active: reactive[JobStatus | None] = reactive(None)
    stats: reactive[QueueStats | None] = reactive(None, layout=True)
    #: How many jobs match the whole view (status, name, text and time ranges), when known.
    matching: reactive[int | None] = reactive(None, layout=True)
    describe: reactive[str] = reactive("", layout=True)

    def render(self) -> Text:
        text = Text()
        stats = self.stats
        for index, (status, label) in enumerate(STATUS_TABS, start=1):
            count = "…" if stats is None else f"{stats.total if status is None else stats.count(status):,}"
            style = STATUS_STYLES[status] if status is not None else "bold"
            chunk = Text()
            chunk.append(f"{index}", style="dim")
            chunk.append(f" {label} ", style=style)
            chunk.append(count)
            if status == self.active:
                chunk.stylize("reverse")
            text.append_text(chunk)
            text.append("  ")
        if self.describe:
            text.append("│ ", style="dim")
            text.append(self.describe, style="italic")
            if self.matching is not None:
                text.append(f" — {self.matching:,} matching", style="italic")
        return text

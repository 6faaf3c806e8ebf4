"""Status tabs with the store's live counts: `1 All 1,234  2 Pending 12 …`."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from monque_engine import JobStatus, QueueStats

from ..formatting import STATUS_STYLES, STATUS_TABS


class StatusTabs(Static):
    DEFAULT_CSS = """
    StatusTabs { height: 1; padding: 0 1; }
    """

    # One line always: a long view description is shortened in the middle, never the sort or count.
    active: reactive[JobStatus | None] = reactive(None)
    stats: reactive[QueueStats | None] = reactive(None)
    #: How many jobs match the whole view (status, name, text and time ranges), when known.
    matching: reactive[int | None] = reactive(None)
    describe: reactive[str] = reactive("")
    #: ", sorted by created ↓": kept whole at the end.
    sort_text: reactive[str] = reactive("")

    def _tabs(self, short: int | None) -> Text:
        """The six tabs; ``short`` cuts each label to that many letters (0: the key and count only)."""
        text = Text()
        stats = self.stats
        for index, (status, label) in enumerate(STATUS_TABS, start=1):
            count = "…" if stats is None else f"{stats.total if status is None else stats.count(status):,}"
            style = STATUS_STYLES[status] if status is not None else "bold"
            shown = label if short is None else label[:short]
            chunk = Text()
            chunk.append(f"{index}", style="dim")
            chunk.append(f" {shown} " if shown else " ", style=style)
            chunk.append(count)
            if status == self.active:
                chunk.stylize("reverse")
            text.append_text(chunk)
            text.append("  " if short is None else " ")
        return text

    def render(self) -> Text:
        width = self.content_size.width
        tail = self.sort_text + (f" — {self.matching:,} matching" if self.matching is not None else "")
        wanted = min(len(self.describe), 24) + len(tail) + 2
        # The status word ("completed", "all") matters most, then the sort, then the count.
        essential = self.describe.split(" ", 1)[0].rstrip(",")
        text = self._tabs(None)
        for short in (4, 3):
            if not width or text.cell_len + wanted <= width:
                break
            text = self._tabs(short)
        else:
            # Labels matter more than the sort text (the sorted column's header has its arrow):
            # keep 3-letter labels while the view's status word still fits beside them.
            if text.cell_len + len(essential) + 2 > width:
                text = self._tabs(0)
        if self.describe or self.sort_text:
            text.append("│ ", style="dim")
            describe = self.describe
            room = width - text.cell_len - len(tail) if width else len(describe)
            if room < len(essential) + 1 and self.matching is not None:
                tail = self.sort_text
                room = width - text.cell_len - len(tail)
            if room < len(essential) + 1 and width:
                tail = ""  # the sort shows in the column header; never cut it mid-word
                room = width - text.cell_len
            if room < len(describe):
                describe = describe[: max(0, room - 1)] + "…" if room > len(essential) + 1 else essential
            text.append(describe, style="italic")
            text.append(tail, style="italic")
        text.no_wrap = True
        return text

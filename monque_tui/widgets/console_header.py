"""The top line: which store, whether the view is live, read-only, paused, marked count."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

#: The engine's FeedState vocabulary (ResilientWatch), plus "frozen" for snapshots.
FEED_LABELS: dict[str, tuple[str, str]] = {
    "connecting": ("◌ connecting", "yellow"),
    "live": ("● live", "bold green"),
    "reconnecting": ("◌ disconnected, retrying", "bold red"),
    "fallback": ("◐ polling (no live feed)", "bold yellow"),
    "stopped": ("○ feed off", "dim"),
    "frozen": ("◆ feed off", "dim"),
}


class ConsoleHeader(Static):
    DEFAULT_CSS = """
    ConsoleHeader { height: 1; background: $primary-background; color: $text; padding: 0 1; }
    """

    store: reactive[str] = reactive("")
    label: reactive[str | None] = reactive(None)
    feed: reactive[str] = reactive("connecting")
    feed_error: reactive[str | None] = reactive(None)
    paused: reactive[bool] = reactive(False)
    read_only: reactive[bool] = reactive(False)
    marked: reactive[int] = reactive(0)
    #: ``marked`` counts every job of the view ("mark all matching"), not marked rows.
    marked_all: reactive[bool] = reactive(False)
    worker_info: reactive[str] = reactive("")
    #: Job names paused in the store (issue 13), not the frozen view above.
    paused_names: reactive[tuple[str, ...]] = reactive(())

    def render(self) -> Text:
        """Store and feed, then each active state, separated by a dim ``·`` (spaces alone were
        lost where the header is read as text: "feed off1 marked")."""
        text = Text()
        text.append("monque ", style="bold")
        if self.label:
            text.append(f"[{self.label}] ", style="bold magenta")
        text.append(self.store, style="underline")
        parts: list[tuple[str, str]] = []
        label, style = FEED_LABELS.get(self.feed, (self.feed, ""))
        if self.feed_error and self.feed in ("reconnecting", "fallback"):
            label += f" ({self.feed_error[:60]})"
        parts.append((label, style))
        if self.paused:
            parts.append(("⏸ PAUSED (p resumes)", "bold reverse yellow"))
        if self.read_only:
            parts.append(("READ-ONLY", "bold reverse red"))
        if self.paused_names:
            shown = ", ".join(self.paused_names[:3]) + (
                f" +{len(self.paused_names) - 3}" if len(self.paused_names) > 3 else ""
            )
            parts.append((f"⏸ paused: {shown}", "bold yellow"))
        if self.worker_info:
            parts.append((self.worker_info, "cyan"))
        if self.marked_all:
            parts.append((f"all {self.marked:,} matching marked", "bold yellow"))
        elif self.marked:
            parts.append((f"{self.marked:,} marked", "bold yellow"))
        for part, style in parts:
            text.append(" · ", style="dim")
            text.append(part, style=style)
        return text

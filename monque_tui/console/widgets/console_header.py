"""The top line: which store, whether the view is live, read-only, secondary reads, paused, marked count."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ..formatting import middle_cut

#: The engine's FeedState vocabulary (ResilientWatch), plus "frozen" for snapshots.
FEED_LABELS: dict[str, tuple[str, str]] = {
    "connecting": ("◌ connecting", "yellow"),
    "live": ("● live", "bold green"),
    "reconnecting": ("◌ disconnected, retrying", "bold red"),
    "fallback": ("◐ polling (no live feed)", "bold yellow"),
    "stopped": ("○ feed off", "dim"),
    "frozen": ("◆ feed off", "dim"),
}

#: Live updates frozen with ``p`` (only this console's view; jobs keep running).
FROZEN_VIEW = "❄ view frozen, p for live"
#: The same where the line has no room for it (``p`` is in the footer and ``?``).
FROZEN_SHORT = "❄ frozen"


def store_state_label(lost: bool, damaged: bool) -> str:
    """What the console says while its store does not answer: the header, and the alerts line
    of every screen (``AlertsLine``), say the same words."""
    if damaged:
        return "✗ store file damaged: see the notice"
    if lost:
        return "✗ store file lost: restart the console"
    return "✗ store error, retrying"


class ConsoleHeader(Static):
    DEFAULT_CSS = """
    ConsoleHeader { height: 1; background: $primary-background; color: $text; padding: 0 1; }
    """

    store: reactive[str] = reactive("")
    label: reactive[str | None] = reactive(None)
    feed: reactive[str] = reactive("connecting")
    feed_error: reactive[str | None] = reactive(None)
    #: The store does not answer (the reason is in the "Store error" notice, repeated every 30 s).
    store_error: reactive[bool] = reactive(False)
    #: ... for good: its SQLite file was deleted or replaced (no retry can help).
    store_lost: reactive[bool] = reactive(False)
    #: ... because the file is damaged (the notice says how to check it and restore a backup).
    store_damaged: reactive[bool] = reactive(False)
    paused: reactive[bool] = reactive(False)
    read_only: reactive[bool] = reactive(False)
    marked: reactive[int] = reactive(0)
    #: ``marked`` counts every job of the view ("mark all matching"), not marked rows.
    marked_all: reactive[bool] = reactive(False)
    #: Job names the in-process workers handle (``--app``, ``--demo``).
    worker_names: reactive[tuple[str, ...]] = reactive(())
    #: Job names paused in the store (issue 13), not the frozen view above.
    paused_names: reactive[tuple[str, ...]] = reactive(())
    #: MongoDB display reads from a secondary, and its estimated lag (``--read-preference``).
    reads: reactive[str | None] = reactive(None)

    def render(self) -> Text:
        """Store and feed, then each active state, separated by a dim ``·`` (spaces alone were
        lost where the header is read as text: "feed off1 marked").

        At a narrow width the states win over the store's URL: a long path is shortened in
        the middle (its file name kept) so the feed state and the marked count stay on the
        line, and the worker names take only the room left (probe finding: at 80 columns a
        long path or the names pushed "1 marked" off the line).
        """
        parts: list[tuple[str, str]] = []
        #: Each part's shorter form, used in this order while the line has no room even with
        #: the store cut short: the paused names' count ("⏸ paused:" once ended the line at 80
        #: columns with --app), then the frozen view's hint (the marked count lost "marked").
        shorter: list[tuple[int, str]] = []
        label, style = FEED_LABELS.get(self.feed, (self.feed, ""))
        if self.feed_error and self.feed in ("reconnecting", "fallback"):
            label += f" ({short_reason(self.feed_error, 60)})"
        if self.store_error:
            # Not "live" over rows the store may no longer have: the feed state means little now.
            label, style = store_state_label(self.store_lost, self.store_damaged), "bold reverse red"
        parts.append((label, style))
        if self.paused:
            # The view, not the queue: worded and coloured apart from "⏸ paused: NAME" (a paused
            # job name in the store), which it once read as (both said ⏸ PAUSED in yellow).
            frozen_at = len(parts)
            parts.append((FROZEN_VIEW, "bold reverse cyan"))
        if self.read_only:
            parts.append(("READ-ONLY", "bold reverse red"))
        if self.reads:
            parts.append((self.reads, "yellow"))
        if self.paused_names:
            shown = ", ".join(self.paused_names[:3]) + (
                f" +{len(self.paused_names) - 3}" if len(self.paused_names) > 3 else ""
            )
            shorter.append((len(parts), f"⏸ {len(self.paused_names)} paused"))
            parts.append((f"⏸ paused: {shown}", "bold yellow"))
        if self.paused:
            shorter.append((frozen_at, FROZEN_SHORT))
        if self.marked_all:
            parts.append((f"all {self.marked:,} matching marked", "bold yellow"))
        elif self.marked:
            parts.append((f"{self.marked:,} marked", "bold yellow"))
        text = Text()
        text.append("monque ", style="bold")
        if self.label:
            text.append(f"[{self.label}] ", style="bold magenta")
        width = self.content_size.width
        states = sum(3 + cell_len(part) for part, _style in parts)
        for at, short in shorter:
            if width and text.cell_len + MIN_STORE + states > width:
                long, style = parts[at]
                states -= cell_len(long) - cell_len(short)
                parts[at] = (short, style)
        store = self.store
        if width and text.cell_len + cell_len(store) + states > width:
            store = middle_cut(store, max(MIN_STORE, width - text.cell_len - states))
        text.append(store, style="underline")
        for part, style in parts:
            text.append(" · ", style="dim")
            text.append(part, style=style)
        # Last, and only as much as fits: the worker names were cut mid-list ("workers: email.send,"
        # at 80 columns, "workers:" alone at 60) and pushed the marked count off the line.
        room = width - text.cell_len - 3 if width else None
        shown = workers_text(self.worker_names, room)
        if shown:
            text.append(" · ", style="dim")
            text.append(shown, style="cyan")
        return text


def short_reason(text: str, room: int) -> str:
    """``text`` in ``room`` characters, cut between words with ``…``.

    The feed's reason was cut mid-word: "(ChangeFeedHistoryLostError: The change feed moved
    past this )" after a console resumed from a minute's stop (probe 6).
    """
    text = " ".join(text.split())
    if len(text) <= room:
        return text
    cut = text[: room - 1].rsplit(" ", 1)[0].rstrip(" :;,.")
    return cut + "…"


#: The store URL is never shortened below this many cells (its scheme and file name stay readable).
MIN_STORE = 24


def workers_text(names: tuple[str, ...], room: int | None) -> str:
    """``workers: a, b, c`` in ``room`` cells (None: no limit): as many names as fit, then ``+N``."""
    if not names:
        return ""
    for count in range(len(names), 0, -1):
        more = f" +{len(names) - count}" if count < len(names) else ""
        candidate = f"workers: {', '.join(names[:count])}{more}"
        if room is None or len(candidate) <= room:
            return candidate
    short = f"workers: {len(names)} names"
    return short if room is None or len(short) <= room else ""

"""Status tabs with the store's live counts: `1 All 1,234  2 Pending 12 …`."""

from __future__ import annotations

import re
from collections.abc import Iterator

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from monque_engine import JobStatus, QueueStats

from ..formatting import STATUS_STYLES, STATUS_TABS, middle_cut, span

#: Which tabs stay when not all fit (1-based, as the keys): Failed, Pending, All, Processing,
#: Completed, Cancelled (the active tab always stays, first).
KEEP_FIRST = (5, 2, 1, 3, 4, 6)


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
    #: Seconds since the counts were taken, once that is long enough to say (None: fresh).
    counts_age: reactive[int | None] = reactive(None)
    #: The errors-view group the view is inside (its ``Type: pattern`` label), or None.
    group: reactive[str | None] = reactive(None)
    #: A "contains" view's search in progress ("searching… 3.2M of 10M jobs read"): shown in
    #: place of the count while the count runs.
    searching: reactive[str | None] = reactive(None)

    def _tabs(self, short: int | None, keep: int = len(STATUS_TABS)) -> Text:
        """The tabs; ``short`` cuts each label to that many letters (0: the key and count only).

        ``keep``: how many tabs to show, the active one always among them, the rest as ``…``.
        """
        text = Text()
        stats = self.stats
        tabs = list(enumerate(STATUS_TABS, start=1))
        if keep < len(tabs):
            # The active tab, then by what an operator reads first: failed, pending, all.
            active = next(i for i, (status, _) in tabs if status == self.active)
            ranked = [active] + [i for i in KEEP_FIRST if i != active]
            chosen = set(ranked[:keep])
            tabs = [tab for tab in tabs if tab[0] in chosen]
        previous = 0
        for index, (status, label) in tabs:
            if index > previous + 1:
                text.append("… ", style="dim")  # tabs left out here
            previous = index
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
        if previous < len(STATUS_TABS):
            text.append("… ", style="dim")
        return text

    def render(self) -> Text:
        if self.group is not None:
            return self._render_group(self.content_size.width)
        width = self.content_size.width
        matching = f" — {self.matching:,} matching" if self.matching is not None else ""
        if self.searching is not None:
            matching = f" — {self.searching}"
        age = f" · counts {span(self.counts_age * 1000)} old" if self.counts_age is not None else ""
        # Without the age: it takes only room the rest leaves (it never shortens the labels).
        wanted = min(len(self.describe), 24) + len(self.sort_text + matching) + 2
        if matching and not self._count_on_tab():
            # Shorter tab labels before the count of a filtered view goes: beside "1 All
            # 200,001" a view "in error group '…'" without "— 13,334 matching" read as the
            # group's size (probe 7, 160 columns).
            wanted = max(wanted, len(self.describe) + len(matching) + 2)
        # The status word ("completed", "all") matters most, then the rest of the view's
        # description, then the count, then the sort (the sorted column's header has its arrow).
        essential = self.describe.split(" ", 1)[0].rstrip(",")
        # What must fit beside the tabs before whole tabs give way: a filtered view's whole
        # description and count (a filter cut to ``failed …`` hid what the counts are of), an
        # unfiltered one's start; never the sort (its column's header has the arrow).
        filtered = self.describe.strip() != essential
        view = len(self.describe) + len(matching) + 2 if filtered else min(len(self.describe), 24) + len(matching) + 2
        text = self._tabs(None)
        for short in (4, 3):
            if not width or text.cell_len + wanted <= width:
                if width and filtered and text.cell_len + view > width:
                    # Labels fit but the filter would be cut: shorter labels, then fewer tabs.
                    keep = len(STATUS_TABS)
                    text = self._tabs(3)
                    while keep > 1 and text.cell_len + view > width:
                        keep -= 1
                        text = self._tabs(3, keep)
                break
            text = self._tabs(short)
        else:
            # Labels stay: at 80 columns a filtered view read ``1 50,000 2 914 3 32 …``,
            # counts without their statuses, and lost its "— N matching" too (issue 40). Whole
            # tabs give way first (the active one stays, and the first ones: All, Pending),
            # down to two, while the view and its count do not fit; then down to one while
            # the view's status word does not. Bare counts only when one labelled tab and
            # the status word do not fit (40 columns), and whole tabs give way again there,
            # never a count cut ("6 1,1").
            keep = len(STATUS_TABS)
            while keep > 1 and text.cell_len + view > width:
                keep -= 1
                text = self._tabs(3, keep)
            while keep > 1 and text.cell_len + len(essential) + 2 > width:
                keep -= 1
                text = self._tabs(3, keep)
            if text.cell_len + len(essential) + 2 > width:
                keep = len(STATUS_TABS)
                text = self._tabs(0)
                while keep > 1 and text.cell_len + len(essential) + 2 > width:
                    keep -= 1
                    text = self._tabs(0, keep)
        if self.describe or self.sort_text:
            text.append("│ ", style="dim")
            describe = self.describe
            room = width - text.cell_len if width else len(describe) + len(self.sort_text + matching + age)
            # The counts' age goes first, then "sorted" (", by run time ↑"), then the sort (its
            # column's header has the arrow; the run time's is STATUS's, which alone read as a
            # sort by status at 80 columns: a docs probe).
            short_sort = self.sort_text.replace(", sorted by ", ", by ", 1)
            for tail in (
                self.sort_text + matching + age,
                self.sort_text + matching,
                short_sort + matching,
                matching,
            ) + (() if matching else ("",)):
                if len(describe) + len(tail) <= room:
                    break
            else:
                # The description is cut (between whole parts) before the count goes: the
                # count is how many jobs C R D reach (console probe: a payload-filtered view
                # at 80 columns lost "— 335 matching").
                tail = matching if matching and self._fitted(room - len(matching)) else ""
                describe = self._fitted(room - len(tail))
            text.append(describe, style="italic")
            text.append(tail, style="italic")
        text.no_wrap = True
        return text

    def _render_group(self, width: int) -> Text:
        """Inside an error group: the group's name and counts first, at every width.

        The tabs line showed bare global counts (``1 332 2 2 3 3 …``) and at 80 columns only
        ``│ all …``, just before ``D`` deleted the group. Now it reads ``group TimeoutError:
        timed out after … — 12 failed · 3 retrying``; the status tabs and the rest of the view
        follow only where they fit."""
        stats = self.stats
        counts = "…" if stats is None else f"{stats.failed:,} failed · {stats.pending:,} retrying"
        showing = f" │ showing {self.active.value}" if self.active is not None else ""
        tail = f" — {counts}{showing}"
        text = Text()
        text.append("group ", style="bold")
        label = self.group or ""
        room = width - len("group ") - len(tail) if width else len(label)
        if len(label) > room:
            label = group_label_in(label, room)
        text.append(label, style="bold red")
        text.append(tail)
        rest = self.describe
        extra = f" │ {rest}{self.sort_text}" if rest else ""
        if not width or text.cell_len + len(extra) <= width:
            text.append(extra, style="italic")
        # The tabs keep their labels (bare counts "1 71 2 0 …" said nothing of which is which):
        # shorter labels, then whole tabs give way to "…", the active one kept.
        shown = 3 + text.cell_len
        for tabs in self._labelled_tabs():
            if not width or shown + tabs.cell_len <= width:
                text.append(" │ ", style="dim")
                text.append_text(tabs)
                break
        text.no_wrap = True
        return text

    def _labelled_tabs(self) -> Iterator[Text]:
        """The tabs with labels, widest first: whole labels, cut to 4 and 3 letters, then
        fewer tabs (the active one always among them)."""
        yield self._tabs(None)
        yield self._tabs(4)
        for keep in range(len(STATUS_TABS), 0, -1):
            yield self._tabs(3, keep)

    def _count_on_tab(self) -> bool:
        """The view's count is the active tab's own (no filter beyond the status): no need to keep it."""
        stats = self.stats
        if stats is None or self.matching is None:
            return False
        return self.matching == (stats.total if self.active is None else stats.count(self.active))

    def _fitted(self, room: int) -> str:
        """The view description in ``room`` cells: cut between whole filter parts ("pending named
        'beta' …"), never inside a name or number; at least the status word when it fits."""
        essential = self.describe.split(" ", 1)[0].rstrip(",")
        return whole_words(self.describe, room) or (essential if len(essential) <= room else "")


def group_label_in(label: str, room: int) -> str:
    """An error group's ``name Type: message (pattern: template)`` in ``room`` cells.

    The template goes first (the example message beside it is what an operator reads); then
    the message is cut in its middle, the name and type kept whole where they fit; else the
    whole label is cut in its middle. Groups of one name and type differ by the end of their
    message ("…(batch_1)"), which a cut at the end hid (a console probe, 80 columns: three
    groups all read "TimeoutError: gateway.example…")."""
    if len(label) <= room:
        return label
    label = label.partition(" (pattern: ")[0]
    if len(label) <= room:
        return label
    head, colon, message = label.partition(": ")
    head += colon
    if colon and len(head) < room:  # the name and type first, then what room is left
        return head + middle_cut(message, room - len(head))
    return middle_cut(label, room)


#: Where the view description may be cut: before a filter's words ("named 'x'", "matching 'y'",
#: …) or a time range, so a cut never leaves "named" without its name.
_PART = re.compile(r"(?= (?:named|names|matching|containing|in error group|where) )|(?=, )")


def whole_words(text: str, room: int) -> str:
    """``text`` cut to ``room`` cells between whole filter parts, ending in ``…``; "" if none fits."""
    if len(text) <= room:
        return text
    kept = ""
    for end in [match.start() for match in _PART.finditer(text) if match.start() > 0]:
        if end + 2 > room:
            break
        kept = text[:end]
    return f"{kept} …" if kept else ""

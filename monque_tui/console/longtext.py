"""Text of any size handed to widgets in bounded pieces, so a 10 MB traceback never stalls the UI.

Rich lays out (measures, wraps, styles) every character it is given, on the UI thread, each
time a widget is laid out or drawn: a 10 MB failReason in the detail's Error panel held the
loop for over a minute (1 MB: 8 s). The engine bounds what it writes (``MAX_REASON_CHARS``,
``MAX_TRACEBACK_CHARS``), but a row written by another program or by hand may hold anything.
So the console hands widgets only bounded pieces of a job's text: the head of a field with a
marker saying how much is not shown (``clip``, ``clip_line``), or one page of a long text at a
time (``paginate``), every character still reachable page by page. ``clip`` and ``clip_line``
read only what they return; ``paginate`` reads the whole text once, off the UI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class TextPages:
    """A long text cut into pages (the payload's JSON, an attempt's traceback)."""

    pages: tuple[str, ...]
    #: Size of the whole text, in characters.
    total_chars: int
    #: The size of what the text shows as stored, in bytes, where it differs (a payload's JSON).
    stored_bytes: int | None = None

    def __len__(self) -> int:
        return len(self.pages)

    def page(self, index: int) -> str:
        return self.pages[max(0, min(index, len(self.pages) - 1))]


def paginate(text: str, page_chars: int) -> TextPages:
    """``text`` cut into pages of at most ``page_chars`` characters, at line ends where possible
    (a longer line is cut where it must be and goes on on the next page). Joined back, the
    pages are ``text``. Costs a pass over the whole text: call it off the UI thread."""
    pages: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + page_chars, len(text))
        if end < len(text):
            newline = text.rfind("\n", start, end)
            if newline > start:
                end = newline + 1
        pages.append(text[start:end])
        start = end
    return TextPages(tuple(pages) or ("",), len(text))


class Clipped(NamedTuple):
    """The head of a text that is shown, and how long the whole text is."""

    shown: str
    total_chars: int

    @property
    def hidden_chars(self) -> int:
        return self.total_chars - len(self.shown)

    def marker(self) -> str:
        """``… 9,991,807 more characters not shown (9.5 MB in all)``; empty when nothing is hidden."""
        if not self.hidden_chars:
            return ""
        return f"… {self.hidden_chars:,} more characters not shown ({size_text(self.total_chars)} in all)"


def clip(text: str, chars: int, lines: int) -> Clipped:
    """At most the first ``chars`` characters and ``lines`` lines of ``text`` (reads no more of it)."""
    head = text[:chars]
    end = -1
    for _ in range(lines):
        end = head.find("\n", end + 1)
        if end < 0:
            break
    if end >= 0 and end < len(text) - 1:  # more lines follow the last one shown
        head = head[:end]
    return Clipped(head, len(text))


def clip_line(text: str, chars: int) -> str:
    """A short field (name, id, owner, type) at most ``chars`` characters, then what was cut:
    ``send-email… (+9,999,800 characters)``."""
    if len(text) <= chars:
        return text
    return f"{text[:chars]}… (+{len(text) - chars:,} characters)"


def size_text(chars: int) -> str:
    if chars < 1024:
        return f"{chars} B"
    if chars < 1024 * 1024:
        return f"{chars / 1024:.1f} KB"
    return f"{chars / (1024 * 1024):.1f} MB"

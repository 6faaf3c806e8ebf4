"""A job's payload as pages of JSON text, so a 10 MB payload never freezes the screen.

Highlighting and wrapping cost grows with the text, and a whole 1 MB payload once froze
the UI for 17–45 s. The JSON is dumped off the UI thread (``paginate`` runs in a worker
thread) and the screen only ever renders one page of at most ``PAGE_CHARS`` characters;
the operator pages through the rest (``>``/``<``), so every byte is still reachable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: The most characters rendered at once: small enough to highlight and wrap in a few ms.
PAGE_CHARS = 8_000


@dataclass(frozen=True, slots=True)
class PayloadPages:
    pages: tuple[str, ...]
    #: Size of the whole JSON text, in characters.
    total_chars: int

    def __len__(self) -> int:
        return len(self.pages)

    def page(self, index: int) -> str:
        return self.pages[max(0, min(index, len(self.pages) - 1))]


def paginate(data: Any, page_chars: int = PAGE_CHARS) -> PayloadPages:
    """Pretty JSON cut into pages at line ends where possible (a longer line is cut where it must be)."""
    text = json.dumps(data, indent=2, sort_keys=True, default=str)
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
    return PayloadPages(tuple(pages) or ("",), len(text))


def size_text(chars: int) -> str:
    if chars < 1024:
        return f"{chars} B"
    if chars < 1024 * 1024:
        return f"{chars / 1024:.1f} KB"
    return f"{chars / (1024 * 1024):.1f} MB"

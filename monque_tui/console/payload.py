"""A job's payload as pages of JSON text, so a 10 MB payload never freezes the screen.

Highlighting and wrapping cost grows with the text, and a whole 1 MB payload once froze
the UI for 17–45 s. The JSON is dumped off the UI thread (``paginate`` runs in a worker
thread) and the screen only ever renders one page of at most ``PAGE_CHARS`` characters;
the operator pages through the rest (``>``/``<``), so every byte is still reachable.
"""

from __future__ import annotations

import json
from typing import Any

from . import longtext
from .longtext import TextPages, size_text

#: The most characters rendered at once: small enough to highlight and wrap in a few ms.
PAGE_CHARS = 8_000

PayloadPages = TextPages


def paginate(data: Any, page_chars: int = PAGE_CHARS) -> PayloadPages:
    """Pretty JSON cut into pages at line ends where possible (a longer line is cut where it must be)."""
    return longtext.paginate(json.dumps(data, indent=2, sort_keys=True, default=str), page_chars)


__all__ = ["PAGE_CHARS", "PayloadPages", "paginate", "size_text"]

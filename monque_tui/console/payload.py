"""A job's payload as pages of JSON text, so a 10 MB payload never freezes the screen.

Highlighting and wrapping cost grows with the text, and a whole 1 MB payload once froze
the UI for 17–45 s. The JSON is dumped off the UI thread (``paginate`` runs in a worker
thread) and the screen only ever renders one page of at most ``PAGE_CHARS`` characters;
the operator pages through the rest (``>``/``<``), so every byte is still reachable.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import longtext
from .longtext import TextPages, size_text

#: The most characters rendered at once: small enough to highlight and wrap in a few ms.
PAGE_CHARS = 8_000

PayloadPages = TextPages


#: Characters a reader cannot see or that reorder the text around them, shown as JSON escapes:
#: DEL and the C1 controls, no-break and other odd spaces, the soft hyphen, zero-width and
#: direction marks and overrides, line and paragraph separators, the BOM. (JSON escapes the
#: C0 controls itself.) ``"\u202eevil"`` read reversed, and ``"\u00a0"`` as a plain space.
_UNSEEN = re.compile("[\x7f-\xa0\xad\u061c\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff\ufff9-\ufffb]")


def readable_json(value: Any) -> str:
    """Indented JSON of a payload or result as a reader should see it: every printable
    character as itself (a CJK or emoji payload read ``"\u6f22\u5b57"``), keys in their
    stored order (they were sorted), and what cannot be seen escaped (``_UNSEEN``)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return _UNSEEN.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def stored_size(value: Any) -> int:
    """Bytes of the value as compact UTF-8 JSON: what the detail's size says (it counted the
    characters of the indented, escaped text: 393 B for a 179-byte payload)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8", "replace"))


def paginate(data: Any, page_chars: int = PAGE_CHARS) -> PayloadPages:
    """Readable JSON cut into pages at line ends where possible (a longer line is cut where it must be)."""
    pages = longtext.paginate(readable_json(data), page_chars)
    return TextPages(pages.pages, pages.total_chars, stored_size(data))


__all__ = ["PAGE_CHARS", "PayloadPages", "paginate", "readable_json", "size_text", "stored_size"]

"""Every relative link in the README and the pages under docs/ leads somewhere.

The docs are plain Markdown read on the forge, so a link is a path relative to the page
that holds it, optionally with ``#anchor``. The path must exist in the checkout; an anchor
must name a heading of the target page, spelt as the forge spells it (lower case,
punctuation dropped, spaces as hyphens, ``-1``, ``-2`` … for repeats). Links inside code
are not links and are skipped, as are absolute URLs.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "bench" / "results").glob("history*.md")])
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"(`+).+?\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The page without fenced blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def anchors(page: Path) -> set[str]:
    """The heading anchors the forge generates for a Markdown page."""
    seen: Counter[str] = Counter()
    result = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
        slug = re.sub(r"[^\w\- ]", "", text.replace("`", "").strip().lower()).replace(" ", "-")
        result.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return result


def relative_links(page: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(prose(page.read_text(encoding="utf-8")))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target, re.I)  # https:, mailto:, …
    ]


def test_the_pages_are_found() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in PAGES}
    assert {"README.md", "docs/console.md", "docs/engine.md", "docs/adr/0001-embedded-sqlite-store.md"} <= names


def test_the_link_pattern_sees_links_and_skips_code() -> None:
    text = "see [a](x.md#b), ![img](p.png) and `[not](a-link.md)`\n```\n[nor](this.md)\n```\n"
    assert LINK.findall(prose(text)) == ["x.md#b", "p.png"]


def test_anchors_are_spelt_as_the_forge_spells_them(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# The `monque-tui` command\n## Stores: SQLite first\n## Details\n## Details\n```\n# not a heading\n```\n"
    )
    assert anchors(page) == {"the-monque-tui-command", "stores-sqlite-first", "details", "details-1"}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        path, _, anchor = unquote(target).partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif not destination.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target}: no heading #{anchor} in {destination.relative_to(ROOT).as_posix()}")
    assert not broken, f"{page.relative_to(ROOT).as_posix()} has broken links:\n  " + "\n  ".join(broken)

"""The jobs table writes few escape sequences per row (issue 10: key-to-screen as tmux sees it).

Rich writes every segment as its whole style, the text, then a reset. A table row was nine
segments even where neighbours shared a style (ID and name) or a style could not show (red
on the blank error cell), so a full 160x45 frame was ~18 KB for the terminal to read and
parse. Rows are now one segment per run of one visible style; what they show is unchanged
(the SVG snapshots differ only in how text runs are grouped). Real app driven by Pilot over
a seeded SQLite file.
"""

from __future__ import annotations

import itertools

from .conftest import running_console


async def test_rows_merge_neighbours_of_one_style_and_blank_cells_take_the_row_style(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 45)) as (app, _pilot):
        table = app.jobs_screen.table
        assert len(table.rows) > 10
        lines = [table.render_line(y) for y in range(0, 20)]
        for strip in lines:
            segments = list(strip)
            for left, right in itertools.pairwise(segments):
                assert left.style != right.style, f"neighbours share a style: {left!r} {right!r}"
        base = table.rich_style
        for strip in lines[2:]:  # rows below the cursor: blank cells carry the row's own style
            for segment in strip:
                if not segment.text.strip():
                    assert segment.style == base, f"a blank cell with its own style: {segment!r}"
            text = "".join(segment.text for segment in strip)
            assert len(text) == table.scrollable_content_region.width  # nothing lost or added


def test_blank_invisible_styles() -> None:
    from rich.style import Style

    from monque_tui.console.widgets.job_table import _blank_invisible

    assert _blank_invisible(Style.parse("bold red"))
    assert _blank_invisible(Style.parse("dim"))
    assert not _blank_invisible(Style.parse("on red"))
    assert not _blank_invisible(Style.parse("underline"))
    assert not _blank_invisible(Style.parse("reverse green"))

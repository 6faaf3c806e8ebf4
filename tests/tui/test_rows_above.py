"""Rows hidden above the screen are announced in the table's header (probe finding).

The cursor stays on its job while live rows arrive above it, so a key never acts on a job the
operator did not choose; once its job would leave the screen the view stops moving. A
newest-first view then looked frozen: new jobs were arriving, nothing said so. The header's
last column now says how many rows are above the screen and that ``g`` goes there.
"""

from __future__ import annotations

from .conftest import running_console, wait_for


def _header(app) -> str:  # type: ignore[no-untyped-def]
    return app.jobs_screen.table.render_line(0).text


async def test_the_header_counts_the_rows_above_the_screen_and_g_brings_them_back(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(140, 14)) as (app, pilot):
        table = app.jobs_screen.table
        await wait_for(lambda: len(table.rows) > 12)
        assert "above" not in _header(app)
        await pilot.press("G")  # the last job: the first rows scroll off the top
        await wait_for(lambda: int(table.scroll_y) > 0)
        await pilot.pause()
        assert f"↑ {int(table.scroll_y):,} above (g)" in _header(app)
        await pilot.press("g")
        await wait_for(lambda: int(table.scroll_y) == 0)
        await pilot.pause()
        assert "above" not in _header(app)
        assert "ERROR" in _header(app)

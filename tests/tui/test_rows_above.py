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


async def test_after_G_on_a_long_listing_the_header_does_not_undercount_the_rows_above(store_url: str) -> None:
    """``G`` loads the listing's last page: the window does not know how many rows are above it,
    and the header said ``↑ 382 above (g)`` over 47,066 jobs, the rows loaded, not the rows
    above (console probe). Now it says there are more above; ``g`` still brings them back."""
    from monque_engine import Monque

    monque = Monque(store_url)
    await monque.initialize()
    try:
        await monque.enqueue_many([{"name": "bulk", "data": {"n": n}} for n in range(700)])
    finally:
        await monque.close()
    async with running_console(store_url, size=(140, 14)) as (app, pilot):
        table = app.jobs_screen.table
        await wait_for(lambda: len(table.rows) > 12)
        await pilot.press("G")
        await wait_for(lambda: table.window is not None and table.window.has_before and int(table.scroll_y) > 0)
        await pilot.pause()
        header = _header(app)
        assert "↑ more above (g)" in header, header
        await pilot.press("g")
        await wait_for(lambda: table.window is not None and not table.window.has_before and int(table.scroll_y) == 0)
        await pilot.pause()
        assert "above" not in _header(app)
        await pilot.press("pagedown", "pagedown")
        await wait_for(lambda: int(table.scroll_y) > 0)
        await pilot.pause()
        assert f"↑ {int(table.scroll_y):,} above (g)" in _header(app)  # counted again from the top

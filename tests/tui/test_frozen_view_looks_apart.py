"""The live-update pause (``p``) looks different from a paused job name (issue 28).

``⏸ PAUSED (p resumes)`` read like ``⏸ paused: image.resize`` (a queue paused in the
store): same symbol, same word, same colour. Real app driven by Pilot.
"""

from __future__ import annotations

from monque_tui.console.widgets.console_header import FROZEN_VIEW, ConsoleHeader

from .conftest import running_console, table_ids, wait_for


async def test_the_frozen_view_and_a_paused_name_differ(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) > 0)
        header = app.jobs_screen.query_one(ConsoleHeader)
        header.paused_names = ("send-email",)
        await pilot.press("p")
        await wait_for(lambda: FROZEN_VIEW in str(header.render()))
        rendered = header.render()
        plain = str(rendered)
        assert "⏸ paused: send-email" in plain
        frozen, queue = plain.index(FROZEN_VIEW), plain.index("⏸ paused")
        assert "paused" not in FROZEN_VIEW.lower() and "⏸" not in FROZEN_VIEW
        styles = {str(span.style) for span in rendered.spans if span.start <= frozen < span.end}
        queue_styles = {str(span.style) for span in rendered.spans if span.start <= queue < span.end}
        assert styles and styles.isdisjoint(queue_styles)

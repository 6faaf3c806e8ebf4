"""The filter bar at 80 columns: the "when" field is wide enough to read, and a range error or the
syntax hint is shown whole (probe finding).

At 80 columns the "when" field showed 4 characters ("cre" of its placeholder, "na" of what was
typed) and its one-line hint and errors were cut at the right edge ("…10:00 (UTC;", "e.g.
created -2h.." without the other examples). Real app driven by Pilot at 80x24.
"""

from __future__ import annotations

from textual.widgets import Input

from monque_tui.console.query import RANGE_HINT
from monque_tui.console.widgets.filter_bar import FilterBar

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text


def _flat(app: object) -> str:
    """The screen's text as one line (wrapped lines joined)."""
    return " ".join(line.strip() for line in screen_text(app).splitlines())


async def test_the_when_field_and_its_messages_fit_80_columns(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        await pilot.press("slash")
        bar = app.jobs_screen.query_one(FilterBar)
        when = bar.query_one("#filter-when", Input)
        await wait_for(lambda: bar.has_class("-open") and when.content_size.width > 0)
        await pilot.pause()
        assert when.content_size.width >= 16, when.content_size.width  # "created -2h.." and more
        assert " ".join(RANGE_HINT.split()) in " ".join(_flat(app).split())  # the whole syntax, wrapped
        when.focus()
        await pilot.press(*"banana", "enter")
        await wait_for(lambda: bar.error is not None)
        await pilot.pause()
        assert bar.error is not None
        assert " ".join(bar.error.split()) in " ".join(_flat(app).split()), bar.error  # whole, not cut

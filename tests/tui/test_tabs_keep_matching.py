"""A filtered view keeps its "— N matching" count beside long filter words (probe 7).

From the errors view, Enter on a group showed at 160 columns
``1 All 200,001 … │ all in error group 'email.send RuntimeError: smtp refused for user<n>'``:
the count of the group's jobs (13,334) was dropped to keep the tabs' four-letter labels, so
the only number beside the view was the name's total. Tab labels shorten first now. A real
StatusTabs in an app driven by Pilot.
"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from monque_engine import QueueStats
from monque_tui.console.widgets.status_tabs import StatusTabs

STATS = QueueStats(pending=1, processing=0, completed=160_000, failed=40_000, cancelled=0, total=200_001)
GROUP = "all in error group 'email.send RuntimeError: smtp refused for user<n>'"


class TabsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusTabs()


@pytest.mark.parametrize("width", [150, 160, 180])
async def test_the_matching_count_stays_beside_a_long_group_name(width: int) -> None:
    app = TabsApp()
    async with app.run_test(size=(width, 3)) as pilot:
        tabs = app.query_one(StatusTabs)
        tabs.stats, tabs.describe, tabs.sort_text, tabs.matching = STATS, GROUP, ", sorted by created ↓", 13_334
        await pilot.pause()
        line = tabs.render().plain
        assert len(line) <= tabs.content_size.width, line
        assert "— 13,334 matching" in line, line
        assert "200,001" in line and "40,000" in line, line  # the tabs' counts stay whole


@pytest.mark.parametrize("width", [60, 80])
async def test_a_payload_filtered_view_keeps_its_count_when_its_words_do_not_fit(width: int) -> None:
    """At 80 columns ``all, named 'invoice.render', where data.customer_id missing`` and its
    count did not both fit beside one tab: the description was cut and "— 335 matching"
    dropped with it, though the count is what says how many jobs ``C`` ``R`` ``D`` reach
    (console probe). The description is cut between whole parts now, the count kept."""
    app = TabsApp()
    async with app.run_test(size=(width, 3)) as pilot:
        tabs = app.query_one(StatusTabs)
        tabs.stats = STATS
        tabs.describe = "all, named 'invoice.render', where data.customer_id missing"
        tabs.sort_text, tabs.matching = ", sorted by created ↓", 335
        await pilot.pause()
        line = tabs.render().plain
        assert len(line) <= tabs.content_size.width, line
        assert line.rstrip().endswith("— 335 matching"), line
        assert "all" in line.split("│", 1)[1], line  # the view's status word stays

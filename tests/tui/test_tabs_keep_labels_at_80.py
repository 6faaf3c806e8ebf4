"""A filtered view at 80×24 keeps its tabs' labels and its matching count (issue 40 item 4).

The on-call probe at 80 columns, a name filter on: ``1 5,000 2 914 3 32 …``, counts without
the statuses they count, and the view's "— N matching" gone. Whole tabs give way now (the
active one, Failed, Pending and All stay first), labels and the count stay. The real console
under Pilot on the seeded store, with big counts put on the tabs.
"""

from __future__ import annotations

import re

from monque_engine import QueueStats

from .conftest import running_console, wait_for
from .test_confirm_width import screen_text

STATS = QueueStats(pending=914, processing=32, completed=43_000, failed=335, cancelled=12, total=50_000)


async def test_a_filtered_view_at_80_columns_keeps_labels_and_its_count(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        tabs = app.jobs_screen.query_one("StatusTabs")
        await pilot.press("slash", *"send-email", "enter")
        await wait_for(lambda: app.jobs_screen.window.query.name == "send-email")
        await wait_for(lambda: tabs.matching is not None)
        tabs.stats = STATS
        tabs.matching = 5_000
        await pilot.pause()
        line = next(text for text in screen_text(app).splitlines() if "│ all named" in text)
        head = line.split("│")[0]
        shown = re.findall(r"([1-6]) (\S+) ([\d,]+)", head)
        assert shown, line
        assert all(not label[0].isdigit() for _index, label, _count in shown), line  # every count has its label
        assert ("1", "All", "50,000") in shown and ("5", "Fai", "335") in shown, line
        assert "— 5,000 matching" in line, line
        assert "named 'send-email'" in line, line

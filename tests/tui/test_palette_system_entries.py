"""The palette offers only the system entries an operator uses, worded as ours (issue 28).

Textual's own ``Quit`` stood beside ``Quit [q]``, ``Keys`` opened the framework's panel,
and ``Theme`` / ``Screenshot`` read as the framework's. Real app driven by Pilot.
"""

from __future__ import annotations

from .conftest import running_console
from .test_palette import open_palette


async def test_system_entries_are_ours_and_few(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        titles = await open_palette(app, pilot)
        assert "Colours" in titles and "Save screenshot" in titles, titles
        assert titles.count("Quit [q]") == 1
        for framework in ("Quit", "Keys", "Theme", "Screenshot", "Maximize"):
            assert framework not in titles, titles

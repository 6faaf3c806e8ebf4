"""The jobs screen's counts are not re-read while another screen covers them.

Only the jobs screen shows the session's counts, and on a big store each count reads every
finished job: under the Queues screen of a 1.8M-job store the count went on taking 4 % of a
core for a header nobody could see. Coming back asks for fresh counts at once. A real
console on a real store, Pilot; the stats ticks are the app's own method.
"""

from __future__ import annotations

from typing import Any

from .conftest import running_console, wait_for
from .test_fleet_queues import queues_screen


async def test_counts_pause_under_the_queues_screen_and_refresh_on_return(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        session = app.session
        counted: list[float] = []
        real = session.refresh_stats_if_due

        async def counting(*args: Any, **kwargs: Any) -> Any:
            counted.append(0.0)
            return await real(*args, **kwargs)

        session.refresh_stats_if_due = counting  # type: ignore[method-assign]
        await app._stats_tick()
        assert counted, "the jobs screen in view: the tick counts"
        await queues_screen(app, pilot)
        counted.clear()
        for _ in range(3):
            await app._stats_tick()
        assert counted == [] and not app.counts_shown
        await pilot.press("ctrl+p")  # a modal over the Queues screen: still covered
        await pilot.pause()
        assert not app.counts_shown
        await pilot.press("escape")
        await pilot.press("escape")  # back to the jobs screen
        await wait_for(lambda: app.screen is app.jobs_screen)
        await wait_for(lambda: len(counted) >= 1)  # fresh counts on return
        assert app.counts_shown

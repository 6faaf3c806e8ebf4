"""The Queues screen paces its loads by what they cost (a busy queue on a big store).

Its per-name counts read every finished job: ~0.5 s at 1.8M jobs. Re-read every 2 s on a
busy queue (each flush's ``JobsChanged``), that took a quarter of a core. A real console on
a real store; the screen's clock is a fake one that each load advances by one second, so
"a load costs 1 s" holds without a big store or a timing threshold.
"""

from __future__ import annotations

from typing import Any

from monque_tui.console.messages import SessionMessage
from monque_tui.console.screens.queues import RELOAD_EVERY
from monque_tui.console.session.core import STATS_BACKOFF
from monque_tui.console.session.events import JobsChanged

from .conftest import running_console, wait_for
from .test_fleet_queues import queues_screen


async def test_a_slow_load_waits_its_cost_times_the_backoff_before_the_next(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = await queues_screen(app, pilot)
        clock = [1_000.0]
        screen.monotonic = lambda: clock[0]
        monque = app.session.monque
        assert monque is not None
        real = monque.get_queue_view_summaries
        reads: list[float] = []

        async def slow(*args: Any, **kwargs: Any) -> Any:
            reads.append(clock[0])
            clock[0] += 1.0  # this load costs one second
            return await real(*args, **kwargs)

        monque.get_queue_view_summaries = slow  # type: ignore[method-assign]
        loads = screen.loads
        screen.load()
        await wait_for(lambda: screen.loads == loads + 1)
        assert screen.load_cost == 1.0 and screen.paced(RELOAD_EVERY) == STATS_BACKOFF * 1.0

        def busy_queue_flush() -> None:
            screen.post_message(SessionMessage(JobsChanged(frozenset({"some-job"}))))

        clock[0] += RELOAD_EVERY + 5  # past the 2 s of a cheap store, well inside 30 × 1 s
        busy_queue_flush()
        await pilot.pause()
        await pilot.pause()
        assert len(reads) == 1  # no load: the last one cost 1 s
        clock[0] = reads[0] + STATS_BACKOFF + 1.5  # 30 s after the last load started, and more
        busy_queue_flush()
        await wait_for(lambda: len(reads) == 2)

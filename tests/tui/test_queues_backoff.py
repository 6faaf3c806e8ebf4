"""The Queues screen backs off on a store whose per-name counts are slow to read (probe 6).

Every load counts each name's jobs by status, a scan that grows with the store, and the
screen reloaded it at least every 2 s while the queue was busy: 31 % of a core on a 300k-job
store at 1,000 jobs/s (tmux, the screen left open). Now, as the jobs screen's counts do, it
waits 30 times what the last load cost, at most 30 s. A real console (Pilot) on a real SQLite
file; the load's cost is set by a stand-in monotonic clock in the screen's module; a busy
queue is its change messages, delivered the way the app delivers them.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from monque_tui.app import SessionMessage
from monque_tui.screens import queues
from monque_tui.screens.queues import QueuesScreen
from monque_tui.session.events import JobsChanged

from .conftest import running_console, wait_for


async def test_a_slow_load_is_not_repeated_every_two_seconds(seeded_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000.0]
    monkeypatch.setattr(queues, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    async with running_console(seeded_url) as (app, pilot):
        monque = app.session.monque
        real = monque.get_queue_view_summaries

        async def slow(*args: Any, **kwargs: Any) -> Any:
            now[0] += 1.0  # each load takes a second of the screen's clock
            return await real(*args, **kwargs)

        monque.get_queue_view_summaries = slow
        await pilot.press("w")
        await wait_for(lambda: isinstance(app.screen, QueuesScreen) and app.screen.loads == 1)
        screen = app.screen
        assert isinstance(screen, QueuesScreen)

        def busy() -> None:
            screen.post_message(SessionMessage(JobsChanged(frozenset({"x"}))))

        now[0] += 5.0  # 6 s after the load began: past the 2 s floor, well inside 30 x 1 s
        busy()
        await pilot.pause()
        await pilot.pause()
        assert screen.loads == 1
        now[0] += 25.0  # 31 s after: the back-off has passed
        busy()
        await wait_for(lambda: screen.loads == 2)

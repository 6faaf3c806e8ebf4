"""Keys that count in the store first say so when the count is slow (probe 6).

``C`` ``R`` ``D`` and ``A`` count the view before they show anything. On a busy 1.8M-job
store in tmux that took over a second with nothing on screen (a key fuzz flagged them as
"no visible effect"). Now a count slower than 0.3 s shows what the console is doing. A real
console (Pilot) on a seeded SQLite file; the store's count is held until the test lets it go.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from monque_tui.console.screens.confirm import ConfirmScreen

from .conftest import running_console, wait_for
from .toasts import toast_lines


def _messages(app: Any) -> list[str]:
    return toast_lines(app)


@pytest.mark.parametrize(
    ("key", "method", "said"),
    [("C", "count_bulk", "Counting the jobs to cancel"), ("A", "count_jobs", "Counting the jobs of this view")],
)
async def test_a_slow_count_says_what_it_is_doing(seeded_url: str, key: str, method: str, said: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        monque = app.session.monque
        real = getattr(monque, method)
        release = asyncio.Event()

        async def slow(*args: Any, **kwargs: Any) -> Any:
            await release.wait()
            return await real(*args, **kwargs)

        setattr(monque, method, slow)
        await pilot.press(key)
        await wait_for(lambda: any(m.startswith(said) for m in _messages(app)))
        release.set()
        if key == "C":
            await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("n")
        else:
            await wait_for(lambda: app.session.marked_view is not None)

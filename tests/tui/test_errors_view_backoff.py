"""The errors view backs off by what its read cost (issue 36 item 4), without Textual and
with it: the model's interval, and the timer the screen arms from it."""

from __future__ import annotations

from typing import Any

import pytest

from monque_tui.console.session.errors import ErrorGroupsModel


class _CostlyGroups:
    """A Monque stand-in whose ``error_groups`` costs ``cost`` seconds on the model's clock."""

    def __init__(self, clock: list[float], cost: float) -> None:
        self.clock, self.cost = clock, cost

    async def error_groups(self, limit: int) -> list[Any]:
        self.clock[0] += self.cost
        return []


@pytest.mark.parametrize(("cost", "wait"), [(0.01, 3.0), (0.5, 15.0), (2.0, 30.0), (600.0, 30.0)])
async def test_the_errors_view_backs_off_by_what_its_read_cost(cost: float, wait: float) -> None:
    """Issue 36 item 4: the grouping reads every failed job's index key, so a console must not
    repeat it every 3 s on a big store: it waits 30 times what the last read cost, at most 30 s."""
    clock = [100.0]
    model = ErrorGroupsModel()
    model.monotonic = lambda: clock[0]
    assert await model.fetch(_CostlyGroups(clock, cost))  # type: ignore[arg-type]
    assert model.last_cost == pytest.approx(cost)
    assert model.next_refresh_in() == pytest.approx(wait)


async def test_the_screen_arms_its_next_refresh_from_the_cost(seeded_url: str) -> None:
    """The screen's timer and its status line follow the model: a read that cost 2 s is
    next repeated after 30 s, not 3 s."""
    from textual.widgets import Static

    from monque_tui.console.screens.errors import ErrorsScreen

    from .conftest import running_console, wait_for

    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("e")
        await wait_for(lambda: isinstance(app.screen, ErrorsScreen) and app.screen.fetches > 0)
        screen = app.screen
        assert isinstance(screen, ErrorsScreen)
        ticks = iter(range(0, 1000, 2))  # each reading of the clock is 2 s after the last
        screen.model.monotonic = lambda: float(next(ticks))
        before = screen.fetches
        screen.refresh_groups()
        await wait_for(lambda: screen.fetches > before and screen._timer is not None)
        assert screen._timer is not None and screen._timer._interval == pytest.approx(30.0)
        assert "refreshed every 30 s (the last read took 2.0 s)" in str(
            screen.query_one("#errors-status", Static).render()
        )
        screen.model.monotonic = lambda: 0.0  # a read that cost nothing: back to the floor
        before = screen.fetches
        screen.refresh_groups()
        await wait_for(lambda: screen.fetches > before and screen._timer is not None)
        assert screen._timer is not None and screen._timer._interval == pytest.approx(3.0)
        assert "refreshed every 3 s" in str(screen.query_one("#errors-status", Static).render())

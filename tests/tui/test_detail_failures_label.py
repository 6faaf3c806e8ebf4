"""The detail's failure count is labelled as one (probe 7).

A job that ran once and completed read ``attempts  0`` right above a timeline listing its
attempt ``#1 completed``: the field was the failure count under the label "attempts". A
real job run by a real worker, then the real app driven by Pilot.
"""

from __future__ import annotations

from monque_tui.console.screens.detail import JobDetailScreen

from .conftest import move_to, running_console, wait_for
from .test_confirm_width import screen_text
from .test_detail_copy_no_error import _completed_job


async def test_a_completed_job_does_not_read_attempts_0(store_url: str) -> None:
    job_id = await _completed_job(store_url)
    async with running_console(store_url) as (app, pilot):
        await move_to(app, pilot, job_id)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and bool(app.screen.attempts))
        await pilot.pause()
        lines = [line.strip(" │") for line in screen_text(app).splitlines()]
        assert not any(line.split() == ["attempts", "0"] for line in lines), lines[:10]
        assert any(line.split() == ["failures", "0"] for line in lines), lines[:10]
        assert any("#1 completed" in line for line in lines)

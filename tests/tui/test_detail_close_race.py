"""Esc on a detail whose job is still loading (found by the issue 10 soak).

The console crashed with ``NoMatches: #detail-title``: the detail's loader resumed after Esc,
while Textual was removing the screen's widgets (children go first, the screen and its
workers last). Both halves are reproduced here with real awaits held on events: a close
before the loader resumes, and a loader that resumes into a screen whose widgets are gone.
"""

from __future__ import annotations

import asyncio

from monque_tui.console.screens.detail import JobDetailScreen

from .conftest import running_console, wait_for


async def _held_detail(app, pilot):  # type: ignore[no-untyped-def]
    """Open a detail whose job read waits on an event; returns (screen, release)."""
    release = asyncio.Event()
    original = app.session.job

    async def held(job_id: str):  # type: ignore[no-untyped-def]
        await release.wait()
        return await original(job_id)

    app.session.job = held
    await pilot.press("enter")
    await wait_for(lambda: isinstance(app.screen, JobDetailScreen))
    return app.screen, release


async def test_a_loader_resuming_into_removed_widgets_does_not_crash(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen, release = await _held_detail(app, pilot)
        await screen.query_one("#detail-title").remove()  # the prune's first step, as during Esc
        release.set()
        await wait_for(lambda: not screen.workers._workers)
        await pilot.pause()
        assert app.is_running and app.return_code is None
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)


async def test_closing_a_detail_while_it_loads_leaves_the_console_running(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen, release = await _held_detail(app, pilot)
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        release.set()
        # The detail screen is kept for reuse (issue 10): closing cancels its read instead.
        await wait_for(lambda: not screen.workers._workers)
        await pilot.pause()
        assert app.is_running and app.return_code is None

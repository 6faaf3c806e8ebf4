"""``y`` on an attempt that recorded no error copies nothing and says why (probe 7).

On a recurring job's detail every attempt was ``completed``; ``y`` copied the placeholder
"Attempt 1 completed: no error recorded." and announced "Copied attempt 1's traceback (39
characters)". The key is greyed there now, and pressing it says there is no traceback. A
real job run by a real worker on a SQLite file, then the real app driven by Pilot.
"""

from __future__ import annotations

import asyncio

from monque_engine import Job, JobStatus, Monque
from monque_tui.console.screens.detail import JobDetailScreen

from .conftest import move_to, running_console, wait_for
from .toasts import said


async def _completed_job(url: str) -> str:
    done = asyncio.Event()

    async def handler(job: Job) -> None:
        done.set()

    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    monque.register("quick", handler)
    job = await monque.enqueue("quick", {"n": 1})
    await monque.start()
    try:
        await asyncio.wait_for(done.wait(), 20)
        for _ in range(1000):  # the completion is written just after the handler returns
            stored = await monque.get_job(job.id)
            if stored is not None and stored.status is JobStatus.COMPLETED and stored.attempts:
                break
            await asyncio.sleep(0.02)
    finally:
        await monque.stop()
        await monque.close()
    return job.id


async def test_y_on_a_completed_attempt_copies_nothing_and_says_so(store_url: str) -> None:
    job_id = await _completed_job(store_url)
    async with running_console(store_url, notifications=True) as (app, pilot):
        await move_to(app, pilot, job_id)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and bool(app.screen.attempts))
        screen = app.screen
        assert isinstance(screen, JobDetailScreen)
        assert screen.attempts[-1].outcome == "completed"
        await pilot.pause()
        assert screen.check_action("copy_traceback", ()) is None  # greyed in the footer
        before = app.clipboard
        await pilot.press("y")
        await wait_for(lambda: said(app, "no traceback to copy"))
        assert app.clipboard == before
        assert not said(app, "Copied attempt")

"""``C`` on a view of failed jobs says what can be done instead (issue 40 item 5).

The on-call probe: ``C`` on 335 failed jobs answered "Nothing to cancel: no job matches"
beside the listed rows. True (only pending jobs cancel), but it read as a bug. The notice
now says that only pending jobs cancel and which keys act on the jobs listed (``D`` deletes,
``R`` retries). The real console at 80×24 under Pilot on the seeded store; the store is
checked untouched.
"""

from __future__ import annotations

from monque_engine import JobStatus

from .conftest import running_console, store_jobs, wait_for
from .toasts import toast_lines


async def test_cancel_on_failed_jobs_says_delete_or_retry_instead(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    assert any(job.status is JobStatus.FAILED for job in before.values())
    async with running_console(seeded_url, size=(80, 24), notifications=True) as (app, pilot):
        await pilot.press("5")
        await wait_for(lambda: app.jobs_screen.window.query.status is JobStatus.FAILED)
        await pilot.press("C")
        await wait_for(lambda: any(line.startswith("Cancel all applies") for line in toast_lines(app)))
        text = " ".join(toast_lines(app))
        assert "D deletes" in text and "R retries" in text, text
        app.clear_notifications()
        # Every status, filtered to a name none of whose jobs is pending: the count finds none.
        failed_only = sorted(
            {j.name for j in before.values()} - {j.name for j in before.values() if j.status is JobStatus.PENDING}
        )
        assert failed_only
        await pilot.press("1", "slash", *failed_only[0], "enter", "escape")
        await wait_for(lambda: app.jobs_screen.window.query.name == failed_only[0])
        await pilot.press("C")
        await wait_for(lambda: any(line.startswith("Nothing to cancel") for line in toast_lines(app)))
        text = " ".join(toast_lines(app))
        assert "Only pending jobs cancel" in text and "D deletes" in text and "R retries" in text, text
    after = await store_jobs(seeded_url)
    assert {i: j.status for i, j in after.items()} == {i: j.status for i, j in before.items()}

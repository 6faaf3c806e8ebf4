"""The reschedule prompt says what an empty Enter does, and asks about marked jobs in the plural.

The field's ``+10m`` is a placeholder: an operator who cleared it and pressed Enter still
rescheduled the marked jobs by 10 minutes, which the prompt never said; and it asked
"Reschedule 2 marked jobs: when should it run?" (console probe). Real app under Pilot.
"""

from __future__ import annotations

from textual.widgets import Label

from monque_engine import JobStatus
from monque_tui.console.screens.when import WhenScreen

from .conftest import running_console, store_jobs, wait_for
from .test_confirm_width import screen_text


async def test_the_prompt_says_enter_alone_is_plus_ten_minutes_and_cancelling_changes_nothing(
    seeded_url: str,
) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, size=(100, 30)) as (app, pilot):
        await pilot.press("2")
        await wait_for(lambda: app.jobs_screen.window.query.status is JobStatus.PENDING)
        await wait_for(lambda: app.jobs_screen.table.cursor_job is not None)
        await pilot.press("space", "space", "t")
        await wait_for(lambda: isinstance(app.screen, WhenScreen))
        question = str(app.screen.query_one("#when-question", Label).render())
        assert question.endswith("when should they run?"), question
        assert "Enter on an empty field: +10m" in " ".join(screen_text(app).split())
        await pilot.press("escape")
        await wait_for(lambda: not isinstance(app.screen, WhenScreen))
    assert await store_jobs(seeded_url) == before

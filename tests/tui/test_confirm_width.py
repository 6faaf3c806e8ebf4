"""The confirmation's count is always on screen, from 80 to 200 columns (issue 10, defect 5)."""

from __future__ import annotations

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.demo.seed import SEED_JOBS

from .conftest import running_console, wait_for


def screen_text(app: object) -> str:
    """The terminal as text: every visible line of the current screen."""
    from textual.app import App

    assert isinstance(app, App)
    lines = app.screen._compositor.render_update(full=True).strips  # type: ignore[attr-defined]
    return "\n".join("".join(segment.text for segment in strip) for strip in lines)


WIDTHS = (80, 120, 160, 200)


async def test_the_count_is_visible_at_any_width(seeded_url: str) -> None:
    """One app, resized to each width in turn (an app per width cost seconds each); at each
    width the confirmation is opened afresh and the count must be on screen."""
    completed = sum(1 for job in SEED_JOBS if job.status.value == "completed")
    async with running_console(seeded_url, size=(WIDTHS[0], 40)) as (app, pilot):
        await pilot.press("4", "slash", "tab", "tab", *"created 2026-01-01..2026-01-15 11:59", "enter", "escape")
        await wait_for(lambda: app.jobs_screen.window.query.ranges != ())
        for width in WIDTHS:
            await pilot.resize_terminal(width, 40)  # type: ignore[attr-defined]
            await wait_for(lambda w=width: app.size.width == w)
            await pilot.press("D")
            await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.pause()
            text = screen_text(app)
            assert {len(line) for line in text.splitlines()} == {width}, "the screen was not drawn at this width"
            assert f"Delete {completed} job" in text, f"width {width}:\n{text}"
            assert "UTC?" in text.replace("\n", " ").replace("│", " ") or "UTC" in text, f"width {width}:\n{text}"
            await pilot.press("escape")
            await wait_for(lambda: app.screen is app.jobs_screen)


async def test_the_buttons_keep_their_labels_at_40_columns(seeded_url: str) -> None:
    """At 40x12 the 16-cell default buttons cut "Cancel (y)" to "Cancel" (probe 5)."""
    from monque_tui.demo.seed import seed_id

    from .conftest import move_to

    async with running_console(seeded_url, size=(40, 12)) as (app, pilot):
        await move_to(app, pilot, seed_id(1))  # a pending job
        await pilot.press("c")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await wait_for(lambda: "Cancel (y)" in screen_text(app))
        assert "Keep (n)" in screen_text(app)


async def test_deleting_a_running_job_says_its_handler_goes_on(seeded_url: str) -> None:
    """``d`` on a running job read "It is removed from the store", as for a finished one: its
    handler goes on and what it returns is lost, which the dialog did not say (review).
    Bulk ``D`` on the processing view says it too; on finished jobs it stays silent."""
    from monque_tui.demo.seed import seed_id

    from .conftest import move_to

    def first(status: str) -> int:
        return next(job.index for job in SEED_JOBS if job.status.value == status)

    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        for job_number, running in ((first("processing"), True), (first("completed"), False)):
            await move_to(app, pilot, seed_id(job_number))
            await pilot.press("d")
            await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
            await wait_for(lambda: "removed from the store" in screen_text(app))
            said = " ".join(screen_text(app).replace("│", " ").split())
            assert ("It is running: deleting does not stop the handler" in said) is running, said
            await pilot.press("escape")
            await wait_for(lambda: app.screen is app.jobs_screen)
        await pilot.press("3", "D")  # every processing job
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        await wait_for(lambda: "removed from the store" in screen_text(app))
        said = " ".join(screen_text(app).replace("│", " ").split())
        assert "of them are running: deleting does not stop the handler" in said, said

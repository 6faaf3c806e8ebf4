"""Reopening the reused detail screen restyles nothing screen-wide (issue 10: detail-open p95).

Two whole-screen restyles were most of a reopen's cost under the soak (py-spy): Textual's
restyle of a pushed screen on ``ScreenResume``, and a class toggled on the screen to show or
hide the attempt history (every node restyled: footer keys, text area). A reopen now
restyles only nodes whose own state changed (a footer key enabled or disabled), while a
theme change made while the screen was closed still reaches it. Real app driven by Pilot
over a seeded SQLite file; Textual's stylesheet is wrapped to record what it restyles.
"""

from __future__ import annotations

from typing import Any

from textual.dom import DOMNode
from textual.widgets import Static

from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.widgets.alerts_line import AlertsLine
from monque_tui.demo.seed import seed_id

from .conftest import open_detail, running_console, wait_for

FAILED = seed_id(2)  # has an attempt history: the timeline and traceback pane show
PENDING = seed_id(1)  # none: they hide


async def _open(app: Any, pilot: Any, job_id: str) -> JobDetailScreen:
    screen = await open_detail(app, pilot, job_id)
    return screen


async def _close(app: Any, pilot: Any) -> None:
    await pilot.press("escape")
    await wait_for(lambda: app.screen is app.jobs_screen)
    await pilot.pause()


def _record_restyles(app: Any) -> list[list[DOMNode]]:
    """Every batch of nodes Textual restyles from now on (``Stylesheet.update_nodes``)."""
    batches: list[list[DOMNode]] = []
    stylesheet = app.stylesheet
    original = stylesheet.update_nodes

    def recording(nodes: Any, animate: bool = False) -> None:
        nodes = list(nodes)
        batches.append(nodes)
        original(nodes, animate=animate)

    stylesheet.update_nodes = recording
    return batches


async def test_reopening_restyles_no_screen_wide_tree(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 45)) as (app, pilot):
        detail = await _open(app, pilot, FAILED)  # first open: composed and styled once
        assert detail.query_one("#detail-attempts").display
        await _close(app, pilot)

        batches = _record_restyles(app)
        again = await _open(app, pilot, PENDING)  # history hides: it used to toggle a screen class
        assert again is detail
        assert not again.query_one("#detail-attempts").display
        assert not again.query_one("#detail-traceback").display
        await _close(app, pilot)
        await _open(app, pilot, FAILED)  # and shows again
        assert detail.query_one("#detail-attempts").display and detail.query_one("#detail-traceback").display

        restyled = [node for batch in batches for node in batch]
        assert detail not in restyled, "the detail screen was restyled as a whole"
        # The alerts line restyles itself when the alerts it shows come or go (its own state).
        assert not any(
            isinstance(node, Static) and not isinstance(node, AlertsLine) for node in restyled if node.screen is detail
        )


async def test_a_theme_changed_while_closed_reaches_the_reopened_detail(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 45)) as (app, pilot):
        detail = await _open(app, pilot, FAILED)
        title = detail.query_one("#detail-title")
        before = title.styles.background
        await _close(app, pilot)

        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await pilot.pause()
        await _open(app, pilot, PENDING)
        assert title.styles.background != before  # restyled for the new theme

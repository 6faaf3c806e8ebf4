"""The footer shows whole keys only, the most important first, at any width (probe finding).

At 80 columns Textual's footer cut the last key mid-word ("t Re") and never showed Back or
Quit; at 100 "^q" stood without its label. The footer now drops whole keys, the least
important first (Sort, Pause, Mark, the screen keys), so Help, Commands, Back, Quit and the
open and act keys stay; the dropped ones are in ``?`` and the palette. Real app driven by
Pilot over a seeded SQLite file, resized through 60..200 columns on each screen.
"""

from __future__ import annotations

from typing import Any

from textual.widgets._footer import FooterKey

from monque_tui.console.bindings import REGISTRY
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.widgets.console_footer import ConsoleFooter, fit, key_width
from monque_tui.demo.seed import seed_id

from .conftest import move_to, running_console, wait_for
from .test_confirm_width import screen_text

WIDTHS = (60, 80, 100, 130, 160, 200)


def _labels(app: Any) -> list[str]:
    """``key description`` of each key the footer has mounted, in order."""
    keys = app.screen.query_one(ConsoleFooter).query(FooterKey)
    return [f"{key.key_display} {key.description}".strip() for key in keys]


async def _settled(app: Any, pilot: Any, width: int) -> str:
    """The footer line once the footer has been rebuilt for ``width``."""
    await wait_for(lambda: app.size.width == width)
    footer = app.screen.query_one(ConsoleFooter)

    def drawn() -> bool:
        keys = list(footer.query(FooterKey))
        line = screen_text(app).splitlines()[-1]
        # Rebuilt for this width, laid out, and the first key painted with its padding.
        return (
            not footer._recompose_pending
            and bool(keys)
            and all(key.region.width for key in keys)
            and line[keys[0].region.x : keys[0].region.right].strip() == _labels(app)[0]
            and footer.compact == (width < 150)
            and all(key.compact == footer.compact for key in keys)
        )

    await wait_for(drawn)
    await pilot.pause()
    return screen_text(app).splitlines()[-1]


def _assert_whole(app: Any, line: str, width: int, must: tuple[str, ...]) -> None:
    labels = _labels(app)
    # The line is exactly the mounted keys, each whole: nothing cut at the right edge.
    assert line.split() == " ".join(labels).split(), f"width {width}: {line!r} vs {labels}"
    for key in app.screen.query_one(ConsoleFooter).query(FooterKey):
        assert key.region.right <= width, f"width {width}: {key.description} ends at {key.region.right}"
    for label in must:
        assert label in labels, f"width {width}: {label!r} missing from {labels}"


async def test_the_jobs_footer_keeps_whole_keys_most_important_first(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(WIDTHS[0], 30)) as (app, pilot):
        for width in WIDTHS:
            await pilot.resize_terminal(width, 30)  # type: ignore[attr-defined]
            line = await _settled(app, pilot, width)
            palette = "^p Commands" if width >= 90 else "^p Cmds"  # shorter below 90 (issue 28)
            must = ("? Help", palette, "q Quit", "⏎ Detail", "c Cancel")
            _assert_whole(app, line, width, must if width >= 60 else ())
            if width >= 80:
                # Every act key, Reschedule included, before Sort (issue 28).
                assert {"r Retry", "d Delete", "/ Filter", "t Reschedule"} <= set(_labels(app)), line
            if width >= 160:  # everything fits: nothing dropped
                shown = [s for s in REGISTRY if s.show and ("jobs" in s.scopes or "app" in s.scopes)]
                assert len(_labels(app)) == len(shown), line


async def test_every_screen_footer_keeps_back_and_quit_at_80_columns(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        await move_to(app, pilot, seed_id(2))  # a failed job: has a history, so every detail key is bound
        for key, back in (("enter", JobDetailScreen), ("w", None), ("e", None), ("W", None)):
            await pilot.press(key)
            await wait_for(lambda: app.screen is not app.jobs_screen)
            if back is JobDetailScreen:
                await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.job is not None)
            for width in (60, 80, 100):
                await pilot.resize_terminal(width, 24)  # type: ignore[attr-defined]
                line = await _settled(app, pilot, width)
                palette = "^p Commands" if width >= 90 else "^p Cmds"
                _assert_whole(app, line, width, ("? Help", palette, "Esc Back", "q Quit"))
            await pilot.press("escape")
            await wait_for(lambda: app.screen is app.jobs_screen)
            await pilot.resize_terminal(80, 24)  # type: ignore[attr-defined]


def test_fit_drops_the_highest_ranks_whole_and_keeps_the_order() -> None:
    keys = [("help", 7, 0), ("sort", 7, 20), ("cancel", 9, 10), ("reschedule", 13, 13), ("quit", 7, 3)]
    assert fit(keys, 100) == ("help", "sort", "cancel", "reschedule", "quit")
    assert fit(keys, 36) == ("help", "cancel", "reschedule", "quit")  # Sort goes first
    # Reschedule does not fit: Sort, less important, does not take its place (issue 28).
    assert fit(keys, 30) == ("help", "cancel", "quit")
    assert fit(keys, 6) == ()
    assert key_width("?", "Help", compact=True) == len("? Help") + 1
    assert key_width("?", "Help", compact=False) == len(" ? Help ")

"""The header's paused names give way to their count when the line has no room (a console
probe: at 80 columns with ``--app``, the line ended "⏸ paused:" and the name was cut off)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from monque_tui.console.widgets.console_header import ConsoleHeader


class _Header(App[None]):
    def compose(self) -> ComposeResult:
        yield ConsoleHeader()


async def _line(width: int, label: str, paused: tuple[str, ...]) -> str:
    app = _Header()
    async with app.run_test(size=(width, 3)) as pilot:
        header = app.query_one(ConsoleHeader)
        header.store = "sqlite:////tmp/probe-tui/inproc.db"
        header.label = label
        header.feed = "live"
        header.paused_names = paused
        await pilot.pause()
        return header.render().plain


async def test_at_80_columns_with_an_app_label_the_paused_count_is_whole() -> None:
    line = await _line(80, "apps:slow_setup", ("export.csv",))
    assert len(line) <= 80, line
    assert line.endswith("⏸ 1 paused"), line


async def test_with_room_the_paused_names_are_shown() -> None:
    line = await _line(160, "apps:slow_setup", ("export.csv", "email.send"))
    assert "⏸ paused: export.csv, email.send" in line, line


async def test_at_80_columns_a_frozen_view_keeps_its_marked_count_whole() -> None:
    """ "❄ view frozen, p for live · 30": the word "marked" was cut off (a console probe)."""
    app = _Header()
    async with app.run_test(size=(80, 3)) as pilot:
        header = app.query_one(ConsoleHeader)
        header.store = "sqlite:////tmp/probe-tui2/h.db"
        header.feed = "live"
        header.paused = True
        header.marked = 30
        await pilot.pause()
        line = header.render().plain
    assert len(line) <= 80 and line.endswith("30 marked"), line
    assert "❄ frozen" in line

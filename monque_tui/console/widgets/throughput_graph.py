"""Completed jobs and failed attempts per second over the last 30 seconds, as two text sparklines.

Each line has its own scale (its peak is printed), and zero draws ``·`` while any non-zero
second draws at least ``▁``, so a trickle of failures never looks like none.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

BARS = "▁▂▃▄▅▆▇█"
ZERO = "·"
SECONDS = 30


def sparkline(values: list[float]) -> str:
    """One glyph per value, scaled to this line's own peak; zero is ``ZERO``."""
    peak = max(values, default=0.0)
    if peak <= 0:
        return ZERO * len(values)
    top = len(BARS) - 1
    return "".join(BARS[min(top, int(v / peak * top + 0.5))] if v > 0 else ZERO for v in values)


def _rate(values: list[float], recent: int = 5) -> float:
    tail = values[-recent:]
    return sum(tail) / len(tail) if tail else 0.0


#: The shortest sparkline worth drawing; below it the failed line is dropped whole, not cut.
MIN_SECONDS = 10


def throughput_text(completed: list[float], failed: list[float], width: int = 0) -> Text:
    """The line, fitted to ``width`` cells (0: unknown, everything) without cutting a word or number.

    Textual cut it at the right edge: at 80 columns "failed attempts/s" stood without its
    number (probe finding). As the width shrinks, the legend goes first, then the sparklines
    shorten (the newest seconds kept), then the failed sparkline goes, then the failed rate.
    """
    completed, failed = completed[-SECONDS:], failed[-SECONDS:]
    for legend, seconds, failed_line, failed_rate in _layouts(len(completed)):
        text = _compose(completed, failed, legend, seconds, failed_line, failed_rate)
        if not width or text.cell_len <= width:
            return text
    return text


def _layouts(most: int) -> list[tuple[bool, int, bool, bool]]:
    """(legend, seconds plotted, failed sparkline, failed rate), widest first."""
    layouts = [(True, most, True, True)]
    layouts += [(False, seconds, True, True) for seconds in range(most, MIN_SECONDS - 1, -1)]
    layouts += [(False, seconds, False, True) for seconds in range(most, MIN_SECONDS - 1, -1)]
    layouts += [(False, seconds, False, False) for seconds in range(most, -1, -1)]
    return layouts


def _compose(
    completed: list[float], failed: list[float], legend: bool, seconds: int, failed_line: bool, failed_rate: bool
) -> Text:
    shown_completed, shown_failed = completed[len(completed) - seconds :], failed[len(failed) - seconds :]
    text = Text()
    text.append("completed/s ", style="green")
    text.append(f"{_rate(completed):>7,.1f}")
    if seconds:
        text.append(" ")
        text.append(sparkline(shown_completed), style="green")  # scaled to, and peak of, what is plotted
        text.append(f" peak {max(shown_completed, default=0):,.0f}", style="dim")
    if failed_rate:
        text.append("   failed attempts/s ", style="red")
        text.append(f"{_rate(failed):>6,.1f}")
    if failed_line and seconds:
        text.append(" ")
        text.append(sparkline(shown_failed), style="red")
        text.append(f" peak {max(shown_failed, default=0):,.0f}", style="dim")
    if legend:
        text.append(f"  (last {SECONDS} s, 5 s average)", style="dim")
    return text


class ThroughputGraph(Static):
    DEFAULT_CSS = """
    ThroughputGraph { height: 1; padding: 0 1; }
    """
    seconds = SECONDS

    def __init__(self) -> None:
        super().__init__()
        self._series: tuple[list[float], list[float]] = ([0.0] * SECONDS, [0.0] * SECONDS)

    def on_mount(self) -> None:
        self.show([0.0] * SECONDS, [0.0] * SECONDS)

    def on_resize(self) -> None:
        self.show(*self._series)  # refit: more or less of the line fits now

    def show(self, completed: list[float], failed: list[float]) -> None:
        self._series = (completed, failed)
        text = throughput_text(completed, failed, self.content_size.width)
        # One line, always: no layout pass (a layout pass reflows the whole screen, every second).
        self.update(text, layout=False)

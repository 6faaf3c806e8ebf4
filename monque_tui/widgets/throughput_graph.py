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


class ThroughputGraph(Static):
    DEFAULT_CSS = """
    ThroughputGraph { height: 1; padding: 0 1; }
    """
    seconds = SECONDS

    def on_mount(self) -> None:
        self.show([0.0] * SECONDS, [0.0] * SECONDS)

    def show(self, completed: list[float], failed: list[float]) -> None:
        completed, failed = completed[-SECONDS:], failed[-SECONDS:]
        text = Text()
        text.append("completed/s ", style="green")
        text.append(f"{_rate(completed):>7,.1f} ")
        text.append(sparkline(completed), style="green")
        text.append(f" peak {max(completed, default=0):,.0f}", style="dim")
        text.append("   failed attempts/s ", style="red")
        text.append(f"{_rate(failed):>6,.1f} ")
        text.append(sparkline(failed), style="red")
        text.append(f" peak {max(failed, default=0):,.0f}", style="dim")
        text.append(f"  (last {SECONDS} s, 5 s average)", style="dim")
        # One line, always: no layout pass (a layout pass reflows the whole screen, every second).
        self.update(text, layout=False)

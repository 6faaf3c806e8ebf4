"""Completed and failed jobs per second over the last minute, as two text sparklines."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

BARS = " ▁▂▃▄▅▆▇█"


def sparkline(values: list[float], peak: float) -> str:
    if peak <= 0:
        return "▁" * len(values)
    return "".join(BARS[max(1, min(8, round(v / peak * 8)))] if v > 0 else "▁" for v in values)


class ThroughputGraph(Static):
    DEFAULT_CSS = """
    ThroughputGraph { height: 1; padding: 0 1; }
    """

    def on_mount(self) -> None:
        self.show([0.0] * 30, [0.0] * 30)

    def show(self, completed: list[float], failed: list[float]) -> None:
        recent = 5
        done_rate = sum(completed[-recent:]) / recent if completed else 0.0
        fail_rate = sum(failed[-recent:]) / recent if failed else 0.0
        width = 30
        completed, failed = completed[-width:], failed[-width:]
        peak = max([*completed, *failed, 0.0])
        text = Text()
        text.append("completed/s ", style="green")
        text.append(f"{done_rate:>7,.1f} ")
        text.append(sparkline(completed, peak), style="green")
        text.append("   failed/s ", style="red")
        text.append(f"{fail_rate:>6,.1f} ")
        text.append(sparkline(failed, peak), style="red")
        text.append("  (last minute)", style="dim")
        self.update(text)

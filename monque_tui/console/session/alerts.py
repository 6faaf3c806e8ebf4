"""The alerts line: what an on-call engineer must see on every screen, without pressing a key.

Three things paged at 3 a.m. and hid until someone opened the right screen (issue 40): a
dead worker still holding jobs (visible only under ``W``), a name with jobs due and no
worker consuming it, and a paused name with jobs due. The session polls them, paced by what
the reads cost, and every screen draws the same line, compact at 80 columns.

"No worker" means no live *registered* instance handles the name. Node Monque workers do
not register, so a name only Node consumes is listed too; the Workers screen names such
owners (``unregistered_owners_note``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from monque_engine import ConnectionError, Monque

from ...common.consumers import consumers_of
from .events import Alerts
from .fleet import FleetView, InstanceRow

if TYPE_CHECKING:
    from monque_engine.fleet_records import QueueHealth

#: Seconds between two reads of the alerts at least (more when the reads are slow).
ALERTS_EVERY = 5.0


def build_alerts(rows: Sequence[InstanceRow], healths: Sequence[QueueHealth]) -> Alerts:
    """The alerts from the Workers screen's rows (liveness judged the same way) and queue health."""
    consumers = consumers_of([row.info for row in rows if not row.dead])
    dead = tuple(sorted((row.id, row.info.jobs_held) for row in rows if row.dead and row.info.jobs_held))
    due = [(health.name, health.due, health.paused) for health in healths if health.due > 0]
    return Alerts(
        dead=dead,
        no_worker=tuple(sorted((name, n) for name, n, paused in due if not paused and name not in consumers)),
        paused=tuple(sorted((name, n) for name, n, paused in due if paused)),
    )


def _count(n: int) -> str:
    """``2,500`` in full; ``2.5k`` / ``1.2M`` in the compact form."""
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n / 1000:.0f}k" if n >= 100_000 else f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def _names(pairs: tuple[tuple[str, int], ...], shown: int, compact: bool) -> str:
    """``a (120), b (3) +2``: the first ``shown`` names with their counts, then how many more."""
    listed = ", ".join(f"{name} ({_count(n) if compact else f'{n:,}'})" for name, n in pairs[:shown])
    return listed + (f" +{len(pairs) - shown}" if len(pairs) > shown else "")


def alerts_text(alerts: Alerts, width: int) -> Text:
    """One line, in ``width`` cells: the full form when it fits, else shorter forms, the
    counts never cut (a name list gives way to "+N" first)."""
    for shown, compact in ((3, False), (2, True), (1, True), (0, True)):
        text = _render(alerts, shown, compact)
        if text.cell_len <= width or shown == 0:
            return text
    raise AssertionError("unreachable")


def _render(alerts: Alerts, shown: int, compact: bool) -> Text:
    text = Text()

    def part(label: str, style: str) -> None:
        if text:
            text.append(" · ", style="dim")
        text.append(label, style=style)

    if alerts.dead:
        held = sum(n for _id, n in alerts.dead)
        workers = len(alerts.dead)
        label = (
            f"✖ {workers} dead holding {_count(held)} (W)"
            if compact
            else f"✖ {workers} dead worker{'s' if workers != 1 else ''} holding {held:,} job{'s' if held != 1 else ''} (W, x releases)"
        )
        part(label, "bold red")
    # (pairs, the heading of the listed form, the count-only form, style)
    for pairs, heading, counted, style in (
        (alerts.no_worker, "⚠ no worker", "⚠ {n} name{s} due, no worker", "bold yellow"),
        (alerts.paused, "⏸ paused, due", "⏸ {n} paused with due jobs", "yellow"),
    ):
        if pairs:
            n = len(pairs)
            part(
                f"{heading}: {_names(pairs, shown, compact)}"
                if shown
                else counted.format(n=n, s="s" if n != 1 else ""),
                style,
            )
    return text


class AlertsWatch:
    """Reads the alerts at most every ``ALERTS_EVERY`` s, longer when the reads are slow (the
    same back-off as the counts: ``STATS_BACKOFF`` times their cost, at most ``STATS_MAX_WAIT``)."""

    def __init__(self, backoff: float, max_wait: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.alerts = Alerts()
        self._backoff = backoff
        self._max_wait = max_wait
        self._monotonic = monotonic
        self._next_at = 0.0

    @property
    def due(self) -> bool:
        """The next ``refresh`` reads the store."""
        return self._monotonic() >= self._next_at

    async def refresh(self, monque: Monque, now_ms: int) -> Alerts | None:
        """The alerts when they changed since the last read, else None (also when not due yet,
        or when a read failed otherwise than the store not answering: the next tick asks again).

        Raises the engine's ``ConnectionError`` (the store does not answer, or its file is
        lost): the session says so (``store_failed``) on every screen's alerts line. Swallowed
        here, the line went on showing the alerts of a store that was gone under the Queues
        and Workers screens, where nothing else reads the store the session watches."""
        started = self._monotonic()
        if started < self._next_at:
            return None
        try:
            infos = await monque.instances()
            healths = await monque.queue_health(window_minutes=1)
        except ConnectionError:
            self._next_at = self._monotonic() + ALERTS_EVERY
            raise
        except Exception:  # noqa: BLE001 - an odd record: the next tick asks again
            self._next_at = self._monotonic() + ALERTS_EVERY
            return None
        cost = self._monotonic() - started
        self._next_at = self._monotonic() + max(ALERTS_EVERY, min(self._max_wait, self._backoff * cost))
        alerts = build_alerts(FleetView().rows(infos, now_ms), healths)
        if alerts == self.alerts:
            return None
        self.alerts = alerts
        return alerts

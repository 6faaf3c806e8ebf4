"""The alerts line under the title of every screen (``session/alerts.py`` says what it holds).

Hidden while there is nothing to say, one line otherwise: a line that is always there would
be read past, and one that takes a row only when it matters is noticed.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ..session.alerts import alerts_text
from ..session.events import Alerts


class AlertsLine(Static):
    DEFAULT_CSS = """
    AlertsLine { height: 1; padding: 0 1; background: $error 15%; display: none; }
    AlertsLine.-shown { display: block; }
    """

    #: Set again with equal alerts, nothing happens (no restyle of a reopened screen).
    alerts: reactive[Alerts] = reactive(Alerts)

    def __init__(self, alerts: Alerts | None = None) -> None:
        super().__init__("", markup=False)
        if alerts is not None:
            self.set_reactive(AlertsLine.alerts, alerts)

    def on_mount(self) -> None:
        self.watch_alerts(self.alerts)

    def watch_alerts(self, alerts: Alerts) -> None:
        self.set_class(bool(alerts), "-shown")
        self.refresh()

    def render(self) -> Text:
        return alerts_text(self.alerts, max(20, self.content_size.width))

"""The alerts line under the title of every screen (``session/alerts.py`` says what it holds).

Hidden while there is nothing to say, one line otherwise: a line that is always there would
be read past, and one that takes a row only when it matters is noticed.

While the store does not answer (``StoreStateChanged``: deleted, replaced, damaged, or down)
its alerts are not shown: they were read from a store that is gone, and a probe found them
standing over a deleted file on every screen. The line says the store's state instead, in
the header's words (``store_state_label``), except on the jobs screen, whose header already
says it there: the line clears.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ..session.alerts import alerts_text
from ..session.events import Alerts, StoreStateChanged
from .console_header import store_state_label


class AlertsLine(Static):
    DEFAULT_CSS = """
    AlertsLine { height: 1; padding: 0 1; background: $error 15%; display: none; }
    AlertsLine.-shown { display: block; }
    """

    #: Set again with equal alerts, nothing happens (no restyle of a reopened screen).
    alerts: reactive[Alerts] = reactive(Alerts)
    #: The store's state (``StoreStateChanged``): its ``error`` set, the alerts give way to it.
    store_state: reactive[StoreStateChanged] = reactive(lambda: StoreStateChanged(None))

    def __init__(
        self, alerts: Alerts | None = None, store_state: StoreStateChanged | None = None, says_store_state: bool = True
    ) -> None:
        """``says_store_state=False``: a screen whose header says the store's state (jobs)."""
        super().__init__("", markup=False)
        self.says_store_state = says_store_state
        if alerts is not None:
            self.set_reactive(AlertsLine.alerts, alerts)
        if store_state is not None:
            self.set_reactive(AlertsLine.store_state, store_state)

    def show(self, alerts: Alerts, store_state: StoreStateChanged) -> None:
        """Both at once (the app, to every screen's line; a reused screen when it reopens)."""
        self.alerts = alerts
        self.store_state = store_state

    def on_mount(self) -> None:
        self._restyle()

    def watch_alerts(self) -> None:
        self._restyle()

    def watch_store_state(self) -> None:
        self._restyle()

    @property
    def store_down(self) -> bool:
        return self.store_state.error is not None

    def _restyle(self) -> None:
        shown = self.says_store_state if self.store_down else bool(self.alerts)
        self.set_class(shown, "-shown")
        self.refresh()

    def render(self) -> Text:
        if self.store_down:
            if not self.says_store_state:
                return Text()
            state = self.store_state
            return Text(
                f"{store_state_label(state.lost, state.damaged)} · alerts not read meanwhile",
                style="bold red",
                no_wrap=True,
                overflow="ellipsis",
            )
        return alerts_text(self.alerts, max(20, self.content_size.width))

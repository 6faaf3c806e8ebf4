"""The footer: every shown key, with Help and Commands first so a narrow terminal never cuts them.

Textual's ``Footer`` lists bindings from the focused widget outwards, so the app's own keys
(Quit, Help, Commands) come last and were the first to be cut (at ~130 columns "Commands"
ended mid-word; at 80 "Help" was gone). Here the two keys that lead to every other key go
first, and the footer turns compact (less padding) below ``COMPACT_BELOW`` columns.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: Actions shown before every other key (they lead to the rest: help lists all, the palette runs all).
FIRST = ("show_help", "command_palette")
#: Below this width the footer drops its padding, so more keys fit.
COMPACT_BELOW = 150


class ConsoleFooter(Footer):
    def __init__(self) -> None:
        super().__init__(show_command_palette=False)
        #: What the footer shows now: (action, key, description, enabled) per key.
        self._shown: tuple[tuple[str, str, str, bool], ...] | None = None
        #: A rebuild is scheduled: it reads the bindings when it runs, so no second one is needed.
        self._recompose_pending = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Rebuild only when the keys shown changed; when only which are enabled changed, restyle them.

        Textual rebuilds every footer key (new widgets, styles, layout) on each bindings update.
        A live view updates them whenever the cursor's job changes status, and every tab switch
        enables or disables an action: the rebuild cost ~35 ms a key (cProfile, issue 10 soak)
        and was the largest part of the console's CPU under a busy queue (py-spy).
        """
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        shown = self._signature()
        if shown == self._shown:
            return
        previous, self._shown = self._shown, shown
        if self._recompose_pending:
            # A new screen's first bindings updates came several at once (the job drawn, then its
            # history), each rebuilding the keys again (~35 ms each, the second detail open's
            # p95 sample in the soak, issue 10): the scheduled rebuild shows the latest.
            return
        keys = list(self.query(FooterKey))
        if previous is not None and [s[:3] for s in shown] == [s[:3] for s in previous] and len(keys) == len(shown):
            enabled = {action: on for action, _key, _description, on in shown}
            for key in keys:
                disabled = not enabled.get(key.action, True)
                if key._disabled != disabled:
                    key._disabled = disabled  # what a click checks (FooterKey has no public setter)
                    key.set_class(disabled, "-disabled")
            return
        self._schedule_recompose()

    def _schedule_recompose(self) -> None:
        self._recompose_pending = True
        self.call_after_refresh(self.recompose)

    def on_resize(self, event: events.Resize) -> None:
        compact = event.size.width < COMPACT_BELOW
        if compact != self.compact:
            self.compact = compact
            if self._shown is not None and not self._recompose_pending:
                self._schedule_recompose()

    def _signature(self) -> tuple[tuple[str, str, str, bool], ...]:
        """One entry per shown action (its first binding), as ``compose`` shows them."""
        shown: dict[str, tuple[str, str, str, bool]] = {}
        for _node, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if binding.show:
                shown.setdefault(binding.action, (binding.action, binding.key, binding.description, enabled))
        return tuple(shown.values())

    def compose(self) -> ComposeResult:
        self._recompose_pending = False
        if not self._bindings_ready:
            return
        self._shown = self._signature()  # what this compose shows (bindings may have moved on)
        shown: dict[str, tuple[Binding, bool, str]] = {}
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show:
                shown.setdefault(binding.action, (binding, enabled, tooltip))
        order = [a for a in FIRST if a in shown] + [a for a in shown if a not in FIRST]
        compact = self.compact
        for action in order:
            binding, enabled, tooltip = shown[action]
            key = FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
                classes="-compact" if compact else "",
            )
            # Set, not data-bound: binding re-styled every key once more on each mount.
            key.set_reactive(FooterKey.compact, compact)
            yield key

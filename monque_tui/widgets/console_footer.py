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

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Rebuild only when what the footer shows changed.

        Textual rebuilds every footer key (new widgets, styles, layout) on each bindings update,
        and a live view updates them whenever the cursor's job changes status: under a busy
        queue that rebuild was the largest part of the console's CPU (py-spy, issue 10 soak).
        """
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        shown = self._signature()
        if shown == self._shown:
            return
        self._shown = shown
        self.call_after_refresh(self.recompose)

    def _signature(self) -> tuple[tuple[str, str, str, bool], ...]:
        return tuple(
            (binding.action, binding.key, binding.description, enabled)
            for _node, binding, enabled, _tooltip in self.screen.active_bindings.values()
            if binding.show
        )

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        shown: dict[str, tuple[Binding, bool, str]] = {}
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show:
                shown.setdefault(binding.action, (binding, enabled, tooltip))
        order = [a for a in FIRST if a in shown] + [a for a in shown if a not in FIRST]
        for action in order:
            binding, enabled, tooltip = shown[action]
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)

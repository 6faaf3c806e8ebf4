"""The footer: the shown keys that fit, whole, with Help and Commands first.

Textual's ``Footer`` lists bindings from the focused widget outwards, so the app's own keys
(Quit, Help, Commands) come last and were the first to be cut (at ~130 columns "Commands"
ended mid-word; at 80 "Help" was gone). Here the two keys that lead to every other key go
first, and the footer turns compact (less padding) below ``COMPACT_BELOW`` columns.

Textual cuts whatever does not fit at the right edge, mid-word ("t Re" at 80 columns, and
Back and Quit were never seen there). So the footer shows only the keys that fit whole:
when space is short it drops the keys of highest ``rank`` (``bindings.KeyAction.rank``:
Sort, Pause, Mark and the screen keys before Back, Quit, the open and act keys), keeping
the order of the rest. Every dropped key is still listed by ``?`` and run from the palette.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from ..bindings import FOOTER_KEYS, FOOTER_RANKS

#: Actions shown before every other key (they lead to the rest: help lists all, the palette runs all).
FIRST = ("show_help", "command_palette")
#: Below this width the footer drops its padding, so more keys fit.
COMPACT_BELOW = 150
#: Below this width these keys take a shorter label, so the act keys fit whole at 80 columns
#: (``t Reschedule`` was dropped there; issue 28). ``?`` and the palette keep the full names.
SHORT_BELOW = 90
SHORT_LABELS = {"command_palette": "Cmds"}
#: Rank of a shown binding that is not in the registry (a focused input's own key, such as
#: the filter bar's Esc): it applies to what the operator is doing, so it is kept early.
OTHER_RANK = 6


def key_width(key_display: str, description: str, compact: bool) -> int:
    """Cells one ``FooterKey`` takes, its margin included (as Textual's footer CSS lays it out)."""
    key, text = cell_len(key_display), cell_len(description)
    if compact:  # "k Description" then a 1-cell margin
        return key + (1 + text if description else 0) + 1
    return key + 2 + (text + 1 if description else 0)  # " k Description "


def fit(keys: list[tuple[str, int, int]], width: int) -> tuple[str, ...]:
    """The actions that fit in ``width`` cells: most important (lowest rank) first, in their order.

    ``keys`` is (action, cells, rank) in display order. Strictly by rank: once a key does not
    fit, no less important one is shown in its place (a short ``s Sort`` took the room
    ``t Reschedule`` needed at 80 columns, the reverse of the ranks; issue 28).
    """
    kept: set[str] = set()
    used = 0
    for index in sorted(range(len(keys)), key=lambda i: (keys[i][2], i)):
        action, cells, _rank = keys[index]
        if used + cells > width:
            break
        kept.add(action)
        used += cells
    return tuple(action for action, _cells, _rank in keys if action in kept)


class ConsoleFooter(Footer):
    def __init__(self) -> None:
        super().__init__(show_command_palette=False)
        #: What the footer shows now: (action, key, description, enabled) per key.
        self._shown: tuple[tuple[str, str, str, bool], ...] | None = None
        #: A rebuild is scheduled: it reads the bindings when it runs, so no second one is needed.
        self._recompose_pending = False
        #: The actions whose keys are mounted now (those of ``_shown`` that fit the width).
        self._fitted: tuple[str, ...] = ()
        #: The labels are the short ones (``SHORT_LABELS``).
        self._short = False

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
        if (
            previous is not None
            and [s[:3] for s in shown] == [s[:3] for s in previous]
            and tuple(key.action for key in keys) == self._fitted
        ):
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
        short = event.size.width < SHORT_BELOW
        changed = compact != self.compact or short != self._short
        self._short = short  # the labels change: the keys are rebuilt
        if compact != self.compact:
            self.compact = compact  # the keys' padding changes: they are rebuilt
        if self._shown is None or self._recompose_pending:
            return
        if changed or self._fit(self._footer_bindings()) != self._fitted:  # or a key more or less fits now
            self._schedule_recompose()

    def _footer_bindings(self) -> dict[str, tuple[Binding, bool, str]]:
        """The shown bindings by action, in display order: one binding each (the registry's first key)."""
        shown: dict[str, tuple[Binding, bool, str]] = {}
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not binding.show:
                continue
            known = shown.get(binding.action)
            if known is None or (
                known[0].key != FOOTER_KEYS.get(binding.action) and binding.key == FOOTER_KEYS.get(binding.action)
            ):
                shown[binding.action] = (binding, enabled, tooltip)
        order = [a for a in FIRST if a in shown] + [a for a in shown if a not in FIRST]
        return {action: shown[action] for action in order}

    def _label(self, binding: Binding) -> str:
        if self.app.size.width < SHORT_BELOW:
            return SHORT_LABELS.get(binding.action, binding.description)
        return binding.description

    def _fit(self, shown: dict[str, tuple[Binding, bool, str]]) -> tuple[str, ...]:
        width = self.app.size.width
        keys = [
            (
                action,
                key_width(self.app.get_key_display(binding), self._label(binding), self.compact),
                FOOTER_RANKS.get(action, OTHER_RANK),
            )
            for action, (binding, _enabled, _tooltip) in shown.items()
        ]
        return fit(keys, width)

    def _signature(self) -> tuple[tuple[str, str, str, bool], ...]:
        """One entry per shown action, as ``compose`` shows them."""
        return tuple(
            (action, binding.key, binding.description, enabled)
            for action, (binding, enabled, _tooltip) in self._footer_bindings().items()
        )

    def compose(self) -> ComposeResult:
        self._recompose_pending = False
        if not self._bindings_ready:
            return
        shown = self._footer_bindings()
        # What this compose shows (bindings may have moved on since it was scheduled).
        self._shown = tuple((a, b.key, b.description, on) for a, (b, on, _t) in shown.items())
        self._fitted = self._fit(shown)
        compact = self.compact
        for action in self._fitted:
            binding, enabled, tooltip = shown[action]
            key = FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                self._label(binding),
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
                classes="-compact" if compact else "",
            )
            # Set, not data-bound: binding re-styled every key once more on each mount.
            key.set_reactive(FooterKey.compact, compact)
            yield key

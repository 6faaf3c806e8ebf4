"""The console's command palette screen: Textual's, with page keys that tolerate a list not yet laid out.

Textual's ``OptionList._move_page`` (PgUp/PgDn in the palette) looks the highlighted option's
line up in a cache that is only built once the list has a non-zero size. The palette sets a
highlight the moment results arrive, one frame before the list is laid out (and a list squeezed
to no height in a small terminal is never laid out), so a page key in between raised
``KeyError`` and took the whole console down (found by the chaos drive, issue 10). With
nothing laid out there is nothing to page through, so the key does nothing.

In a terminal a few columns wide the list's options were wrapped to a width of zero, and
Rich's wrapping raised ``ValueError: range() arg 3 must not be zero`` (found by the probe at
4x2). A minimum width keeps every option at least one cell wide; the screen clips the rest.
"""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.css.query import NoMatches

PAGE_ACTIONS = frozenset({"page_up", "page_down"})


class ConsolePalette(CommandPalette):
    DEFAULT_CSS = """
    ConsolePalette CommandList { min-width: 12; }
    """

    def _action_command_list(self, action: str) -> None:
        if action in PAGE_ACTIONS:
            try:
                command_list = self.query_one(CommandList)
            except NoMatches:  # the palette is closing
                return
            highlighted = command_list.highlighted
            if highlighted is not None and highlighted not in command_list._index_to_line:
                return
        super()._action_command_list(action)

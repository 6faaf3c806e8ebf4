"""The DataTable of the Queues, Workers and Errors screens, with the Jobs table's movement keys.

Those screens bound only their own keys and "back": ``j``/``k`` did nothing there, and an
operator used to them on the Jobs table pressed ``j``, then Enter on a row the cursor had
never left (issue 40). Every table screen now moves alike.

Enter is the screen's: DataTable binds it to ``select_cursor`` with ``show=False``, and the
footer takes the focused widget's binding of a key first, so Queues never showed
``⏎ Show jobs`` nor Errors ``⏎ Show jobs`` (probe finding). Here ``select_cursor`` is
disabled, so the key reaches the screen's binding, which the footer shows and ``?`` lists.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class RowTable(DataTable[object]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "First", show=False),
        Binding("G", "scroll_bottom", "Last", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "select_cursor":
            return False  # the screen's own Enter binding shows in the footer and runs (docstring)
        return super().check_action(action, parameters)

"""The DataTable of the Queues, Workers and Errors screens, with the Jobs table's movement keys.

Those screens bound only their own keys and "back": ``j``/``k`` did nothing there, and an
operator used to them on the Jobs table pressed ``j``, then Enter on a row the cursor had
never left (issue 40). Every table screen now moves alike.
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

"""The shape shared by the Queues and Workers screens: a title line, one table, the footer.

Both re-read the store on a re-armed timer (the next load is armed when one finishes, so
loads never overlap on a slow store), keep their rows in place by key (so the cursor stays
on its row across refreshes), and refuse mutating keys in read-only mode. Each screen only
says what its rows are and how to read them.

Loads are paced by what they cost, as the jobs screen's counts are (``STATS_BACKOFF``): the
Queues screen's per-name counts read every finished job, ~0.5 s at 1.8M jobs, and
re-reading them every 2 s on a busy queue took a quarter of a core.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Static

from monque_engine import ConnectionError

from ..bindings import MUTATING_ACTIONS
from ..formatting import middle_cut_text
from ..protocol import ConsoleApp
from ..session import ConsoleSession
from ..session.core import STATS_BACKOFF, STATS_MAX_WAIT, store_unreadable
from ..widgets.alerts_line import AlertsLine
from ..widgets.console_footer import ConsoleFooter
from ..widgets.row_table import RowTable


def _same(shown: object, value: object) -> bool:
    """Whether a cell would draw the same (rich's ``Text ==`` ignores its style and justify)."""
    if isinstance(shown, Text) and isinstance(value, Text):
        return (shown.plain, shown.style, shown.justify, shown.spans) == (
            value.plain,
            value.style,
            value.justify,
            value.spans,
        )
    return shown == value


class TableScreen(Screen[None]):
    DEFAULT_CSS = """
    TableScreen .table-title { background: $primary-background; padding: 0 1; text-style: bold; }
    TableScreen DataTable { height: 1fr; }
    """
    #: The title's id is ``{ID_PREFIX}-title``.
    ID_PREFIX: ClassVar[str]
    HEADING: ClassVar[str]
    COLUMNS: ClassVar[tuple[str, ...]]
    #: Actions that need a row under the cursor, and what to say when the table is empty.
    ROW_ACTIONS: ClassVar[dict[str, str]] = {}
    #: After a failed load (the store unreachable), try again this often.
    RETRY_EVERY: ClassVar[float] = 5.0
    #: How many columns after the first (the row's name) a narrow screen keeps beside it: a
    #: longer first cell is cut in its middle instead of pushing them off. A 72-character job
    #: name left Queues at 80 columns with its NAME column alone (review).
    KEEP_BESIDE_FIRST: ClassVar[int] = 0
    #: The first column is never cut narrower than this.
    MIN_FIRST: ClassVar[int] = 16

    def __init__(self, session: ConsoleSession, console: ConsoleApp) -> None:
        super().__init__()
        self.session = session
        self._console_app = console
        self.loads = 0
        #: ``z``: every column, the table scrolling sideways; else the columns that fit whole.
        self.wide = False
        #: The columns on screen now (``COLUMNS`` order), and the rows last shown (for a resize).
        self.shown_columns: tuple[str, ...] = ()
        #: The first column's width while its cells are cut to fit (None: whole).
        self.first_cut: int | None = None
        self._rows: dict[str, dict[str, Text]] = {}
        self._timer: Timer | None = None
        #: Seconds the last load took (``paced``), by this clock.
        self.load_cost = 0.0
        self.monotonic: Callable[[], float] = time.monotonic

    @property
    def console(self) -> ConsoleApp:
        """The app, as much of it as screens may use (handed over when built: no cast)."""
        return self._console_app

    def compose(self) -> ComposeResult:
        yield Static(self.HEADING, id=f"{self.ID_PREFIX}-title", classes="table-title")
        yield AlertsLine(self.session.alerts, self.session.store_state)
        yield RowTable()
        yield ConsoleFooter()

    def on_mount(self) -> None:
        self.reset_columns()
        self.query_one(DataTable).focus()
        self.load()

    def reset_columns(self, columns: tuple[str, ...] | None = None) -> str | None:
        """Empty the table and add ``columns`` (default: all) afresh (a column only ever widens
        to fit its cells: narrowing, after a wide view, takes new columns); returns the key
        the cursor was on, for ``put_cursor`` once the rows are back."""
        key = self.cursor_key
        table = self.query_one(DataTable)
        table.clear(columns=True)
        self.shown_columns = self.COLUMNS if columns is None else columns
        for column in self.shown_columns:
            table.add_column(column.upper(), key=column)
        return key

    def fitting_columns(self, rows: dict[str, dict[str, Text]], width: int) -> tuple[tuple[str, ...], int | None]:
        """The columns that fit whole in ``width`` cells, taken in ``COLUMNS`` order (left to
        right is priority): a column that does not fit is dropped whole, and the ones after it
        may still fit. A column cut at the screen's edge showed ``1,`` for 1,234 (issue 40).
        Also the first column's cut width, when its cells must be cut in their middle to leave
        room for the ``KEEP_BESIDE_FIRST`` columns after it (None: shown whole)."""
        if self.wide:
            return self.COLUMNS, None
        room = width - 2  # the vertical scrollbar
        # Cell padding: one cell each side of every column (DataTable's cell_padding).
        needs = {
            column: 2 + max([len(column), *(cells[column].cell_len for cells in rows.values() if column in cells)])
            for column in self.COLUMNS
        }
        first = self.COLUMNS[0]
        beside = sum(needs[column] for column in self.COLUMNS[1 : 1 + self.KEEP_BESIDE_FIRST])
        cut = None
        if self.KEEP_BESIDE_FIRST and needs[first] + beside > room:
            cut = max(self.MIN_FIRST, room - beside - 2)
            needs[first] = cut + 2
        kept: list[str] = []
        for column in self.COLUMNS:
            if needs[column] <= room or not kept:
                kept.append(column)
                room -= needs[column]
        return tuple(kept), cut

    def action_toggle_wide(self) -> None:
        """``z``: every column whole, the table scrolling sideways; ``z`` again fits the screen."""
        self.wide = not self.wide
        self.sync_rows(self._rows, rebuild=True)

    def on_resize(self) -> None:
        if self._rows:
            self.sync_rows(self._rows)

    def put_cursor(self, key: str | None) -> None:
        table = self.query_one(DataTable)
        if key is not None and key in table.rows:
            table.move_cursor(row=table.get_row_index(key), animate=False)

    @work(exclusive=True, group="table-screen")
    async def load(self) -> None:
        started = self.monotonic()
        try:
            await self._load()
            self.load_cost = self.monotonic() - started
        except NoMatches:
            pass  # closed while its widgets were being removed: nothing left to show (as in detail.py)
        except ConnectionError as error:  # the store went away: one notice, and the next load tries again
            self.session.store_failed(error)
            # The title says why the table is empty or old: opened after the once-per-outage
            # notice had gone, the Queues screen showed bare headings (probe 5).
            self.set_title(
                Text(
                    f"{self.HEADING} — {store_unreadable(error)}; trying again every {self.RETRY_EVERY:g} s",
                    style="red",
                )
            )
            self._arm(self.RETRY_EVERY)

    async def _load(self) -> None:
        """Read the store and show it; end with ``_loaded``."""
        raise NotImplementedError

    def paced(self, seconds: float) -> float:
        """``seconds``, or longer on a store where a load is slow: ``STATS_BACKOFF`` times what
        the last load cost (so loads take at most ~3 % of the time), at most ``STATS_MAX_WAIT``
        (a load timed across a suspended process must not freeze the screen for minutes)."""
        return max(seconds, min(STATS_MAX_WAIT, STATS_BACKOFF * self.load_cost))

    def _loaded(self, next_in: float) -> None:
        """Count the load and arm the next one (paced by its cost)."""
        self.loads += 1
        self._arm(self.paced(next_in))

    def _arm(self, next_in: float) -> None:
        """Load again in ``next_in`` s (only while live and shown: never two loads at once)."""
        if self.console.live and self.is_attached:
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_timer(next_in, self.load)

    def set_title(self, title: Text) -> None:
        self.query_one(f"#{self.ID_PREFIX}-title", Static).update(title)

    def sync_rows(self, rows: dict[str, dict[str, Text]], rebuild: bool = False) -> None:
        """Show exactly ``rows`` (key → cells by column), updating kept rows in place.

        A kept cell is rewritten only when its text changed, and its column widens to fit it:
        Textual's ``update_cell`` keeps the width the column had when the row was added, so a
        value that grew was cut ("RATE 0.0/" for ``0.0/s``, a count gaining a digit, "15s
        ago" in a column sized for "2s ago"; probe 6).
        """
        table = self.query_one(DataTable)
        self._rows = rows
        columns, cut = self.fitting_columns(rows, self.size.width or 80)
        rebuild = rebuild or columns != self.shown_columns or cut != self.first_cut
        self.first_cut = cut
        first = columns[0]

        def shown(column: str, value: Text) -> Text:
            return middle_cut_text(value, cut) if cut is not None and column == first else value

        with self.app.batch_update():
            # Other columns, another cut (or ``z``): start from an empty table (a column only
            # ever widens); the loop below adds every row.
            cursor = self.reset_columns(columns) if rebuild else None
            for key, cells in rows.items():
                if key in table.rows:
                    for column in columns:
                        value = shown(column, cells[column])
                        if not _same(table.get_cell(key, column), value):
                            table.update_cell(key, column, value, update_width=True)
                else:
                    table.add_row(*(shown(c, cells[c]) for c in columns), key=key)
            for row_key in [k for k in table.rows if k.value not in rows]:
                table.remove_row(row_key)
            self.put_cursor(cursor)  # (None: the cursor was not moved)
        self.refresh_bindings()

    @property
    def cursor_key(self) -> str | None:
        try:
            table = self.query_one(DataTable)
        except NoMatches:  # closing: its widgets are gone (bindings are still checked meanwhile)
            return None
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MUTATING_ACTIONS and self.session.read_only:
            return None
        if action in self.ROW_ACTIONS and self.cursor_key is None:
            return None  # greyed; ``disabled_reason`` says why
        return True

    def disabled_reason(self, action: str, parameters: tuple[object, ...]) -> str | None:
        """Why a key that needs a row did nothing on an empty table (``disabled_keys``).

        ``x`` on an empty Workers screen and ``P`` / Enter on an empty Queues screen did
        nothing and said nothing (probe 5).
        """
        if action in self.ROW_ACTIONS and self.cursor_key is None:
            return self.ROW_ACTIONS[action]
        return None

    def action_back(self) -> None:
        self.dismiss(None)

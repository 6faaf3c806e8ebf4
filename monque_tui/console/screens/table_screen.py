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
from ..protocol import ConsoleApp
from ..session import ConsoleSession
from ..session.core import STATS_BACKOFF, STATS_MAX_WAIT, store_unreadable
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

    def __init__(self, session: ConsoleSession, console: ConsoleApp) -> None:
        super().__init__()
        self.session = session
        self._console_app = console
        self.loads = 0
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
        yield RowTable()
        yield ConsoleFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in self.COLUMNS:
            table.add_column(column.upper(), key=column)
        table.focus()
        self.load()

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

    def sync_rows(self, rows: dict[str, dict[str, Text]]) -> None:
        """Show exactly ``rows`` (key → cells by column), updating kept rows in place.

        A kept cell is rewritten only when its text changed, and its column widens to fit it:
        Textual's ``update_cell`` keeps the width the column had when the row was added, so a
        value that grew was cut ("RATE 0.0/" for ``0.0/s``, a count gaining a digit, "15s
        ago" in a column sized for "2s ago"; probe 6).
        """
        table = self.query_one(DataTable)
        with self.app.batch_update():
            for key, cells in rows.items():
                if key in table.rows:
                    for column, value in cells.items():
                        if not _same(table.get_cell(key, column), value):
                            table.update_cell(key, column, value, update_width=True)
                else:
                    table.add_row(*(cells[c] for c in self.COLUMNS), key=key)
            for row_key in [k for k in table.rows if k.value not in rows]:
                table.remove_row(row_key)
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

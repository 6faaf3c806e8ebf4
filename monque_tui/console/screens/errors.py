"""`e`: failed and retrying jobs grouped by job name, exception type and message pattern.

One row per group (``Monque.error_groups``): count, how many are still retrying, first and
last seen, and a sparkline of the last hour. Enter shows the group's jobs in the jobs table
(a filter the table, the counts and bulk keys all honour); ``R`` retries and ``D`` deletes
the whole group through the same plan / confirm / recount path as every bulk action.
The list refreshes on a timer that is re-armed after each fetch (backing off by what the
fetch cost: ``ErrorGroupsModel.next_refresh_in``), keeping the cursor's group.
"""

from __future__ import annotations

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Static

from monque_engine import ErrorGroup

from ...common.error_groups import example_message as _message
from ..actions import ActionKind
from ..bindings import MUTATING_ACTIONS, Scope, bindings_for
from ..formatting import plural, relative
from ..messages import ActOnQuery, ShowErrorGroup
from ..protocol import ConsoleApp
from ..session import ConsoleSession
from ..session.errors import REFRESH_EVERY, SPARK_WIDTH, ErrorGroupsModel, group_query, sparkline
from ..widgets.alerts_line import AlertsLine
from ..widgets.console_footer import ConsoleFooter
from ..widgets.row_table import RowTable

#: (key, label, width): sized so the whole row fits 130 columns; long values end in "…".
#: Count and retrying come right after the message, so a narrow screen keeps them.
COLUMNS = (
    ("name", "NAME", 14),
    ("type", "TYPE", 22),
    ("pattern", "MESSAGE", 27),
    ("count", "COUNT", 6),
    ("retrying", "RETRYING", 8),
    ("last", "LAST SEEN", 9),
    ("first", "FIRST SEEN", 10),
    ("spark", "LAST HOUR", SPARK_WIDTH),
)
WIDTHS = {key: width for key, _, width in COLUMNS}
#: Shown at every width (the count and retrying are why the group matters, the first seen
#: is since when: issue 40, where 80 columns showed no FIRST SEEN at all).
ALWAYS = ("name", "type", "count", "retrying", "first")
#: Shown while they fit beside a readable message, in this order.
OPTIONAL = ("last", "spark")
#: Below this width the type and the message share one column, ``Type: message``, whose
#: type is never cut (``…ctionResetError`` at 80 columns: issue 40), and labels are short.
NARROW_BELOW = 110
NARROW_LABELS = {"pattern": "ERROR", "retrying": "RETRY", "first": "FIRST"}
#: Narrow: the name is as wide as the longest, up to this, before the error column is cut.
NARROW_NAME_MAX = 22
#: ``9h59m ago``: the longest relative instant (``formatting.relative``).
FIRST_WIDTH = 9
#: The message column is never narrower than this.
MESSAGE_MIN = 16
EMPTY = "No failed or retrying jobs: nothing to group."


class ErrorsScreen(Screen[None]):
    SCOPES: tuple[Scope, ...] = ("errors", "back", "app")
    BINDINGS = bindings_for("errors", "back")
    DEFAULT_CSS = """
    ErrorsScreen #errors-title { background: $primary-background; padding: 0 1; text-style: bold; }
    ErrorsScreen #errors-status { padding: 0 1; color: $text-muted; }
    ErrorsScreen DataTable { height: 1fr; }
    """

    def __init__(self, session: ConsoleSession, console: ConsoleApp, live: bool = True) -> None:
        """``live=False`` (snapshots): one fetch, no refresh timer."""
        super().__init__()
        self.session = session
        self._console_app = console
        self.model = ErrorGroupsModel()
        self._live = live
        self._timer: Timer | None = None
        #: How many fetches finished (tests wait on it).
        self.fetches = 0
        #: The columns' widths now: ``WIDTHS``, widened where the screen has room (``widths_for``).
        self.widths = dict(WIDTHS)
        #: ``z``: every column whole (the longest name, type and message), the table scrolling
        #: sideways, as on the other table screens; ``z`` again fits the screen.
        self.wide = False

    @property
    def console(self) -> ConsoleApp:
        """The app, as much of it as screens may use (handed over when built: no cast)."""
        return self._console_app

    def compose(self) -> ComposeResult:
        yield Static("Errors: failed and retrying jobs by name, type and message", id="errors-title")
        yield AlertsLine(self.session.alerts, self.session.store_state)
        yield RowTable()
        yield Static("Loading…", id="errors-status", markup=False)
        yield ConsoleFooter()

    @property
    def table(self) -> DataTable[object]:
        return self.query_one(DataTable)

    def on_mount(self) -> None:
        table = self.table
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        table.focus()
        self.refresh_groups()

    def on_unmount(self) -> None:
        if self._timer is not None:
            self._timer.stop()

    # -- loading ---------------------------------------------------------------------------------
    @work(exclusive=True, group="errors")
    async def refresh_groups(self) -> None:
        """Fetch, draw, then arm the next refresh (never two fetches at once)."""
        try:
            await self._refresh_groups()
        except NoMatches:
            pass  # closed while its widgets were being removed: nothing left to show (as in detail.py)

    async def _refresh_groups(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if await self.model.fetch(self.session.monque):
            self.fetches += 1
            if self.is_attached:
                self._draw()
        if self._live and self.is_attached:
            self._timer = self.set_timer(self.model.next_refresh_in(), self.refresh_groups)

    @property
    def cursor_group(self) -> ErrorGroup | None:
        try:
            table = self.table
        except NoMatches:  # not composed yet
            return None
        if not table.row_count:
            return None
        row_key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return self.model.find(row_key.value)

    def on_resize(self, event: events.Resize) -> None:
        if self.model.groups and self.widths_for(event.size.width) != self.widths:
            self._draw()

    def widths_for(self, width: int) -> dict[str, int]:
        """The columns shown on a screen ``width`` wide, and their widths.

        Name, type, count, retrying and first seen are always shown; the message takes the
        room left (at least ``MESSAGE_MIN``); the last seen and the sparkline are the first
        to go (at 80 columns every group read ``POST https://hooks.example…``, and the count
        was off screen: issue 28). Below ``NARROW_BELOW`` the type and the message are one
        column (``narrow_widths``). Past the designed widths the spare cells go to the name,
        then the message, then the type, as far as the longest of each needs (probe 7: at
        fixed widths a 220-column screen showed two groups that both read
        ``POST https://crm.ex…``).
        """
        groups = self.model.groups
        if self.wide:
            return self.wide_widths()
        if width < NARROW_BELOW:
            return self.narrow_widths(width)
        longest = {
            "name": max((len(group.name) for group in groups), default=4),
            "pattern": max((len(_message(group)) for group in groups), default=7),
            "type": max((len(_type_text(group, short=False)) for group in groups), default=4),
        }
        room = width - 2  # the scrollbar
        widths = {key: WIDTHS[key] for key in ALWAYS}
        short_type = max((len(_type_text(group, short=True)) for group in groups), default=4)
        widths["type"] = max(4, min(WIDTHS["type"], max(short_type, longest["type"])))
        widths["name"] = max(4, min(WIDTHS["name"], longest["name"]))
        widths.update(_number_widths(groups, narrow=False))
        room -= sum(widths.values()) + 2 * len(widths)
        widths["pattern"] = max(MESSAGE_MIN, min(room - 2, WIDTHS["pattern"]))
        room -= widths["pattern"] + 2
        for key in OPTIONAL:
            if room >= WIDTHS[key] + 2:
                widths[key] = WIDTHS[key]
                room -= WIDTHS[key] + 2
        for key in ("name", "pattern", "type"):
            extra = max(0, min(room, longest[key] - widths[key]))
            widths[key] += extra
            room -= extra
        return {key: widths[key] for key, _label, _width in COLUMNS if key in widths}

    def wide_widths(self) -> dict[str, int]:
        """``z``: every column, each as wide as its longest cell, whatever the screen's width."""
        groups = self.model.groups
        widths = {key: WIDTHS[key] for key in (*ALWAYS, *OPTIONAL)}
        widths.update(_number_widths(groups, narrow=False))
        widths["name"] = max([4, *(len(group.name) for group in groups)])
        widths["type"] = max([4, *(len(_type_text(group, short=False)) for group in groups)])
        widths["pattern"] = max([MESSAGE_MIN, *(len(_message(group)) for group in groups)])
        return {key: widths[key] for key, _label, _width in COLUMNS if key in widths}

    def action_toggle_wide(self) -> None:
        """``z``: every cell whole, ←/→ scrolling sideways; ``z`` again fits the screen."""
        self.wide = not self.wide
        if self.model.groups:
            self._draw()

    def narrow_widths(self, width: int) -> dict[str, int]:
        """Below ``NARROW_BELOW``: name, ``Type: message``, count, retrying, first seen.

        The name is as wide as the longest (up to ``NARROW_NAME_MAX``), the numbers as wide
        as their longest (never cut), first seen ``FIRST_WIDTH``; the error column takes the
        rest, at least ``MESSAGE_MIN``: it shows the type whole and then as much of an
        example message as fits. A name is cut only when the error column would go below
        its minimum."""
        groups = self.model.groups
        room = width - 2  # the scrollbar
        widths = {**_number_widths(groups, narrow=True), "first": FIRST_WIDTH}
        longest_name = max((len(group.name) for group in groups), default=4)
        fixed = sum(widths.values()) + 2 * (len(widths) + 2)
        name = max(4, min(NARROW_NAME_MAX, longest_name, room - fixed - MESSAGE_MIN))
        widths["name"] = name
        widths["pattern"] = max(MESSAGE_MIN, room - fixed - name)
        return {key: widths[key] for key, _label, _width in COLUMNS if key in widths}

    def _draw(self) -> None:
        table = self.table
        keep = self.cursor_group
        row = table.cursor_row
        now = self.console.clock()
        widths = self.widths_for(self.size.width)
        if widths != self.widths:
            self.widths = widths
            table.clear(columns=True)
            narrow = "type" not in widths
            for key, label, _width in COLUMNS:
                if key in widths:
                    shown = NARROW_LABELS.get(key, label) if narrow else label
                    table.add_column(shown, key=key, width=widths[key])
        table.clear()
        patterns = [_message(group) for group in self.model.groups]
        fresh = self.model.fresh
        for group in self.model.groups:
            table.add_row(*self._cells(group, now, self.widths, patterns, group.key in fresh), key=group.key)
        if keep is not None:
            keys = [group.key for group in self.model.groups]
            row = keys.index(keep.key) if keep.key in keys else row
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)
        self._show_status()
        self.refresh_bindings()

    def _show_status(self) -> None:
        """The status line: counts and keys, and the cursor group's template where its
        message (a real one) differs from it (``'<str>'`` for ``'customer_id'``)."""
        groups = self.model.groups
        status = self.query_one("#errors-status", Static)
        if self.model.error is not None:
            status.update(Text(f"✗ Could not read the groups: {self.model.error}", style="bold red"))
            return
        if not groups:
            status.update(EMPTY)
            return
        jobs = sum(group.count for group in groups)
        group = self.cursor_group
        template = ""
        if group is not None and group.pattern and group.pattern != _message(group):
            template = f"pattern: {_fit(group.pattern, 60)} · "
        status.update(
            f"{template}{plural(len(groups), 'group')}, {plural(jobs, 'job')} · ⏎ show jobs · R retry group · "
            f"D delete group · {self._refresh_text()}; rows keep their place "
            "(↑: failed again since this view opened; reopen to re-sort)"
        )

    def _refresh_text(self) -> str:
        """How often the list refreshes: every ``REFRESH_EVERY`` s, or longer after a slow read
        (said with what it cost). Not live (snapshots): the plain interval, as no timer runs."""
        wait = self.model.next_refresh_in()
        if not self._live or wait <= REFRESH_EVERY:
            return f"refreshed every {REFRESH_EVERY:g} s"
        return f"refreshed every {wait:.0f} s (the last read took {self.model.last_cost:.1f} s)"

    @staticmethod
    def _cells(
        group: ErrorGroup, now: int, widths: dict[str, int], patterns: list[str] | None = None, fresh: bool = False
    ) -> tuple[object, ...]:
        """One row. The message is a real one of the group's (``KeyError: 'customer_id'``),
        not its template (``'<str>'``: issue 40); the status line says the template."""
        message = _message(group)
        if "type" in widths:
            short = len(_type_text(group, short=False)) > widths["type"]
            type_cell = Text(_fit(_type_text(group, short), widths["type"], keep_end=True), style="red")
            message_cell = Text(distinguishing(message, patterns or [], widths["pattern"]))
        else:  # narrow: ``Type: message`` in one column, the type whole where it fits
            type_cell = Text()
            kind = _type_text(group, short=True)
            room = widths["pattern"] - len(kind) - 2
            message_cell = Text(kind, style="red")
            if room >= 4 and message:
                message_cell.append(": " + distinguishing(message, patterns or [], room))
            elif len(kind) > widths["pattern"]:
                message_cell = Text(_fit(kind, widths["pattern"], keep_end=True), style="red")
        cells: dict[str, object] = {
            "name": Text(_fit(group.name, widths["name"]), style="bold"),
            "type": type_cell,
            "pattern": message_cell,
            # ``↑``: new, or failed again, since the view opened (the row stays where it is).
            "count": Text(f"↑{group.count:,}", style="bold", justify="right")
            if fresh
            else Text(f"{group.count:,}", justify="right"),
            "retrying": Text(f"{group.retrying:,}" if group.retrying else "-", style="yellow", justify="right"),
            "first": Text(relative(group.first_seen_ms, now), style="dim"),
            "last": Text(relative(group.last_seen_ms, now)),
            "spark": Text(sparkline(group.per_minute, SPARK_WIDTH), style="red"),
        }
        return tuple(cells[key] for key, _label, _width in COLUMNS if key in widths)

    # -- keys --------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MUTATING_ACTIONS and self.session.read_only:
            return None
        if action in ("open_group", "group_act"):
            group = self.cursor_group
            if group is None:
                return None
            if action == "group_act" and parameters and parameters[0] == "retry" and group.failed == 0:
                return None  # every member is still retrying: nothing failed to retry
        return True

    def disabled_reason(self, action: str, parameters: tuple[object, ...]) -> str | None:
        """Why a greyed key did nothing (``disabled_keys``)."""
        if action in ("open_group", "group_act"):
            if self.cursor_group is None:
                return "No error group under the cursor: no job has failed or is retrying."
            if action == "group_act" and parameters and parameters[0] == "retry":
                return "Every job of this group is still retrying: none has failed yet, so none to retry."
        return None

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_group()

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        if self.model.loaded:
            self._show_status()
        self.refresh_bindings()

    def action_open_group(self) -> None:
        group = self.cursor_group
        if group is not None:
            self.app.post_message(ShowErrorGroup(group_query(self.session.query, group)))

    def action_group_act(self, kind: str) -> None:
        group = self.cursor_group
        if group is not None:
            self.app.post_message(ActOnQuery(ActionKind(kind), group_query(self.session.query, group)))

    def action_back(self) -> None:
        self.dismiss(None)


def _fit(text: str, width: int, keep_end: bool = False) -> str:
    """At most ``width`` characters; a qualified type keeps its end (the class name), text its start."""
    if len(text) <= width:
        return text
    return "…" + text[-(width - 1) :] if keep_end else text[: width - 1] + "…"


def _number_widths(groups: list[ErrorGroup], narrow: bool) -> dict[str, int]:
    """Count and retrying as wide as their longest value (with room for the ``↑`` mark) and
    at least their label: a number is never cut."""
    return {
        "count": max(WIDTHS["count"], max((len(f"↑{group.count:,}") for group in groups), default=0)),
        "retrying": max(
            len(NARROW_LABELS["retrying"]) if narrow else WIDTHS["retrying"],
            max((len(f"{group.retrying:,}") for group in groups), default=0),
        ),
    }


def _type_text(group: ErrorGroup, short: bool) -> str:
    """The group's exception type; ``short``: without its module (``ConnectTimeout``)."""
    text = group.error_type or "-"
    return text.rsplit(".", 1)[-1] if short else text


def distinguishing(text: str, others: list[str], width: int) -> str:
    """``text`` in ``width`` characters, showing where it differs from the other groups' messages.

    Two groups whose messages start alike (``POST https://hooks.example.org/a …`` and ``…/b``)
    read the same once cut at the end. When ``text`` does not fit, its start is dropped up to
    the word (or path part) where it parts from the message it shares most with: ``…/b refused``.
    """
    if len(text) <= width:
        return text
    shared = 0
    for other in others:
        if other == text:
            continue
        common = 0
        for a, b in zip(text, other, strict=False):
            if a != b:
                break
            common += 1
        shared = max(shared, common)
    if shared < width // 2:
        return _fit(text, width)  # the differing part already shows at the start
    cut = max(text.rfind(mark, 0, shared) for mark in (" ", "/", ":", "=", ".")) + 1
    cut = cut if cut > 0 else shared
    return _fit("…" + text[cut:], width)

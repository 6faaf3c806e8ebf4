"""Every scheduler instance on the store: registered ones and inferred (Node) owners, live or dead.

Refreshed on a re-armed timer (the next load is armed when one finishes, so loads never
overlap on a slow store). A dead instance (heartbeat older than twice its interval) is
drawn in red with the jobs it still holds; ``x`` releases them now (store-guarded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Static

from ..bindings import MUTATING_ACTIONS, Scope, bindings_for
from ..formatting import span
from ..session import ConsoleSession
from ..session.fleet import FleetView, InstanceRow
from ..widgets.console_footer import ConsoleFooter

if TYPE_CHECKING:
    from ..app import MonqueConsole

REFRESH_EVERY = 2.0
#: What decides an action first (state, heartbeat, jobs held), then counts, then identity.
COLUMNS = (
    "state",
    "id",
    "heartbeat",
    "held",
    "running",
    "processed",
    "failed",
    "rate",
    "names",
    "host",
    "pid",
    "version",
)


def _dim(text: str = "-") -> Text:
    return Text(text, style="dim")


def cells(row: InstanceRow) -> dict[str, Text]:
    info = row.info
    state = Text("✖ DEAD", style="bold red") if row.dead else Text("● alive", style="green")
    kind = " (inferred)" if info.inferred else ""
    names = ", ".join(f"{name}×{concurrency}" for name, concurrency in info.workers.items())

    def number(value: int | None, style: str = "") -> Text:
        return _dim() if value is None else Text(f"{value:,}", style=style, justify="right")

    return {
        "state": state,
        "id": Text.assemble((info.id, "bold"), (kind, "yellow")),
        "host": Text(info.host) if info.host else _dim(),
        "pid": _dim() if info.pid is None else Text(str(info.pid)),
        "version": Text(info.version) if info.version else _dim("node?" if info.inferred else "-"),
        "names": Text(names) if names else _dim(),
        "running": number(info.running),
        "processed": number(info.processed),
        "failed": number(info.failed, "red" if info.failed else ""),
        "heartbeat": _dim("never")
        if row.age_ms is None
        else Text(f"{span(row.age_ms)} ago", style="bold red" if row.dead else "", justify="right"),
        "rate": _dim() if row.rate is None else Text(f"{row.rate:.1f}/s", justify="right"),
        "held": Text(f"{info.jobs_held:,}", style="bold red" if row.dead and info.jobs_held else "", justify="right"),
    }


class WorkersScreen(Screen[None]):
    SCOPES: tuple[Scope, ...] = ("workers", "back", "app")
    BINDINGS = bindings_for("workers", "back")
    DEFAULT_CSS = """
    WorkersScreen #workers-title { background: $primary-background; padding: 0 1; text-style: bold; }
    WorkersScreen DataTable { height: 1fr; }
    """

    def __init__(self, session: ConsoleSession) -> None:
        super().__init__()
        self.session = session
        self.view = FleetView()
        self.rows: dict[str, InstanceRow] = {}
        self.loads = 0
        self._timer: Timer | None = None

    @property
    def console(self) -> MonqueConsole:
        return cast("MonqueConsole", self.app)

    def compose(self) -> ComposeResult:
        yield Static("Workers", id="workers-title")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield ConsoleFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column.upper(), key=column)
        table.focus()
        self.load()

    @work(exclusive=True, group="workers")
    async def load(self) -> None:
        try:
            await self._load()
        except NoMatches:
            pass  # closed while its widgets were being removed: nothing left to show (as in detail.py)

    async def _load(self) -> None:
        monque = self.session.monque
        if monque is None:
            return
        try:
            infos = await monque.instances()
        except Exception as error:  # noqa: BLE001 - shown, then tried again on the next tick
            self.query_one("#workers-title", Static).update(Text(f"Workers — cannot read: {error}", style="red"))
        else:
            self._show(self.view.rows(infos, self.console.clock()))
        self.loads += 1
        if self.console.live and self.is_attached:
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_timer(REFRESH_EVERY, self.load)  # re-armed: never two loads at once

    def _show(self, rows: list[InstanceRow]) -> None:
        table = self.query_one(DataTable)
        self.rows = {row.id: row for row in rows}
        with self.app.batch_update():
            for row in rows:
                values = cells(row)
                if row.id in table.rows:
                    for column, value in values.items():
                        table.update_cell(row.id, column, value)
                else:
                    table.add_row(*(values[c] for c in COLUMNS), key=row.id)
            for key in [k for k in table.rows if k.value not in self.rows]:
                table.remove_row(key)
        dead = [row for row in rows if row.dead]
        title = Text("Workers", style="bold")
        title.append(f" · {len(rows)} instance{'s' if len(rows) != 1 else ''}")
        if dead:
            held = sum(row.info.jobs_held for row in dead)
            title.append(" · ")
            title.append(
                f"{len(dead)} dead holding {held:,} job{'s' if held != 1 else ''} (x releases)", style="bold red"
            )
        if not rows:
            title.append(" · no instance registered and no job claimed", style="dim")
        self.query_one("#workers-title", Static).update(title)
        self.refresh_bindings()

    @property
    def cursor_row(self) -> InstanceRow | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.rows.get(key) if key is not None else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MUTATING_ACTIONS and self.session.read_only:
            return None
        return True

    def action_release_owner(self) -> None:
        row = self.cursor_row
        if row is not None:
            self.console.release_owner(row.id)

    def action_back(self) -> None:
        self.dismiss(None)

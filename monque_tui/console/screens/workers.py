"""Every scheduler instance on the store: registered ones and inferred (Node) owners, live or dead.

Refreshed on a re-armed timer (the next load is armed when one finishes, so loads never
overlap on a slow store). A dead instance (heartbeat older than twice its interval) is
drawn in red with the jobs it still holds; ``x`` releases them now (store-guarded). Owners
of processing jobs missing from the registry (Node workers, likely) are named under the
title with the mixed-fleet rule (``session.fleet.unregistered_owners_note``).
"""

from __future__ import annotations

from rich.text import Text

from ..bindings import Scope, bindings_for
from ..formatting import short_id, span
from ..messages import ReleaseOwner
from ..protocol import ConsoleApp
from ..session import ConsoleSession
from ..session.fleet import FleetView, InstanceRow, unregistered_owners_note
from .table_screen import TableScreen

REFRESH_EVERY = 2.0
#: What decides an action first (state, heartbeat, jobs held), then counts, then identity.
#: By priority: which instance, whether it lives, what it consumes (kept on a narrow screen).
COLUMNS = (
    "state",
    "id",
    "heartbeat",
    "held",
    "running",
    "longest",
    "names",
    "processed",
    "failed",
    "rate",
    "host",
    "pid",
    "version",
)
#: The NAMES cell's length unless ``z`` (wide): one worker of 15 names made it 220 columns,
#: and at 80 columns it pushed HEARTBEAT and HELD, what decides a release, off the screen.
NAMES_WIDTH = 32


def names_text(workers: dict[str, int], limit: int | None) -> str:
    """``a×10, b×4 +3 more``: whole names that fit in ``limit`` characters (all of them when
    ``limit`` is None), then how many more; never a name cut in the middle."""
    parts = [f"{name}×{concurrency}" for name, concurrency in workers.items()]
    whole = ", ".join(parts)
    if limit is None or len(whole) <= limit:
        return whole
    shown: list[str] = []
    for index, part in enumerate(parts):
        rest = len(parts) - index - 1
        tail = f" +{rest} more" if rest else ""
        candidate = ", ".join([*shown, part])
        if len(candidate) + len(tail) > limit and shown:
            break
        shown.append(part)
    more = len(parts) - len(shown)
    return ", ".join(shown) + (f" +{more} more" if more else "")


def _dim(text: str = "-") -> Text:
    return Text(text, style="dim")


def cells(row: InstanceRow, wide: bool = False) -> dict[str, Text]:
    info = row.info
    state = Text("✖ DEAD", style="bold red") if row.dead else Text("● alive", style="green")
    kind = " (inferred)" if info.inferred else ""
    names = names_text(info.workers, None if wide else NAMES_WIDTH)

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
        # Its longest-running job (issue 37: "what is stuck?"): how long, and which (Enter on
        # the jobs view's processing tab, sorted by run time, finds it).
        "longest": _dim()
        if row.longest_ms is None or info.longest_job_id is None
        else Text.assemble((span(row.longest_ms), "bold"), f" {short_id(info.longest_job_id)}"),
    }


class WorkersScreen(TableScreen):
    SCOPES: tuple[Scope, ...] = ("workers", "back", "app")
    BINDINGS = bindings_for("workers", "back")
    ID_PREFIX = "workers"
    HEADING = "Workers"
    ROW_ACTIONS = {"release_owner": "No instance under the cursor: no worker is registered and no job is claimed."}
    COLUMNS = COLUMNS

    def __init__(self, session: ConsoleSession, console: ConsoleApp) -> None:
        super().__init__(session, console)
        self.view = FleetView()
        self.rows: dict[str, InstanceRow] = {}

    async def _load(self) -> None:
        monque = self.session.monque
        if monque is None:
            return
        try:
            infos = await monque.instances()
        except Exception as error:  # noqa: BLE001 - shown, then tried again on the next tick
            self.set_title(Text(f"Workers — cannot read: {error}", style="red"))
        else:
            self._show(self.view.rows(infos, self.console.clock()))
        self._loaded(REFRESH_EVERY)

    def _show(self, rows: list[InstanceRow]) -> None:
        self.rows = {row.id: row for row in rows}
        self.sync_rows({row.id: cells(row, self.wide) for row in rows})
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
        note = unregistered_owners_note(rows)
        if note is not None:
            title.append("\n")
            title.append(note, style="yellow")
        self.set_title(title)

    @property
    def cursor_row(self) -> InstanceRow | None:
        key = self.cursor_key
        return self.rows.get(key) if key is not None else None

    def action_toggle_wide(self) -> None:
        """Every column and every name whole, or back to what fits (``z``, as on the jobs table)."""
        self.wide = not self.wide
        if self.rows:
            self.sync_rows({row.id: cells(row, self.wide) for row in self.rows.values()}, rebuild=True)

    def action_release_owner(self) -> None:
        row = self.cursor_row
        if row is not None:
            self.app.post_message(ReleaseOwner(row.id))

"""Every scheduler instance on the store: registered ones and inferred (Node) owners, live or dead.

Refreshed on a re-armed timer (the next load is armed when one finishes, so loads never
overlap on a slow store). A dead instance (heartbeat older than twice its interval) is
drawn in red with the jobs it still holds; ``x`` releases them now (store-guarded). Owners
of processing jobs missing from the registry (Node workers, likely) are named under the
title with the mixed-fleet rule (``session.fleet.unregistered_owners_note``).
"""

from __future__ import annotations

import math

from rich.text import Text
from textual.widgets import DataTable

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
    "failed attempts",
    "rate",
    "host",
    "pid",
    "version",
)
#: The NAMES cell's length unless ``z`` (wide): one worker of 15 names made it 220 columns,
#: and at 80 columns it pushed HEARTBEAT and HELD, what decides a release, off the screen.
NAMES_WIDTH = 32
#: Dead owners whose release watch the view keeps going (one store read each per refresh).
WATCHED_OWNERS = 8


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
        # The registry's count is as of the last heartbeat (30 s stale: a child running 3 jobs
        # read 0, a dead one kept its last 3; a console probe): a live instance runs what it
        # holds in the store now, a dead one nothing.
        "running": _dim() if row.dead else number(None if info.running is None else info.jobs_held),
        "processed": number(info.processed),
        # Failed attempts since the instance started (retried or not): not the jobs that are
        # failed now (the tabs), nor health's failed attempts in a window (issue 40).
        "failed attempts": number(info.failed, "red" if info.failed else ""),
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


#: Row keys of the supervisor rows (``--processes``): never an instance id, which cannot hold NUL.
GROUP_KEY = "supervisor\0"


def group_cells(supervisor: str, children: list[InstanceRow], wide: bool = False) -> dict[str, Text]:
    """The row heading a supervisor's worker processes: their sums, alive if any child is."""
    alive = [row for row in children if not row.dead]
    workers: dict[str, int] = {}
    for row in children:
        for name, size in row.info.workers.items():
            workers[name] = workers.get(name, 0) + size
    names = names_text(workers, None if wide else NAMES_WIDTH)

    def total(values: list[int | None]) -> Text:
        known = [value for value in values if value is not None]
        return _dim() if not known else Text(f"{sum(known):,}", justify="right")

    rates = [row.rate for row in alive if row.rate is not None]
    running_children = [row for row in children if row.longest_ms is not None and row.info.longest_job_id]
    stuck = max(running_children, key=lambda row: row.longest_ms or 0, default=None)
    hosts = sorted({row.info.host for row in children if row.info.host})
    ages = [row.age_ms for row in children if row.age_ms is not None]
    return {
        # Up and dead instances, not "2/3 up": a killed child's record is another instance
        # beside its restarted slot, not a third slot (a console probe read "3/3", then "2/3").
        "state": Text(
            f"▾ {len(alive)} up" + (f", {len(children) - len(alive)} dead" if len(alive) < len(children) else ""),
            style="green" if len(alive) == len(children) else "yellow",
        ),
        "id": Text.assemble(("supervisor ", "dim"), (supervisor, "bold")),
        "host": Text(", ".join(hosts)) if hosts else _dim(),
        "pid": _dim(),
        "version": _dim(""),
        "names": Text(names) if names else _dim(),
        "running": total([None if row.info.running is None else row.info.jobs_held for row in alive]),
        "processed": total([row.info.processed for row in children]),
        "failed attempts": total([row.info.failed for row in children]),
        "heartbeat": _dim("never") if not ages else Text(f"{span(min(ages))} ago", justify="right"),
        "rate": _dim() if not rates else Text(f"{sum(rates):.1f}/s", justify="right"),
        "held": Text(f"{sum(row.info.jobs_held for row in children):,}", justify="right"),
        # The longest run among its children: the group's "what is stuck?" at a glance.
        "longest": cells(stuck)["longest"] if stuck is not None else _dim(),
    }


def grouped(rows: list[InstanceRow], wide: bool = False) -> dict[str, dict[str, Text]]:
    """Each row's cells by key, in order, the children of one supervisor (``--processes``) under
    a row of its own (``group_cells``), their ids drawn as a tree; every other row as it was."""
    groups: dict[str, list[InstanceRow]] = {}
    for row in rows:
        if row.info.supervisor:
            groups.setdefault(row.info.supervisor, []).append(row)
    shown: dict[str, dict[str, Text]] = {}
    for row in rows:
        supervisor = row.info.supervisor
        if not supervisor:
            shown[row.id] = cells(row, wide)
            continue
        if GROUP_KEY + supervisor in shown:
            continue
        children = groups[supervisor]
        shown[GROUP_KEY + supervisor] = group_cells(supervisor, children, wide)
        for index, child in enumerate(children):
            child_cells = cells(child, wide)
            branch = "└ " if index == len(children) - 1 else "├ "
            child_cells["id"] = Text.assemble((branch, "dim"), child_cells["id"])
            shown[child.id] = child_cells
    return shown


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
        #: Per dead owner holding jobs: seconds its release watch still needs (0: x acts at once).
        self.release_in: dict[str, float] = {}

    async def _load(self) -> None:
        monque = self.session.monque
        if monque is None:
            return
        try:
            infos = await monque.instances()
        except Exception as error:  # noqa: BLE001 - shown, then tried again on the next tick
            self.set_title(Text(f"Workers — cannot read: {error}", style="red"))
        else:
            rows = self.view.rows(infos, self.console.clock())
            self.release_in = await self._watch_dead(rows)
            self._show(rows)
        self._loaded(REFRESH_EVERY)

    async def _watch_dead(self, rows: list[InstanceRow]) -> dict[str, float]:
        """Keep the engine's release watch going on each dead owner holding jobs (one look
        each, no waiting), so ``x`` acts at once once it has run: the watch used to start
        only when ``x`` asked, and took 61 s for a worker silent for 14 minutes (issue 40).
        At most ``WATCHED_OWNERS`` owners; a failed look leaves that owner's countdown out."""
        monque = self.session.monque
        if monque is None or not self.console.live:
            return {}  # not live (snapshots): no watch, whose countdown follows the real clock
        left: dict[str, float] = {}
        for row in [row for row in rows if row.dead and row.info.jobs_held][:WATCHED_OWNERS]:
            try:
                left[row.id] = await monque.watch_owner(row.id)
            except Exception:  # noqa: BLE001 - the countdown is a hint; x watches on its own
                continue
        return left

    def _show(self, rows: list[InstanceRow]) -> None:
        self.rows = {row.id: row for row in rows}
        shown = grouped(rows, self.wide)
        # A child that registers later would be added at the table's end, away from its
        # supervisor: with groups, a changed set of rows is drawn afresh in order.
        table = self.query_one(DataTable)
        regroup = any(key.startswith(GROUP_KEY) for key in shown) and list(shown) != [k.value for k in table.rows]
        self.sync_rows(shown, rebuild=regroup)
        dead = [row for row in rows if row.dead]
        title = Text("Workers", style="bold")
        title.append(f" · {len(rows)} instance{'s' if len(rows) != 1 else ''}")
        supervisors = {row.info.supervisor for row in rows if row.info.supervisor}
        if supervisors:
            title.append(f" · {len(supervisors)} supervisor{'s' if len(supervisors) != 1 else ''} (--processes)")
        if dead:
            held = sum(row.info.jobs_held for row in dead)
            title.append(" · ")
            if held:
                title.append(
                    f"{len(dead)} dead holding {held:,} job{'s' if held != 1 else ''} ({self._release_text(dead)})",
                    style="bold red",
                )
            else:  # "1 dead holding 0 jobs (x releases)" offered a release of nothing (probe finding)
                title.append(f"{len(dead)} dead, holding no jobs", style="yellow")
        if not rows:
            title.append(" · no instance registered and no job claimed", style="dim")
        note = unregistered_owners_note(rows)
        if note is not None:
            title.append("\n")
            title.append(note, style="yellow")
        self.set_title(title)

    def _release_text(self, dead: list[InstanceRow]) -> str:
        """``x releases now`` / ``x releases in 42s``: the watch's countdown (the longest of the
        dead owners'), or plain ``x releases`` before the first look."""
        left = [self.release_in[row.id] for row in dead if row.id in self.release_in]
        if not left:
            return "x releases"
        longest = max(left)
        return "x releases now" if longest <= 0 else f"x releases in {math.ceil(longest)}s, watching"

    @property
    def cursor_row(self) -> InstanceRow | None:
        key = self.cursor_key
        return self.rows.get(key) if key is not None else None

    def action_toggle_wide(self) -> None:
        """Every column and every name whole, or back to what fits (``z``, as on the jobs table)."""
        self.wide = not self.wide
        if self.rows:
            self.sync_rows(grouped(list(self.rows.values()), self.wide), rebuild=True)

    def action_release_owner(self) -> None:
        row = self.cursor_row
        if row is not None:
            self.app.post_message(ReleaseOwner(row.id))
        elif (self.cursor_key or "").startswith(GROUP_KEY):
            self.notify(
                "A supervisor holds no jobs: its worker processes do. Put the cursor on a dead one to release its jobs.",
                severity="warning",
            )

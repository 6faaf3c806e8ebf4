"""One row per job name: counts per status, queue health, consumers, paused names, recurring schedule.

Health comes from ``Monque.queue_health``: due now versus scheduled later, the age of the
oldest due job, completed / failed per minute over the last few minutes, and a 24-hour
sparkline (one bar per hour) of the store's per-minute counters, so a console opened in
the morning shows the night. CONSUMERS counts the live instances of the worker registry
that handle each name and their concurrency; a name with due jobs and none is flagged. ``P`` pauses or resumes the name under the cursor.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from monque_engine import InvalidCronError, JobListFilter, JobStatus, QueueHealth, QueueViewSummary
from monque_engine.cron import describe

from ...common.consumers import consumers_of
from ..actions import wall_clock_ms
from ..bindings import Scope, bindings_for
from ..formatting import STATUS_STYLES, per_minute, span
from ..messages import SessionMessage, ShowJobsNamed, TogglePause
from ..protocol import ConsoleApp
from ..session import ConsoleSession
from ..session.events import JobsChanged
from ..session.fleet import HEALTH_WINDOW_MINUTES, PausedNamesChanged, recent_rate, spark_cells
from .table_screen import TableScreen

RELOAD_EVERY = 2.0
#: Counters reach the store on the workers' heartbeat ticks: re-read health this often anyway.
HEALTH_EVERY = 5.0
#: By priority, left to right: what a narrow screen keeps is what diagnoses a queue (due work,
#: how late it is, who consumes it, failures), then the counts of live work and what comes
#: later with its schedule, then the finished counts and the 24 h sparkline. At 80 columns the
#: health columns were off screen, and WORKERS even at 160 (issue 28); SCHEDULE came last and
#: was dropped whole at 160 (issue 40): it now goes before the finished counts.
COLUMNS = (
    "name",
    "due",
    "oldest due",
    "consumers",
    "failed/m",
    "done/m",
    "pending",
    "processing",
    "failed",
    "later",
    "schedule",
    "completed",
    "cancelled",
    "last 24h",
)


def _names(count: int) -> str:
    return "1 name" if count == 1 else f"{count:,} names"


def consumers_cell(consumers: tuple[int, int] | None, due: int) -> Text:
    """``2 × 10`` (instances × concurrency in all); ``none`` in red when jobs are due and nobody
    consumes them, the most common page at 3 a.m."""
    if consumers is None:
        return Text("⚠ none", style="bold reverse red") if due else Text("none", style="dim")
    count, concurrency = consumers
    return Text(f"{count} × {concurrency}", style="green", justify="right")


class QueuesScreen(TableScreen):
    SCOPES: tuple[Scope, ...] = ("queues", "back", "app")
    BINDINGS = bindings_for("queues", "back")
    ID_PREFIX = "queues"
    HEADING = "Queues"
    ROW_ACTIONS = {
        "open_queue": "No queue under the cursor: the store has no jobs yet.",
        "toggle_name_pause": "No job name under the cursor: the store has no jobs yet (P pauses the row's name).",
    }
    COLUMNS = COLUMNS
    KEEP_BESIDE_FIRST = 3  # due, oldest due, consumers: what says a queue is in trouble

    def __init__(self, session: ConsoleSession, console: ConsoleApp) -> None:
        super().__init__(session, console)
        self._loaded_at = 0.0
        self.health: dict[str, QueueHealth] = {}
        self._oldest_due_ms: dict[str, int] = {}
        self.paused_names: frozenset[str] = frozenset()
        #: Per name: live registered instances handling it, and their concurrency in all.
        self.consumers: dict[str, tuple[int, int]] = {}
        #: Names with due jobs and no live consumer (the title names them).
        self._starved: list[str] = []

    def on_session_message(self, message: SessionMessage) -> None:
        # Counts per name scan the collection: at most once per RELOAD_EVERY seconds on a busy
        # queue, and less often on a big store (``paced``).
        event = message.event
        busy = isinstance(event, JobsChanged) and self.monotonic() - self._loaded_at < self.paced(RELOAD_EVERY)
        paused = isinstance(event, PausedNamesChanged) and frozenset(event.names) != self.paused_names
        if (isinstance(event, JobsChanged) and not busy) or paused:
            self.load()

    async def _load(self) -> None:
        self._loaded_at = self.monotonic()
        monque = self.session.monque
        if monque is None:
            return
        summaries = await monque.get_queue_view_summaries()
        schedules: dict[str, list[str]] = {}
        recurring = JobListFilter(status=[JobStatus.PENDING, JobStatus.PROCESSING], recurring=True)
        page = await monque.get_jobs_with_cursor(limit=1000, filter=recurring, include_data=False)
        for job in page.jobs:
            assert job.repeat_interval is not None
            try:
                words = describe(job.repeat_interval)
            except InvalidCronError:
                words = job.repeat_interval
            named = schedules.setdefault(job.name, [])
            if words not in named:
                named.append(words)
        try:
            health = {h.name: h for h in await monque.queue_health(HEALTH_WINDOW_MINUTES)}
        except Exception as error:  # noqa: BLE001 - the counts still show; health says why it is missing
            health = {}
            self.notify(f"Queue health unavailable: {error}", severity="warning")
        # The oldest due job's instant (latency is its age at the store's now, to the ms; rounded to the
        # second to absorb the call's duration), so its age is judged with the console's clock like the rest.
        fetched = wall_clock_ms()
        self._oldest_due_ms = {
            name: round((fetched - h.latency * 1000) / 1000) * 1000
            for name, h in health.items()
            if h.latency is not None
        }
        try:
            self.consumers = consumers_of(await monque.instances())
        except Exception as error:  # noqa: BLE001 - the counts still show; the column says it is unknown
            self.consumers = {}
            self.notify(f"Worker registry unavailable: {error}", severity="warning")
        self.health = health
        self.paused_names = frozenset(name for name, h in health.items() if h.paused)
        self._show(summaries, schedules)
        self._loaded(HEALTH_EVERY)

    def _health_cells(self, name: str) -> dict[str, Text]:
        health = self.health.get(name)
        oldest_ms = self._oldest_due_ms.get(name)
        if health is None:
            return {c: Text("-", style="dim") for c in ("due", "later", "oldest due", "done/m", "failed/m", "last 24h")}
        now = self.console.clock()
        done, failed = recent_rate(health, now)
        return {
            "due": Text(f"{health.due:,}", style="bold" if health.due else "dim", justify="right"),
            "later": Text(f"{health.scheduled:,}", style="" if health.scheduled else "dim", justify="right"),
            "oldest due": Text("-", style="dim")
            if oldest_ms is None
            else Text(
                span(max(0, now - oldest_ms)), style="bold yellow" if now - oldest_ms > 60_000 else "", justify="right"
            ),
            "done/m": Text(per_minute(done), style="green" if done else "dim", justify="right"),
            "failed/m": Text(per_minute(failed), style="red" if failed else "dim", justify="right"),
            "last 24h": spark_cells(health, now),
        }

    def _show(self, summaries: list[QueueViewSummary], schedules: dict[str, list[str]]) -> None:
        rows: dict[str, dict[str, Text]] = {}
        names = [summary.name for summary in summaries]
        # A paused name with no jobs left is still a row: it can be resumed here.
        extra = [name for name in sorted(self.health) if name not in names]
        by_name = {summary.name: summary for summary in summaries}
        for name in names + extra:
            summary = by_name.get(name)
            stats = summary.stats if summary else None
            title = Text(name, style="bold")
            if name in self.paused_names:
                title.append(" ⏸ paused", style="bold reverse yellow")
            cells = {
                "name": title,
                **{
                    status.value: Text(
                        f"{stats.count(status):,}" if stats else "0",
                        style=STATUS_STYLES[status] if stats and stats.count(status) else "dim",
                        justify="right",
                    )
                    for status in JobStatus
                },
                **self._health_cells(name),
                "schedule": Text(
                    "; ".join(schedules.get(name, [])) or "-", style="cyan" if name in schedules else "dim"
                ),
                "consumers": consumers_cell(
                    self.consumers.get(name), self.health[name].due if name in self.health else 0
                ),
            }
            rows[name] = cells
        self.sync_rows(rows)
        self._starved = sorted(
            name for name in rows if name not in self.consumers and self.health.get(name) and self.health[name].due
        )
        self._retitle()

    def on_resize(self) -> None:
        super().on_resize()
        self._retitle()

    def _retitle(self) -> None:
        """The title on one line: each list in full while the line has room, else its count.
        Long names wrapped it to three lines at 80 columns, pushing the table down (review)."""
        if not self._rows:
            self.set_title(Text("Queues — no jobs in the store and no workers registered", style="bold"))
            return
        starved, paused = self._starved, sorted(self.paused_names)
        starved_in_full = f"  ⚠ due jobs, no live consumer: {', '.join(starved)}" if starved else ""
        starved_counted = f"  ⚠ {_names(len(starved))} due, no live consumer" if starved else ""
        paused_in_full = f"  ⏸ paused: {', '.join(paused)} (P resumes the name under the cursor)" if paused else ""
        paused_counted = f"  ⏸ {_names(len(paused))} paused (P resumes)" if paused else ""
        # The alerts line under the title lists the names with no consumer too: they are the
        # first to go down to a count.
        forms = [
            (starved_in_full, paused_in_full),
            (starved_counted, paused_in_full),
            (starved_counted, paused_counted),
        ]
        room = (self.size.width or 80) - 2
        starved_text, paused_text = next(
            (form for form in forms if len("Queues") + len(form[0]) + len(form[1]) <= room), forms[-1]
        )
        title = Text("Queues", style="bold", no_wrap=True, overflow="ellipsis")
        title.append(starved_text, style="bold red")
        title.append(paused_text, style="yellow")
        self.set_title(title)

    @property
    def cursor_name(self) -> str | None:
        return self.cursor_key

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row (the table takes the key first): the same as the registry's open_queue."""
        event.stop()
        self.action_open_queue()

    def action_open_queue(self) -> None:
        key = self.cursor_name
        if key is not None:
            self.app.post_message(ShowJobsNamed(key))

    def action_toggle_name_pause(self) -> None:
        name = self.cursor_name
        if name is not None:
            self.app.post_message(TogglePause(name))

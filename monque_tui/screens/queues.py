"""One row per job name: counts per status, recurring schedule, and this process's workers."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from monque_engine import InvalidCronError, JobListFilter, JobStatus, QueueViewSummary
from monque_engine.cron import describe

from ..bindings import bindings_for
from ..session import ConsoleSession
from ..session.events import JobsChanged
from ..formatting import STATUS_STYLES

if TYPE_CHECKING:
    from ..app import MonqueConsole, SessionMessage

RELOAD_EVERY = 2.0
COLUMNS = ("name", "pending", "processing", "completed", "failed", "cancelled", "total", "schedule", "workers")


class QueuesScreen(Screen[None]):
    SCOPES = ("queues", "back", "app")
    BINDINGS = bindings_for("queues", "back")
    DEFAULT_CSS = """
    QueuesScreen #queues-title { background: $primary-background; padding: 0 1; text-style: bold; }
    QueuesScreen DataTable { height: 1fr; }
    """

    def __init__(self, session: ConsoleSession) -> None:
        super().__init__()
        self.session = session
        self._loaded_at = 0.0

    @property
    def console(self) -> MonqueConsole:
        return cast("MonqueConsole", self.app)

    def compose(self) -> ComposeResult:
        yield Static("Queues", id="queues-title")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column.upper(), key=column)
        table.focus()
        self.load()

    def on_session_message(self, message: SessionMessage) -> None:
        # Counts per name scan the collection: at most once per RELOAD_EVERY seconds on a busy queue.
        if isinstance(message.event, JobsChanged) and time.monotonic() - self._loaded_at >= RELOAD_EVERY:
            self.load()

    @work(exclusive=True)
    async def load(self) -> None:
        self._loaded_at = time.monotonic()
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
        self._show(summaries, schedules)

    def _show(self, summaries: list[QueueViewSummary], schedules: dict[str, list[str]]) -> None:
        table = self.query_one(DataTable)
        seen: set[str] = set()
        with self.app.batch_update():
            for summary in summaries:
                stats = summary.stats
                worker = summary.worker
                cells = {
                    "name": Text(summary.name, style="bold"),
                    **{status.value: Text(f"{stats.count(status):,}", style=STATUS_STYLES[status] if stats.count(status)
                                          else "dim", justify="right") for status in JobStatus},
                    "total": Text(f"{stats.total:,}", justify="right"),
                    "schedule": Text("; ".join(schedules.get(summary.name, [])) or "-",
                                     style="cyan" if summary.name in schedules else "dim"),
                    "workers": Text(f"{worker.active_count}/{worker.concurrency} active" if worker else "-",
                                    style="green" if worker else "dim"),
                }
                seen.add(summary.name)
                if summary.name in table.rows:
                    for column, value in cells.items():
                        table.update_cell(summary.name, column, value)
                else:
                    table.add_row(*(cells[c] for c in COLUMNS), key=summary.name)
            for key in [k for k in table.rows if k.value not in seen]:
                table.remove_row(key)
        if not summaries:
            self.query_one("#queues-title", Static).update("Queues — no jobs in the store and no workers registered")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row (the table takes the key first): the same as the registry's open_queue."""
        event.stop()
        self.action_open_queue()

    def action_open_queue(self) -> None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if key is not None:
            self.console.show_jobs_named(key)

    def action_back(self) -> None:
        self.dismiss(None)

"""A job in full: every field, payload as JSON, the whole error, owner, heartbeat, schedule."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from monque_engine import InvalidCronError, Job, JobStatus
from monque_engine.cron import describe, next_runs

from ..actions import ActionKind, eligible
from ..bindings import MUTATING_ACTIONS, bindings_for
from ..clock import Clock
from ..session import ConsoleSession
from ..session.events import JobsChanged
from ..session.fleet import owner_is_dead
from ..formatting import STATUS_STYLES, absolute, relative, span
from ..payload import PayloadPages, paginate, size_text

if TYPE_CHECKING:
    from ..app import MonqueConsole, SessionMessage


def _moment(ms: int | None, now: int) -> Text:
    if ms is None:
        return Text("-", style="dim")
    return Text.assemble(absolute(ms), ("  " + relative(ms, now), "dim"))


def job_renderable(job: Job, now: int, payload: PayloadPages | None = None, page: int = 0) -> RenderableType:
    """Every field, the schedule, the error, and one page of the payload (``None``: still being prepared)."""
    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="bold", no_wrap=True)
    fields.add_column()
    fields.add_row("id", job.id)
    fields.add_row("name", Text(job.name, style="bold"))
    fields.add_row("status", Text(job.status.value, style=STATUS_STYLES[job.status]))
    fields.add_row("attempts", f"{job.fail_count} failed" if job.fail_count else "0")
    fields.add_row("unique key", job.unique_key or Text("-", style="dim"))
    due_label = "next run" if job.status in (JobStatus.PENDING, JobStatus.PROCESSING) else "was due"
    fields.add_row(due_label, _moment(job.next_run_at_ms, now))
    fields.add_row("created", _moment(job.created_at_ms, now))
    fields.add_row("updated", _moment(job.updated_at_ms, now))
    if job.status is JobStatus.PROCESSING or job.claimed_by:
        fields.add_row("owner", Text(job.claimed_by or "-", style="magenta"))
        fields.add_row("claimed", _moment(job.locked_at_ms, now))
        if job.last_heartbeat_ms is not None:
            age = now - job.last_heartbeat_ms
            interval = job.heartbeat_interval_ms
            stale = interval is not None and age > 2 * interval
            beat = Text.assemble(absolute(job.last_heartbeat_ms), (f"  {span(age)} old", "bold red" if stale else "dim"))
            if stale:
                beat.append("  stale: the owner may be gone; stale recovery returns it to pending", style="red")
            fields.add_row("heartbeat", beat)
        if owner_is_dead(job, now):  # fleet (issue 13): the owner block
            fields.add_row("owner status", Text(f"dead: {job.claimed_by} stopped beating; x releases its jobs now",
                                                style="bold red"))
        if job.heartbeat_interval_ms is not None:
            fields.add_row("heartbeat every", span(job.heartbeat_interval_ms))
    parts: list[RenderableType] = [fields]
    if job.repeat_interval:
        schedule = Table.grid(padding=(0, 2))
        schedule.add_column(style="bold", no_wrap=True)
        schedule.add_column()
        schedule.add_row("cron", job.repeat_interval)
        try:
            schedule.add_row("runs", describe(job.repeat_interval))
            runs = next_runs(job.repeat_interval, now, 5)
            schedule.add_row("next runs", Text("\n".join(f"{absolute(ms)}  {relative(ms, now)}" for ms in runs)))
        except InvalidCronError as error:
            schedule.add_row("error", Text(str(error), style="red"))
        parts.append(Panel(schedule, title="Schedule", title_align="left", border_style="cyan"))
    if job.fail_reason:
        parts.append(Panel(Text(job.fail_reason, style="red"), title="Error", title_align="left", border_style="red"))
    if payload is None:
        parts.append(Panel(Text("Preparing the payload…", style="dim"), title="Payload", title_align="left",
                           border_style="blue"))
        return Group(*parts)
    title = f"Payload ({size_text(payload.total_chars)})"
    if len(payload) > 1:
        title += f" — page {page + 1:,} of {len(payload):,}: > next, < previous"
    parts.append(Panel(Syntax(payload.page(page), "json", theme="ansi_dark", word_wrap=True,
                              background_color="default"),
                       title=Text(title), title_align="left", border_style="blue"))
    return Group(*parts)


class JobDetailScreen(Screen[None]):
    SCOPES = ("detail", "back", "app")
    BINDINGS = bindings_for("detail", "back")
    DEFAULT_CSS = """
    JobDetailScreen VerticalScroll { padding: 0 1; }
    JobDetailScreen #detail-title { background: $primary-background; padding: 0 1; text-style: bold; }
    """

    def __init__(self, session: ConsoleSession, job_id: str, clock: Clock, row: Job | None = None) -> None:
        """``row``: the job as the table has it (without payload), drawn at once while the store is read."""
        super().__init__()
        self.session = session
        self.job_id = job_id
        self._row = row
        self.job: Job | None = None
        self._clock = clock
        self.payload: PayloadPages | None = None
        self.page = 0

    @property
    def console(self) -> MonqueConsole:
        return cast("MonqueConsole", self.app)

    def compose(self) -> ComposeResult:
        yield Static(f"Job {self.job_id}", id="detail-title", markup=False)
        with VerticalScroll():
            yield Static("Loading…", id="detail-body")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        if self._row is not None:
            self.show(self._row, None)
        self.load()

    @work(exclusive=True)
    async def load(self) -> None:
        job = await self.session.job(self.job_id)
        # A job's payload never changes after it is enqueued: prepare it once.
        if job is not None and self.payload is None:
            self.show(job, None)  # the fields now; the payload when it is ready
            # Dumping a multi-megabyte payload takes long: never on the UI thread.
            self.payload = await asyncio.to_thread(paginate, job.data)
            self.page = min(self.page, len(self.payload) - 1)
        self.show(job, self.payload)

    def show(self, job: Job | None, payload: PayloadPages | None) -> None:
        self.job = job
        body = self.query_one("#detail-body", Static)
        if job is None:
            body.update(Text(f"Job {self.job_id} no longer exists (deleted, or removed by retention).", style="red"))
        else:
            body.update(job_renderable(job, self._clock(), payload, self.page))
            self.query_one("#detail-title", Static).update(
                Text.assemble(f"Job {job.id}  ", (job.name, "bold"), "  ", (job.status.value, STATUS_STYLES[job.status])))
        self.refresh_bindings()

    def action_payload_page(self, step: int) -> None:
        if self.payload is None or self.job is None:
            return
        page = max(0, min(self.page + step, len(self.payload) - 1))
        if page != self.page:
            self.page = page
            self.show(self.job, self.payload)

    def on_session_message(self, message: SessionMessage) -> None:
        event = message.event
        if isinstance(event, JobsChanged) and (event.reload or self.job_id in event.job_ids):
            self.load()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MUTATING_ACTIONS and self.session.read_only:
            return None
        if action == "payload_page":
            return True if self.payload is not None and len(self.payload) > 1 else None
        if action == "release_owner":
            return True if self.job is not None and owner_is_dead(self.job, self._clock()) else None
        if action == "act":
            return True if self.job is not None and eligible(ActionKind(str(parameters[0])), self.job.status) else None
        return True

    def action_act(self, kind: str) -> None:
        if self.job is not None:
            self.console.act_on_jobs(ActionKind(kind), [self.job], marked=False)

    def action_release_owner(self) -> None:
        if self.job is not None and self.job.claimed_by:
            self.console.release_owner(self.job.claimed_by)

    def action_back(self) -> None:
        self.dismiss(None)

"""A job in full: every field, the whole error, the attempt timeline with any attempt's full
traceback, owner, heartbeat, schedule and the payload as JSON.

The timeline is one line per finished attempt (number, outcome, instance, start, duration,
``Type: message``); ``[`` and ``]`` select an attempt, whose traceback is shown in a
read-only text pane (scrollable, selectable with the mouse or shift+arrows, ctrl+c copies a
selection) and ``y`` copies the whole of it. Attempt records are parsed and the traceback
text prepared off the UI thread, as the payload is.

Every widget is handed a bounded piece of the job's text (``longtext``): the engine bounds
what it writes, but a row written by another program may hold a 10 MB failReason or
traceback, and Rich lays out all it is given on the UI thread (minutes for 10 MB). Short
fields show at most ``FIELD_CHARS``, the error at most ``REASON_CHARS`` / ``REASON_LINES``
with a marker saying how much is not shown, and a traceback longer than
``TRACEBACK_PAGE_CHARS`` a page at a time (``}`` / ``{``), as the payload is.
"""

from __future__ import annotations

import asyncio

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Static, TextArea

from monque_engine import Attempt, InvalidCronError, InvalidJobDocumentError, Job, JobStatus
from monque_engine.attempts import MAX_REASON_CHARS
from monque_engine.cron import describe, next_runs
from monque_engine.timeouts import limit_text

from ..actions import ActionKind, key_applies, statuses_for
from ..bindings import MUTATING_ACTIONS, Scope, bindings_for
from ..clock import Clock
from ..formatting import STATUS_STYLES, absolute, relative, span
from ..longtext import TextPages, clip, clip_line, size_text
from ..longtext import paginate as paginate_text
from ..messages import ActOnJobs, ReleaseOwner, SessionMessage
from ..payload import PayloadPages, paginate, readable_json
from ..protocol import ConsoleApp
from ..session import ConsoleSession
from ..session.events import JobsChanged
from ..session.fleet import owner_is_dead
from ..widgets.alerts_line import AlertsLine
from ..widgets.console_footer import ConsoleFooter

#: A short field (id, name, owner, unique key, type, schedule) shows at most this many characters.
FIELD_CHARS = 300
#: The Error panel shows at most this much of failReason: every reason the engine writes
#: whole (``MAX_REASON_CHARS`` and its ``…``); a longer one's head, then how much is not shown.
REASON_CHARS = MAX_REASON_CHARS + 1
REASON_LINES = 100
#: Lines of a handler's result shown in the detail before the rest is summed up.
RESULT_LINES = 40
#: The timeline's message cell never shows more than a line of the terminal.
SUMMARY_CHARS = 500
#: One page of the traceback pane. Every record the engine writes fits on one (type, message
#: and traceback hold at most ~17,000 characters); a longer one is shown a page at a time.
TRACEBACK_PAGE_CHARS = 64_000


def _field(text: str | None, style: str = "") -> Text:
    return Text(clip_line(text, FIELD_CHARS), style=style) if text else Text("-", style="dim")


def _moment(ms: int | None, now: int) -> Text:
    if ms is None:
        return Text("-", style="dim")
    return Text.assemble(absolute(ms), ("  " + relative(ms, now), "dim"))


OUTCOME_STYLES = {
    "completed": "green",
    "retrying": "yellow",
    "failed": "bold red",
    "stale": "magenta",
    "shutdown": "magenta",
    "timed_out": "bold yellow",
    "cancelled": "dim",
}


def attempt_cells(attempt: Attempt, instance: bool = True, started: str = "full") -> tuple[Text, ...]:
    """``#3  retrying  worker-1  2026-01-15 11:47:58  1.27s  KeyError: 'signing_secret'``, as cells.

    ``instance`` False and ``started`` "time" (the clock time only) or "none" leave those
    out, for a narrow terminal (``Timeline``).
    """
    cells = [
        Text(f"#{attempt.number}", style="bold"),
        Text(clip_line(attempt.outcome, 20), style=OUTCOME_STYLES.get(attempt.outcome, "")),
    ]
    if instance:
        cells.append(Text(clip_line(attempt.instance_id or "-", 80) + " ", style="magenta"))
    if started != "none":
        at = absolute(attempt.started_at_ms) if attempt.started_at_ms is not None else "-"
        cells.append(Text(at.split(" ", 1)[-1] if started == "time" else at))
    cells.append(Text(duration_text(attempt.duration_ms), style="dim", justify="right"))
    summary = clip_line(attempt.summary, SUMMARY_CHARS) if attempt.error_type or attempt.error_message else ""
    cells.append(Text(summary, style="red"))
    return tuple(cells)


def duration_text(ms: int | None) -> str:
    """Attempt durations are often short: ``41ms``, ``1.57s``, then ``span``'s coarser units."""
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f}s"
    return span(ms)


def traceback_text(attempt: Attempt) -> str:
    """What the traceback pane shows and ``y`` copies: type and message, then the full traceback."""
    head = attempt.error_type or ""
    if attempt.error_message:
        head = f"{head}: {attempt.error_message}" if head else attempt.error_message
    if not head and not attempt.traceback:
        return f"Attempt {attempt.number} {attempt.outcome}: no error recorded."
    return f"{head}\n\n{attempt.traceback}" if attempt.traceback else f"{head}\n\n(no traceback recorded)"


#: The message column's least width before the timeline drops a column for it.
MESSAGE_MIN = 24


class Timeline:
    """The attempt timeline, oldest first, one line each, the selected one marked.

    Laid out for the width it is drawn at: at 60 columns the full row squeezed every cell to
    an ellipsis ("… retry… worker-1:881:c01d… 2026-01-15 11:45:58.… 1.", probe finding), so
    a narrow terminal drops the start's date, then the instance, then the start, keeping the
    number, outcome, duration and message whole.
    """

    def __init__(self, attempts: tuple[Attempt, ...], selected: int) -> None:
        self.attempts = attempts
        self.selected = selected

    def _layout(self, width: int) -> tuple[bool, str]:
        """(instance shown, start "full" | "time" | "none") for ``width`` cells of panel."""
        for instance, started in ((True, "full"), (True, "time"), (False, "time"), (False, "none")):
            cells = [attempt_cells(a, instance, started)[:-1] for a in self.attempts]
            columns = len(cells[0]) if cells else 0
            fixed = sum(max((c[i].cell_len for c in cells), default=0) for i in range(columns))
            # Marker, the fixed cells, one cell of padding after each column, the panel's borders and padding.
            if 1 + fixed + columns + 1 + 4 + MESSAGE_MIN <= width:
                return instance, started
        return False, "none"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        instance, started = self._layout(options.max_width)
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(no_wrap=True, width=1)
        columns = 3 + int(instance) + int(started != "none")  # number, outcome, [instance], [start], duration
        for _ in range(columns):
            table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        for index, attempt in enumerate(self.attempts):
            chosen = index == self.selected
            table.add_row(
                Text("▶" if chosen else " ", style="bold cyan"),
                *attempt_cells(attempt, instance, started),
                style="on grey23" if chosen else None,
            )
        title = f"Attempts ({len(self.attempts)} kept, oldest first) — [ ] select, y copies the traceback"
        if len(title) + 6 > options.max_width:  # whole words or none: the keys are in the footer and ?
            title = f"Attempts ({len(self.attempts)} kept, oldest first)"
        yield Panel(table, title=Text(title), title_align="left", border_style="yellow")


def timeline_renderable(attempts: tuple[Attempt, ...], selected: int) -> RenderableType:
    """The attempt timeline (``Timeline``), laid out for the width it is drawn at."""
    return Timeline(attempts, selected)


#: How often an open detail redraws its relative times (only when their text changes).
TIMES_EVERY = 1.0


def _plain(renderable: RenderableType, width: int) -> str:
    """The text a renderable draws at ``width`` (to tell whether a redraw would change anything)."""
    console = Console(width=width, no_color=True, force_terminal=False, record=False)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def job_renderable(
    job: Job, now: int, payload: PayloadPages | None = None, page: int = 0, with_payload: bool = True
) -> RenderableType:
    """Every field, the schedule, the error, and one page of the payload (``None``: still being prepared)."""
    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="bold", no_wrap=True)
    fields.add_column()
    fields.add_row("id", _field(job.id))
    fields.add_row("name", _field(job.name, "bold"))
    fields.add_row("status", Text(job.status.value, style=STATUS_STYLES[job.status]))
    # The failure count, named as such: labelled "attempts", a job that had run once and
    # completed read "attempts 0" above a timeline listing its attempt #1 (probe 7).
    fields.add_row("failures", str(job.fail_count))
    fields.add_row("unique key", _field(job.unique_key))
    due_label = "next run" if job.status in (JobStatus.PENDING, JobStatus.PROCESSING) else "was due"
    fields.add_row(due_label, _moment(job.next_run_at_ms, now))
    fields.add_row("created", _moment(job.created_at_ms, now))
    fields.add_row("updated", _moment(job.updated_at_ms, now))
    if job.status is JobStatus.PROCESSING or job.claimed_by:
        fields.add_row("owner", _field(job.claimed_by, "magenta"))
        fields.add_row("claimed", _moment(job.locked_at_ms, now))
        if job.last_heartbeat_ms is not None:
            age = now - job.last_heartbeat_ms
            interval = job.heartbeat_interval_ms
            stale = interval is not None and age > 2 * interval
            beat = Text.assemble(
                absolute(job.last_heartbeat_ms), (f"  {span(age)} old", "bold red" if stale else "dim")
            )
            if stale:
                beat.append("  stale: the owner may be gone; stale recovery returns it to pending", style="red")
            fields.add_row("heartbeat", beat)
        if owner_is_dead(job, now):  # fleet (issue 13): the owner block
            fields.add_row(
                "owner status",
                Text(
                    f"dead: {clip_line(job.claimed_by or '', FIELD_CHARS)} stopped beating; x releases its jobs now",
                    style="bold red",
                ),
            )
        if job.heartbeat_interval_ms is not None:
            fields.add_row("heartbeat every", span(job.heartbeat_interval_ms))
        if job.over_limit and job.locked_at_ms is not None and job.over_limit_at_ms is not None:
            # A sync handler past its time limit (issue 37): its thread cannot be stopped, so
            # the job stays owned until it returns, then the attempt is recorded timed_out.
            fields.add_row(
                "attempt",
                Text.assemble(
                    ("over its time limit, still running", "bold yellow"),
                    (
                        f"  running {span(max(0, now - job.locked_at_ms))}, "
                        f"over for {span(max(0, now - job.over_limit_at_ms))}",
                        "dim",
                    ),
                ),
            )
        if job.stop_pending and job.stop_requested_at_ms is not None:
            # An operator asked to stop this run (issue 37) and its handler has not ended yet
            # (a sync handler polls job.should_stop(); an async one may ignore its cancellation).
            fields.add_row(
                "stop",
                Text.assemble(
                    ("stop requested, handler still running", "bold yellow"),
                    (f"  asked {span(max(0, now - job.stop_requested_at_ms))} ago", "dim"),
                ),
            )
        report = job.running_progress
        if report is not None:
            line = Text.assemble((f"{report.percent}%", "bold cyan"))
            if report.message:
                line.append(f"  {clip_line(report.message, FIELD_CHARS)}")
            line.append(f"  reported {span(max(0, now - report.at_ms))} ago", style="dim")
            fields.add_row("progress", line)
    if job.timeout_ms is not None:
        fields.add_row("time limit", Text.assemble(limit_text(job.timeout_ms), ("  this job's own", "dim")))
    parts: list[RenderableType] = [fields]
    if job.repeat_interval:
        schedule = Table.grid(padding=(0, 2))
        schedule.add_column(style="bold", no_wrap=True)
        schedule.add_column()
        schedule.add_row("cron", _field(job.repeat_interval))
        try:
            schedule.add_row("runs", _field(describe(job.repeat_interval)))
            runs = next_runs(job.repeat_interval, now, 5)
            schedule.add_row("next runs", Text("\n".join(f"{absolute(ms)}  {relative(ms, now)}" for ms in runs)))
        except InvalidCronError as error:
            schedule.add_row("error", _field(str(error), "red"))
        parts.append(Panel(schedule, title="Schedule", title_align="left", border_style="cyan"))
    if job.fail_reason:
        parts.append(Panel(error_renderable(job), title="Error", title_align="left", border_style="red"))
    if job.result is not None:
        parts.append(Panel(result_renderable(job), title="Result", title_align="left", border_style="green"))
    if not with_payload:
        return Group(*parts)
    return Group(*parts, payload_renderable(payload, page))


def error_renderable(job: Job) -> Text:
    """``Type: message``: the head of a long message, then how much is not shown and where it all is."""
    message = clip(job.fail_reason or "", REASON_CHARS, REASON_LINES)
    reason = Text(message.shown, style="red")
    error_type = clip_line(job.error_type, FIELD_CHARS) if job.error_type else ""
    if error_type and not message.shown.startswith(f"{error_type}:"):
        reason = Text.assemble((error_type, "bold red"), ": ", reason)
    if message.hidden_chars:
        reason.append(
            f"\n{message.marker()}: monque-tui export --search {clip_line(job.id, FIELD_CHARS)} writes all of it",
            style="dim italic",
        )
    return reason


def result_renderable(job: Job) -> RenderableType:
    """What the handler returned (issue 38), as indented JSON: the head of a long one, then how
    much is not shown and where it all is (a result is at most 64 KiB of JSON)."""
    text = readable_json(job.result)
    shown = clip(text, REASON_CHARS, RESULT_LINES)
    syntax = Syntax(shown.shown, "json", theme="ansi_dark", word_wrap=True, background_color="default")
    if not shown.hidden_chars:
        return syntax
    more = f"{shown.marker()}: monque-tui export --search {clip_line(job.id, FIELD_CHARS)} writes all of it"
    return Group(syntax, Text(more, style="dim italic"))


def payload_renderable(payload: PayloadPages | None, page: int = 0) -> RenderableType:
    """One page of the payload (``None``: still being prepared)."""
    parts: list[RenderableType] = []
    if payload is None:
        parts.append(
            Panel(Text("Preparing the payload…", style="dim"), title="Payload", title_align="left", border_style="blue")
        )
        return Group(*parts)
    stored = payload.stored_bytes if payload.stored_bytes is not None else payload.total_chars
    title = f"Payload ({size_text(stored)})"
    if len(payload) > 1:
        title += f" — page {page + 1:,} of {len(payload):,}: > next, < previous"
    parts.append(
        Panel(
            Syntax(payload.page(page), "json", theme="ansi_dark", word_wrap=True, background_color="default"),
            title=Text(title),
            title_align="left",
            border_style="blue",
        )
    )
    return Group(*parts)


class JobDetailScreen(Screen[None]):
    SCOPES: tuple[Scope, ...] = ("detail", "back", "app")
    BINDINGS = bindings_for("detail", "back")
    DEFAULT_CSS = """
    JobDetailScreen VerticalScroll { padding: 0 1; }
    JobDetailScreen #detail-title { background: $primary-background; padding: 0 1; text-style: bold; }
    JobDetailScreen #detail-attempts, JobDetailScreen #detail-traceback { display: none; }
    JobDetailScreen #detail-traceback { height: auto; max-height: 20; border: round $error 60%;
                                         border-title-color: $text-error; }
    """

    def __init__(
        self, session: ConsoleSession, console: ConsoleApp, job_id: str, clock: Clock, row: Job | None = None
    ) -> None:
        """``row``: the job as the table has it (without payload), drawn at once while the store is read."""
        super().__init__()
        self.session = session
        self._console_app = console
        self.job_id = job_id
        self._row = row
        self.job: Job | None = None
        self._clock = clock
        self.payload: PayloadPages | None = None
        self.page = 0
        #: The job's attempt records (parsed off the UI thread) and the selected one's index.
        self.attempts: tuple[Attempt, ...] = ()
        self.selected = -1
        #: The traceback text of each attempt (what ``y`` copies) and its pages (what the
        #: pane shows, ``trace_page`` of them), prepared off the UI thread.
        self._tracebacks: tuple[str, ...] = ()
        self._trace_pages: tuple[TextPages, ...] = ()
        self.trace_page = 0
        #: What the styles were computed for when the screen was last suspended (``style_signature``).
        self._styled_for: tuple[object, ...] | None = None
        #: The read found no job (deleted, removed by retention) or the store did not answer:
        #: nothing but Back can act, so the job keys leave the footer and the palette.
        self._gone = False
        #: The stored row cannot be read as a job: only delete works on it.
        self._unreadable = False
        #: The body's text as last drawn by ``_refresh_times`` (redrawn only when it changes),
        #: the (job, second) it was last judged for, and whether the owner was dead then.
        self._times_shown = ""
        self._drawn_for: tuple[int, int] | None = None
        self._owner_dead = False

    @property
    def console(self) -> ConsoleApp:
        """The app, as much of it as screens may use (handed over when built: no cast)."""
        return self._console_app

    def compose(self) -> ComposeResult:
        yield Static(f"Job {clip_line(self.job_id, FIELD_CHARS)}", id="detail-title", markup=False)
        yield AlertsLine(self.session.alerts, self.session.store_state)
        with VerticalScroll():
            yield Static("Loading…", id="detail-body")
            yield Static("", id="detail-attempts")
            yield TextArea("", id="detail-traceback", read_only=True, soft_wrap=False, show_line_numbers=False)
            yield Static("", id="detail-payload")
        yield ConsoleFooter()

    def on_mount(self) -> None:
        self.query_one("#detail-traceback", TextArea).cursor_blink = self.console.live
        if self.console.live:
            self.set_interval(TIMES_EVERY, self._refresh_times)
        self._begin()

    def _refresh_times(self) -> None:
        """Redraw the fields when their ages moved ("1s ago", the heartbeat's age, owner dead).

        A job that did not change kept "created … 1s ago" for as long as its detail was open,
        and a heartbeat that stopped never turned "stale" or offered ``x`` (heartbeats are not
        in the change feed; probe 5). Only while shown, and only when the text would change.
        """
        job = self.job
        if job is None or not self.is_active or self._unreadable:
            return
        now = self._clock()
        drawn_for = (id(job), now // 1000)
        if drawn_for == self._drawn_for:
            return  # same job, same second (a frozen clock never redraws)
        self._drawn_for = drawn_for
        body = job_renderable(job, now, with_payload=False)
        signature = _plain(body, self.query_one("#detail-body", Static).size.width or 80)
        if signature == self._times_shown:
            return
        self._times_shown = signature
        self.query_one("#detail-body", Static).update(body)
        dead = owner_is_dead(job, now)
        if dead != self._owner_dead:
            self._owner_dead = dead
            self.refresh_bindings()  # x follows "owner status: dead"

    def reopen(self, job_id: str, row: Job | None = None) -> None:
        """Show another job on this same screen (the console keeps one detail screen and reuses it).

        Composing and styling the screen, its text area included, was most of the cost of
        opening a detail under load (issue 10); reusing it costs a few ``update`` calls. Every
        per-job field is reset here, so nothing of the previous job can show on the new one.
        """
        self.job_id = job_id
        self._row = row
        self.job = None
        self.payload = None
        self.page = 0
        self.attempts, self.selected, self._tracebacks, self._trace_pages = (), -1, (), ()
        self._gone = self._unreadable = False
        if self.is_mounted:
            self._begin()

    def _begin(self) -> None:
        """Draw what is known at once (the table's row, if any), then read the job in a worker."""
        if not self.job_id:
            return  # no job to show yet
        self._show_history(False)
        pane = self.query_one("#detail-traceback", TextArea)
        if pane.text:
            pane.load_text("")
        self.query_one("#detail-attempts", Static).update("")
        self.query_one(VerticalScroll).scroll_home(animate=False, immediate=True)
        self.query_one("#detail-title", Static).update(f"Job {clip_line(self.job_id, FIELD_CHARS)}")
        if self._row is not None:
            self.show(self._row, None)
        else:
            self.query_one("#detail-body", Static).update("Loading…")
            self.query_one("#detail-payload", Static).update("")
            self.refresh_bindings()
        self.load()

    def on_screen_suspend(self) -> None:
        if self not in self.app.screen_stack:
            self.workers.cancel_all()  # closed (Esc): stop reading a job nobody will see
        self._styled_for = style_signature(self.app)

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """Skip Textual's whole-screen restyle on a reopen when nothing styles depend on changed.

        Textual restyles every node of a pushed screen (``update_node_styles``), which cost
        ~13 ms of each reopen under the soak (py-spy, issue 10), for styles that are the same
        as when the screen was last shown. This handler runs before Textual's own
        (subclass first); a theme, CSS or app-state change since the suspend still restyles.
        """
        if self._styled_for is not None and self._styled_for == style_signature(self.app):
            event.refresh_styles = False
        # Reused closed: the alerts that changed meanwhile reached only the screens in the stack.
        self.query_one(AlertsLine).show(self.session.alerts, self.session.store_state)

    @work(exclusive=True)
    async def load(self) -> None:
        try:
            await self._load()
        except NoMatches:
            pass  # closed while its widgets were being removed: nothing left to show

    async def _load(self) -> None:
        # Every await below may end after the operator closed the screen (Esc while a payload
        # is prepared): its widgets are gone then, so stop instead of updating them. (The
        # soak crashed the console this way: NoMatches on #detail-title after Esc.)
        job_id = self.job_id
        try:
            job = await self.session.job(job_id)
        except InvalidJobDocumentError as error:  # a row damaged by hand: say why, inline
            await self.console.after_key_frame()
            if self._open and job_id == self.job_id:
                self.show_unreadable(error)
            return
        # The key's frame (drawn from the table's row) goes out first; the read refines it next.
        await self.console.after_key_frame()
        if not self._open or job_id != self.job_id:
            return
        # A job's payload never changes after it is enqueued: prepare it once.
        if job is not None:
            # Attempt records are JSON until first used, and a history may hold big tracebacks:
            # parse and format them off the UI thread.
            attempts, tracebacks, pages = await asyncio.to_thread(_prepare_attempts, job)
            if not self._open or job_id != self.job_id:
                return
            self._set_attempts(attempts, tracebacks, pages)
        if job is not None and self.payload is None:
            self.show(job, None)  # the fields now; the payload when it is ready
            # Dumping a multi-megabyte payload takes long: never on the UI thread.
            payload = await asyncio.to_thread(paginate, job.data)
            if not self._open or job_id != self.job_id:
                return
            self.payload = payload
            self.page = min(self.page, len(self.payload) - 1)
        self.show(job, self.payload)

    @property
    def _open(self) -> bool:
        """Still on screen with its widgets (not dismissed, not being removed)."""
        return self.is_attached and not self._closing and self in self.app.screen_stack

    def _set_attempts(
        self, attempts: tuple[Attempt, ...], tracebacks: tuple[str, ...], pages: tuple[TextPages, ...]
    ) -> None:
        known = self.attempts[self.selected].number if 0 <= self.selected < len(self.attempts) else None
        self.attempts, self._tracebacks, self._trace_pages = attempts, tracebacks, pages
        numbers = [attempt.number for attempt in attempts]
        if known in numbers:
            self.selected = numbers.index(known)  # a reload keeps the operator's choice and page
            self.trace_page = min(self.trace_page, len(pages[self.selected]) - 1)
        else:
            self.selected, self.trace_page = _default_attempt(attempts), 0
        self._show_history(bool(attempts))
        self._show_attempt()

    def _show_history(self, shown: bool) -> None:
        """Show or hide the attempt timeline and traceback pane.

        On the two widgets, not as a class on the screen: a screen's class change restyles
        every node of the screen (the footer's keys, the text area), ~15 ms a time under the
        soak, and it toggled on most opens (a finished job has an attempt, a new one has none).
        """
        for widget in (self.query_one("#detail-attempts"), self.query_one("#detail-traceback")):
            if widget.display != shown:
                widget.display = shown

    def _show_attempt(self) -> None:
        if not self.attempts:
            return
        self.query_one("#detail-attempts", Static).update(timeline_renderable(self.attempts, self.selected))
        pane = self.query_one("#detail-traceback", TextArea)
        attempt = self.attempts[self.selected]
        pages = self._trace_pages[self.selected]
        text = pages.page(self.trace_page)
        if pane.text != text:
            pane.load_text(text)
        title = f"Attempt {attempt.number} ({clip_line(attempt.outcome, 20)}): traceback"
        if len(pages) > 1:
            title += (
                f" ({size_text(pages.total_chars)}), page {self.trace_page + 1:,} of {len(pages):,}: "
                "} next, { previous — y copies all of it"
            )
        else:
            title += " — y copies, select to copy part"
        pane.border_title = title
        self.refresh_bindings()

    def action_attempt(self, step: int) -> None:
        if not self.attempts:
            return
        selected = max(0, min(self.selected + step, len(self.attempts) - 1))
        if selected != self.selected:
            self.selected, self.trace_page = selected, 0
            self._show_attempt()

    @property
    def traceback_pages(self) -> int:
        """How many pages the selected attempt's traceback takes in the pane (0: no attempt)."""
        return len(self._trace_pages[self.selected]) if 0 <= self.selected < len(self._trace_pages) else 0

    def action_traceback_page(self, step: int) -> None:
        if not self.traceback_pages:
            return
        page = max(0, min(self.trace_page + step, self.traceback_pages - 1))
        if page != self.trace_page:
            self.trace_page = page
            self._show_attempt()

    def _selected_error(self) -> bool:
        """The selected attempt recorded an error (type, message or traceback) that ``y`` can copy.

        On a completed attempt ``y`` copied "Attempt 1 completed: no error recorded." and
        said "Copied attempt 1's traceback (39 characters)" (probe 7).
        """
        if not 0 <= self.selected < len(self.attempts):
            return False
        attempt = self.attempts[self.selected]
        return bool(attempt.error_type or attempt.error_message or attempt.traceback)

    def action_copy_traceback(self) -> None:
        if self._selected_error() and 0 <= self.selected < len(self._tracebacks):
            text = self._tracebacks[self.selected]
            self.app.copy_to_clipboard(text)
            attempt = self.attempts[self.selected]
            self.notify(f"Copied attempt {attempt.number}'s traceback ({len(text):,} characters).", timeout=3)

    def show(self, job: Job | None, payload: PayloadPages | None) -> None:
        self.job = job
        self._gone = job is None
        self._unreadable = False  # ``show_unreadable`` follows when the read says otherwise
        body = self.query_one("#detail-body", Static)
        if job is None:
            # What was shown of it (history, payload) is no longer the store's: cleared, not left as if current.
            self.payload, self.attempts, self.selected, self._tracebacks, self._trace_pages = None, (), -1, (), ()
            self._show_history(False)
            self.query_one("#detail-payload", Static).update("")
        if job is None and self.session.store_error is not None:  # not gone: the store did not answer
            body.update(
                Text(
                    f"Job {self.job_id} cannot be read: {self.session.store_error}\nEsc goes back; "
                    "the job keys return when the store answers again.",
                    style="red",
                )
            )
        elif job is None:
            body.update(
                Text(
                    f"Job {self.job_id} no longer exists (deleted, or removed by retention).\n"
                    "Nothing can act on it any more: Esc goes back.",
                    style="red",
                )
            )
        else:
            now = self._clock()
            body.update(job_renderable(job, now, with_payload=False))
            self._drawn_for, self._times_shown, self._owner_dead = (id(job), now // 1000), "", owner_is_dead(job, now)
            self.query_one("#detail-payload", Static).update(payload_renderable(payload, self.page))
            self.query_one("#detail-title", Static).update(
                Text.assemble(
                    f"Job {clip_line(job.id, FIELD_CHARS)}  ",
                    (clip_line(job.name, FIELD_CHARS), "bold"),
                    "  ",
                    (job.status.value, STATUS_STYLES[job.status]),
                )
            )
        self.refresh_bindings()

    def show_unreadable(self, error: InvalidJobDocumentError) -> None:
        """The stored job cannot be read as a job (its payload is not JSON, say): the reason
        in place of its fields. The table's row (read without the payload), when there is
        one, stays the job the keys act on, so the operator can still delete it: cancel, retry
        and reschedule read the job first and fail on it, so their keys are withdrawn."""
        self._unreadable = True
        reason = clip(str(error), REASON_CHARS, REASON_LINES)
        text = f"{reason.shown}{' ' + reason.marker() if reason.hidden_chars else ''}"
        self.query_one("#detail-body", Static).update(
            Text(
                f"{text}\nCancel, retry and reschedule need a readable job; d deletes it."
                if self.job is not None
                else text,
                style="red",
            )
        )
        self.query_one("#detail-payload", Static).update("")
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
        # False (hidden), not None (greyed): on a job that is gone or unreadable these keys can
        # never act, so the footer and the palette stop offering them.
        if self._gone and action in JOB_ACTIONS:
            return False
        if self._unreadable and action in JOB_ACTIONS and not (action == "act" and parameters == ("delete",)):
            return False
        if action in MUTATING_ACTIONS and self.session.read_only:
            return None
        if action == "attempt":
            step = int(str(parameters[0]))
            target = self.selected + step
            return True if self.attempts and 0 <= target < len(self.attempts) else None
        if action == "copy_traceback":
            return True if self._selected_error() else None
        if action == "payload_page":
            return True if self.payload is not None and len(self.payload) > 1 else None
        if action == "traceback_page":
            target = self.trace_page + int(str(parameters[0]))
            return True if 0 <= target < self.traceback_pages else None
        if action == "release_owner":
            return True if self.job is not None and owner_is_dead(self.job, self._clock()) else None
        if action == "act":
            return (
                True if self.job is not None and key_applies(ActionKind(str(parameters[0])), self.job.status) else None
            )
        return True

    def disabled_reason(self, action: str, parameters: tuple[object, ...]) -> str | None:
        """Why a greyed key did nothing (``disabled_keys``)."""
        if action == "act" and self.job is not None:
            kind = ActionKind(str(parameters[0]))
            return (
                f"{kind.value.capitalize()} applies to {statuses_for(kind)} jobs; this job is {self.job.status.value}."
            )
        if action == "act":
            return "The job is still being read." if not self._gone else ""
        if action == "release_owner":
            return "x releases the jobs of a dead owner: this job's owner is alive, or it has none."
        if action == "payload_page":
            return "" if self.payload is None else "The payload fits on one page." if len(self.payload) < 2 else ""
        if action == "traceback_page":
            if not self.traceback_pages:
                return "" if self._gone else "This job has no attempts yet."
            return "This traceback fits on one page." if self.traceback_pages < 2 else ""
        if action == "copy_traceback" and self.attempts and 0 <= self.selected < len(self.attempts):
            attempt = self.attempts[self.selected]
            outcome = clip_line(attempt.outcome, 20)
            return f"Attempt {attempt.number} {outcome} without an error: there is no traceback to copy."
        if action in ("attempt", "copy_traceback"):
            return "" if self.attempts else "This job has no attempts yet."
        return None

    def action_act(self, kind: str) -> None:
        if self.job is not None:
            self.app.post_message(ActOnJobs(ActionKind(kind), [self.job], marked=False))

    def action_release_owner(self) -> None:
        if self.job is not None and self.job.claimed_by:
            self.app.post_message(ReleaseOwner(self.job.claimed_by))

    def action_back(self) -> None:
        self.dismiss(None)


#: The keys that act on the job shown (everything of the screen but Back and the app's keys).
JOB_ACTIONS = frozenset({"act", "release_owner", "payload_page", "attempt", "copy_traceback", "traceback_page"})


def style_signature(app: App[object]) -> tuple[object, ...]:
    """Everything a suspended screen's computed styles depend on besides its own nodes.

    The theme, the app's classes and pseudo-classes (dark/light, focus/blur, ansi) and
    Textual's CSS generation counter (bumped by any theme or stylesheet change; read with
    ``getattr`` since it is not public API, the public parts still decide without it).
    """
    return (
        app.theme,
        app.ansi_color,
        app.classes,
        frozenset(app.pseudo_classes),
        getattr(app, "_css_update_count", None),
    )


def _prepare_attempts(job: Job) -> tuple[tuple[Attempt, ...], tuple[str, ...], tuple[TextPages, ...]]:
    """Runs in a thread: the parsed records, each one's traceback text and its pages for the pane."""
    attempts = job.attempts
    texts = tuple(traceback_text(attempt) for attempt in attempts)
    return attempts, texts, tuple(paginate_text(text, TRACEBACK_PAGE_CHARS) for text in texts)


def _default_attempt(attempts: tuple[Attempt, ...]) -> int:
    """The newest attempt with an error (what an operator opens a failed job for), else the newest."""
    for index in range(len(attempts) - 1, -1, -1):
        if attempts[index].error_type or attempts[index].traceback:
            return index
    return len(attempts) - 1

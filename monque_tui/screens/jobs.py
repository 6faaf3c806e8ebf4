"""The main screen: a live, windowed table of jobs with status tabs, filter, marks and actions."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, ParamSpec, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Input

from monque_engine import CursorPage, Job, JobStatus, QueueStats
from monque_engine.job import CursorDirection
from monque_engine.cursor import CursorAnchor, encode_cursor

from ..actions import ActionKind, eligible
from ..bindings import MUTATING_ACTIONS, REGISTRY, bindings_for
from ..feed import ChangeBatch
from ..query import SORT_LABELS, JobQuery
from ..widgets.console_header import ConsoleHeader
from ..widgets.filter_bar import FilterBar
from ..widgets.job_table import JobTable
from ..widgets.status_tabs import StatusTabs
from ..widgets.throughput_graph import ThroughputGraph
from ..window import PAGE_SIZE, JobWindow

if TYPE_CHECKING:
    from ..app import MonqueConsole

P = ParamSpec("P")
#: The keys of the "everything matching the view" actions.
BY_KEY = {key: spec for spec in REGISTRY if spec.action.startswith("act_all(") for key in spec.keys.split(",")}


def _while_mounted(method: Callable[P, None]) -> Callable[P, None]:
    """Calls from the app, feed and workers may land while the screen is being torn down."""

    @functools.wraps(method)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            method(*args, **kwargs)
        except NoMatches:
            pass

    return guarded


def _cursor_for(job: Job, query: JobQuery) -> str:
    """A keyset cursor anchored on a loaded job (the engine encodes it; we only choose the anchor)."""
    sort = query.sort()
    value = None if sort.by == "id" else getattr(job, f"{sort.by}_ms")
    return encode_cursor(CursorAnchor(job.id, value), "forward", sort)


class JobsScreen(Screen[None]):
    SCOPES = ("jobs", "table", "app")
    BINDINGS = bindings_for("jobs")
    DEFAULT_CSS = """
    JobsScreen { layout: vertical; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.query_state = JobQuery()
        self.window = JobWindow(self.query_state)
        self.marks: dict[str, Job] = {}
        self._generation = 0
        self._edges_loading: set[str] = set()
        self.stats: QueueStats | None = None

    @property
    def console(self) -> MonqueConsole:
        return cast("MonqueConsole", self.app)

    def compose(self) -> ComposeResult:
        console = self.console
        header = ConsoleHeader()
        header.store = console.config.url
        header.label = console.config.label
        header.read_only = console.read_only
        yield header
        yield StatusTabs()
        yield ThroughputGraph()
        yield FilterBar(blink=console.live, clock=console.clock)
        yield JobTable(console.clock, self.marks, id="jobs-table")
        yield Footer()

    @property
    def table(self) -> JobTable:
        return self.query_one(JobTable)

    def on_mount(self) -> None:
        self.table.focus()
        self._show_query()

    # -- loading ------------------------------------------------------------------------------------
    @_while_mounted
    def connected(self) -> None:
        """The store is open: show where we are and load the first page."""
        monque = self.console.monque
        assert monque is not None
        self.query_one(ConsoleHeader).store = monque.display_url
        self.load_top(first=True)

    @work(group="names")
    async def load_names(self) -> None:
        monque = self.console.monque
        if monque is not None:
            self.query_one(FilterBar).set_names(await monque.job_names())

    def _new_generation(self) -> int:
        self._generation += 1
        self._edges_loading.clear()
        return self._generation

    async def _fetch_end(self, direction: CursorDirection) -> tuple[JobWindow, CursorPage] | None:
        """The first (forward) or last (backward) page of the view, or None if superseded."""
        monque = self.console.monque
        if monque is None:
            return None
        generation = self._new_generation()
        query = self.query_state
        page = await monque.get_jobs_with_cursor(
            None, limit=PAGE_SIZE, direction=direction, filter=query.list_filter(), sort=query.sort(),
            include_data=False)
        if generation != self._generation:
            return None
        return JobWindow(query), page

    @work(exclusive=True, group="load")
    async def load_top(self, first: bool = False) -> None:
        fetched = await self._fetch_end("forward")
        if fetched is None:
            return
        window, page = fetched
        window.replace(page.jobs, has_before=False, has_after=page.has_next_page)
        self._show(window, to_top=True)
        if not window.rows:
            self.console.first_paint()  # nothing to draw: the empty table is the first paint
        if first:
            # Counts and names scan the collection: start them after the first page, not against it.
            self.console.request_stats()
            self.load_names()

    @work(exclusive=True, group="load")
    async def load_bottom(self) -> None:
        fetched = await self._fetch_end("backward")
        if fetched is None:
            return
        window, page = fetched
        window.replace(page.jobs, has_before=page.has_previous_page, has_after=False)
        self._show(window)
        self.table.move_cursor(len(window) - 1)

    @work(exclusive=True, group="load")
    async def reload_around_cursor(self) -> None:
        """Reload the window around the cursor's job (after a burst, a lost feed, or in polling mode)."""
        monque = self.console.monque
        anchor = self.table.cursor_job
        if monque is None:
            return
        if anchor is None:
            self.load_top()
            return
        generation = self._new_generation()
        query = self.query_state
        cursor = _cursor_for(anchor, query)
        half = PAGE_SIZE // 2
        before = await monque.get_jobs_with_cursor(cursor, half, "backward", query.list_filter(), query.sort(), False)
        after = await monque.get_jobs_with_cursor(cursor, half, "forward", query.list_filter(), query.sort(), False)
        current = await monque.get_job(anchor.id)
        if generation != self._generation:
            return
        middle = [current] if current is not None and query.matches(current) \
            and query.order_key(current) == query.order_key(anchor) else []
        window = JobWindow(query)
        window.replace(before.jobs + middle + after.jobs, before.has_previous_page, after.has_next_page,
                       max(0, self.window.offset + self.table.cursor_row - len(before.jobs)))
        self._refresh_marks(window.rows)
        cursor_id = anchor.id if middle else (after.jobs[0].id if after.jobs else None)
        self._show(window, cursor_id=cursor_id, keep_screen_line=True)

    @work(group="edges")
    async def load_edge(self, edge: str) -> None:
        monque = self.console.monque
        window = self.window
        if monque is None or edge in self._edges_loading or not window.rows:
            return
        self._edges_loading.add(edge)
        generation = self._generation
        query = self.query_state
        try:
            if edge == "after":
                cursor = _cursor_for(window.rows[-1], query)
                page = await monque.get_jobs_with_cursor(cursor, PAGE_SIZE, "forward", query.list_filter(),
                                                         query.sort(), False)
                if generation != self._generation or window is not self.window:
                    return
                window.extend_after(page.jobs, page.has_next_page)
            else:
                cursor = _cursor_for(window.rows[0], query)
                page = await monque.get_jobs_with_cursor(cursor, PAGE_SIZE, "backward", query.list_filter(),
                                                         query.sort(), False)
                if generation != self._generation or window is not self.window:
                    return
                before = len(window)
                window.extend_before(page.jobs, page.has_previous_page)
                self.table.rows_shifted(len(window) - before)
            cut = window.trim(self.table.cursor_row)
            if cut:
                self.table.rows_shifted(-cut)
            self.table.window_changed(self.table.cursor_job.id if self.table.cursor_job else None)
        finally:
            self._edges_loading.discard(edge)

    @_while_mounted
    def _show(self, window: JobWindow, cursor_id: str | None = None, *, to_top: bool = False,
              keep_screen_line: bool = False) -> None:
        table = self.table
        line = table.cursor_row - int(table.scroll_y)
        self.window = window
        table.placeholder = "No jobs match this view." if not window.rows else ""
        table.sort_column = self.query_state.sort_by
        table.descending = self.query_state.descending
        table.show_window(window, cursor_id, to_top=to_top)
        if keep_screen_line:
            table.scroll_to(y=max(0, table.cursor_row - line), animate=False, immediate=True)
        self.refresh_bindings()

    # -- live changes -----------------------------------------------------------------------------------
    @_while_mounted
    def apply_changes(self, batch: ChangeBatch) -> None:
        """Apply one coalesced batch of changes from the feed (inside the app's batch_update)."""
        if batch.reload:
            self.reload_around_cursor()
            return
        for job_id, job in batch.jobs.items():
            if job_id in self.marks:
                if job is None:
                    del self.marks[job_id]
                else:
                    self.marks[job_id] = job
        table = self.table
        cursor = table.cursor_job
        diff = self.window.apply(batch.jobs)
        window = self.window
        if diff and not window.rows and (window.has_before or window.has_after):
            # Every loaded row left the view (e.g. a bulk action on them) but the view goes on:
            # load the rows that are there now instead of claiming nothing matches.
            self.load_top()
            self._marks_changed()
            return
        if diff:
            table.placeholder = "No jobs match this view." if not self.window.rows else ""
            table.window_changed(cursor.id if cursor else None, flash=diff.updated | diff.inserted)
        self._marks_changed()

    def _refresh_marks(self, jobs: list[Job]) -> None:
        for job in jobs:
            if job.id in self.marks:
                self.marks[job.id] = job

    @_while_mounted
    def show_stats(self, stats: QueueStats, matching: int | None) -> None:
        self.stats = stats
        tabs = self.query_one(StatusTabs)
        tabs.stats = stats
        tabs.matching = matching

    @_while_mounted
    def show_throughput(self, completed: list[float], failed: list[float]) -> None:
        self.query_one(ThroughputGraph).show(completed, failed)

    @_while_mounted
    def show_feed(self, state: str, error: str | None) -> None:
        header = self.query_one(ConsoleHeader)
        header.feed = state
        header.feed_error = error

    @_while_mounted
    def _show_query(self) -> None:
        query = self.query_state
        tabs = self.query_one(StatusTabs)
        tabs.active = query.status
        arrow = "↓" if query.descending else "↑"
        tabs.describe = f"{query.describe(self.console.clock())}, sorted by {SORT_LABELS[query.sort_by]} {arrow}"
        tabs.matching = None

    def _set_query(self, query: JobQuery) -> None:
        if query == self.query_state:
            return
        self.query_state = query
        self._show_query()
        self.table.placeholder = "Loading…"
        self.load_top()
        self.console.request_stats()

    # -- keys: view ---------------------------------------------------------------------------------------
    def action_status(self, status: str) -> None:
        self._set_query(self.query_state.with_status(None if status == "all" else JobStatus(status)))

    def action_next_sort(self) -> None:
        self._set_query(self.query_state.next_sort())

    def action_reverse_sort(self) -> None:
        self._set_query(self.query_state.reversed())

    def action_filter(self) -> None:
        self.query_one(FilterBar).open()

    def action_clear_filter(self) -> None:
        bar = self.query_one(FilterBar)
        bar.action_clear()

    @on(FilterBar.Changed)
    def _filter_changed(self, event: FilterBar.Changed) -> None:
        query = replace(self.query_state, name=event.name, search=event.search).with_ranges(event.ranges)
        self._set_query(query)
        if event.done:
            self.table.focus()

    def action_toggle_pause(self) -> None:
        self.console.set_paused(not self.console.paused)
        self.query_one(ConsoleHeader).paused = self.console.paused

    # -- keys: table ----------------------------------------------------------------------------------------
    @on(JobTable.EdgeReached)
    def _edge(self, event: JobTable.EdgeReached) -> None:
        if event.edge == "first":
            self.load_top()
        elif event.edge == "last":
            self.load_bottom()
        else:
            self.load_edge(event.edge)

    @on(JobTable.FirstPaint)
    def _first_paint(self) -> None:
        self.console.first_paint()

    @on(JobTable.CursorMoved)
    def _cursor_moved(self) -> None:
        self.refresh_bindings()

    @on(JobTable.Opened)
    def _opened(self, event: JobTable.Opened) -> None:
        self.console.show_job(event.job.id)

    def action_open_job(self) -> None:
        job = self.table.cursor_job
        if job is not None:
            self.console.show_job(job.id)

    # -- keys: marks ------------------------------------------------------------------------------------------
    def action_toggle_mark(self) -> None:
        job = self.table.cursor_job
        if job is None:
            return
        if job.id in self.marks:
            del self.marks[job.id]
        else:
            self.marks[job.id] = job
        self.table.move_cursor(self.table.cursor_row + 1)
        self._marks_changed()

    def action_mark_loaded(self) -> None:
        for job in self.window.rows:
            self.marks[job.id] = job
        self._marks_changed()

    def action_clear_marks(self) -> None:
        self.marks.clear()
        self._marks_changed()

    @_while_mounted
    def _marks_changed(self) -> None:
        self.query_one(ConsoleHeader).marked = len(self.marks)
        self.table.refresh()
        self.refresh_bindings()

    # -- keys: actions ------------------------------------------------------------------------------------------
    @property
    def targets(self) -> tuple[list[Job], bool]:
        """The marked jobs, or else the cursor's job; and whether they are marks."""
        if self.marks:
            return list(self.marks.values()), True
        job = self.table.cursor_job
        return ([job] if job is not None else []), False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MUTATING_ACTIONS and self.console.read_only:
            return None
        if action == "act":
            jobs, _ = self.targets
            kind = ActionKind(str(parameters[0]))
            return True if any(eligible(kind, job.status) for job in jobs) else None
        if action == "act_all":
            kind = ActionKind(str(parameters[0]))
            query = self.query_state
            if not query.bulk_expressible:
                return None
            if query.status is not None and not eligible(kind, query.status):
                return None
        if action == "clear_filter":
            return self.query_state.has_filter or None
        return True

    def action_act(self, kind: str) -> None:
        jobs, marked = self.targets
        self.console.act_on_jobs(ActionKind(kind), jobs, marked)

    def on_key(self, event: events.Key) -> None:
        """A bulk key greyed out by the view (not by read-only) says why when pressed."""
        spec = BY_KEY.get(event.key)
        if spec is None or self.console.read_only or isinstance(self.focused, Input):
            return
        reason = self.query_state.bulk_blocker
        if reason is not None:
            event.stop()
            self.notify(f"{spec.description} is off for this view. {reason}", severity="warning")

    def action_act_all(self, kind: str) -> None:
        unapplied = self.query_one(FilterBar).unapplied
        if unapplied is not None:
            self.notify(unapplied, severity="warning")
            return
        self.console.act_on_query(ActionKind(kind), self.query_state)

    def action_done(self) -> None:
        """After an action: drop the marks it used."""
        self.marks.clear()
        self._marks_changed()

"""The main screen: a live, windowed table of jobs with status tabs, filter, marks and actions.

Keys become ``ConsoleSession`` calls; ``SessionMessage`` events become widget updates. The
session holds the state (query, window, marks, counts); this screen only draws it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, ParamSpec

from textual import on, work
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.screen import Screen

from monque_engine import Job, JobStatus, QueueStats

from ..actions import ActionKind, instead_keys, key_applies, statuses_for
from ..bindings import MUTATING_ACTIONS, Scope, bindings_for
from ..formatting import plural, short_id
from ..messages import ActOnJobs, ActOnQuery, ExportView, SessionMessage, ShowJob, TogglePause
from ..protocol import ConsoleApp
from ..query import SORT_LABELS, JobQuery
from ..session import ConsoleSession
from ..session.core import LOADING_NOTICE
from ..session.events import (
    Connected,
    FeedChanged,
    MarksChanged,
    QueryChanged,
    QueryFailed,
    SearchProgressed,
    StatsChanged,
    StoreStateChanged,
    WindowChanged,
    WindowExtended,
    WindowLoaded,
)
from ..session.fleet import PausedNamesChanged
from ..session.search import progress_text
from ..widgets.alerts_line import AlertsLine
from ..widgets.console_footer import ConsoleFooter
from ..widgets.console_header import ConsoleHeader
from ..widgets.filter_bar import FilterBar
from ..widgets.job_table import JobTable
from ..widgets.status_tabs import StatusTabs
from ..widgets.throughput_graph import ThroughputGraph
from ..window import JobWindow

P = ParamSpec("P")
#: Seconds a new view may take to load before the previous view's rows leave the table.
STALE_ROWS_AFTER = 0.2
NO_ROWS = "No jobs match this view."
#: Which read in steps the tabs line reports when several run: a bulk count first, then the counts.
_SEARCH_ORDER = ("cancel", "retry", "delete", "mark", "count", "page")
_READS_OF_THE_VIEW = ("mark", "count", "page")
#: Counts this many seconds old say so beside them (they are re-read every second when cheap).
STALE_COUNTS_AFTER = 10.0


def _while_mounted(method: Callable[P, None]) -> Callable[P, None]:
    """Session events may land while the screen is being torn down."""

    @functools.wraps(method)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            method(*args, **kwargs)
        except NoMatches:
            pass

    return guarded


def search_to_show(waiting: dict[str, SearchProgressed]) -> SearchProgressed | None:
    """Which running read the tabs line reports: a bulk key's count first; else the view's
    reads (its count, its page), which run side by side each at its own place, by the one
    furthest behind, so the line never goes back ("900k of 1M", then "800k" once the count
    finished before the page: a console probe on 1M jobs)."""
    first = next((what for what in _SEARCH_ORDER if what in waiting), None)
    if first is None:
        return next(iter(waiting.values()), None)
    if first not in _READS_OF_THE_VIEW:
        return waiting[first]
    return min((waiting[what] for what in _READS_OF_THE_VIEW if what in waiting), key=lambda read: read.read)


class JobsScreen(Screen[None]):
    SCOPES: tuple[Scope, ...] = ("jobs", "table", "app")
    BINDINGS = bindings_for("jobs")
    DEFAULT_CSS = """
    JobsScreen { layout: vertical; }
    """

    def __init__(self, session: ConsoleSession, console: ConsoleApp) -> None:
        super().__init__()
        self.session = session
        self._console_app = console
        self._first_load = True
        self._offered: tuple[bool, ...] = ()
        #: A loaded page waiting for the pending key's frame (``_catch_up``).
        self._waiting: WindowLoaded | None = None
        #: Enter pressed while a new view loads: open the cursor's job once its rows are shown
        #: (tab then Enter at once on a busy store said "still loading" and did nothing).
        self._open_when_loaded: JobQuery | None = None
        #: The exact name of the last counted view and how many jobs it has in all (``_placeholder``).
        self._name_total: tuple[str, int] | None = None
        #: A contains view whose page search was stopped before a row was found, and what its
        #: empty table says (the empty window that follows the stop must not say "no jobs match").
        self._stopped_search: tuple[JobQuery, str] | None = None

    # -- state lives in the session ------------------------------------------------------------------
    @property
    def query_state(self) -> JobQuery:
        return self.session.query

    @property
    def window(self) -> JobWindow:
        return self.session.window

    @property
    def marks(self) -> dict[str, Job]:
        return self.session.marks

    @property
    def stats(self) -> QueueStats | None:
        return self.session.stats

    @property
    def console(self) -> ConsoleApp:
        """The app, as much of it as screens may use (handed over when built: no cast)."""
        return self._console_app

    def compose(self) -> ComposeResult:
        console = self.console
        header = ConsoleHeader()
        header.store = console.config.url
        header.label = console.config.label
        header.read_only = console.read_only
        yield header
        yield AlertsLine(self.session.alerts, self.session.store_state, says_store_state=False)
        yield StatusTabs()
        yield ThroughputGraph()
        yield FilterBar(blink=console.live, clock=console.clock)
        yield JobTable(
            console.clock, self.session.marks, on_cursor=self._follow_cursor, id="jobs-table", ages_move=console.live
        )
        yield ConsoleFooter()

    @property
    def table(self) -> JobTable:
        return self.query_one(JobTable)

    def on_screen_resume(self) -> None:
        # Back from a screen that covered the counts (they are not refreshed meanwhile):
        # fresh ones unless the last count is recent (a palette closing asks nothing).
        self.console.refresh_stats_if_due()

    def on_mount(self) -> None:
        self.table.focus()
        self._show_query(self.session.query)

    # -- loading ------------------------------------------------------------------------------------
    def start(self) -> None:
        """The store is open: load the first page, then the counts and names."""
        self.load("top")

    @work(exclusive=True, group="load")
    async def load(self, where: str) -> None:
        session = self.session
        if where == "top":
            await session.load_top()
        elif where == "bottom":
            await session.load_bottom()
        else:
            await session.reload_around_cursor()
        if self._first_load:
            # Counts and names scan the collection: start them after the first page, not against it.
            self._first_load = False
            if not session.window.rows:
                self.console.first_paint()  # nothing to draw: the empty table is the first paint
            self.console.request_stats()
            self.load_names()

    @work(group="names")
    async def load_names(self) -> None:
        names = await self.session.load_names()
        try:
            self.query_one(FilterBar).set_names(names)
            table = self.table
        except NoMatches:
            return
        if table.window is not None and not table.window.rows and not self.session.loading:
            table.placeholder = self._placeholder(table.window)  # the names may explain it now
            table.refresh()

    def _placeholder(self, window: JobWindow) -> str:
        """What an empty table says: why, when the name filter names no job in the store."""
        if window.rows:
            return ""
        stopped = self._stopped_search
        if stopped is not None and stopped[0] == window.query == self.session.stopped_query:
            return stopped[1]
        if window.query.search:
            return window.query.search_hint() or NO_ROWS
        # Only once the name's own count says it has no job at all: the store's names are read
        # at start, and a name a producer began using since was called unknown (its jobs in
        # another tab). Every view change counts its name anyway; no other read is needed.
        if self._name_total != (window.query.name, 0):
            return NO_ROWS
        return window.query.unknown_name_hint(self.session.names) or NO_ROWS

    @work(group="edges")
    async def load_edge(self, edge: str) -> None:
        await self.session.load_edge(edge)

    def apply_query(self, query: JobQuery) -> None:
        """Show another view (from a key, the filter bar, or the queues screen)."""
        if self.session.set_query(query):
            self._open_when_loaded = None  # an Enter waited for the view it was pressed on
            # The tabs line (tab, sort) at once, in this key's frame: the QueryChanged message
            # would draw it a message later, behind any live flush already queued (issue 10).
            self._show_query(query)
            self.table.placeholder = "Loading…"
            self.load("top")
            # A load that takes a moment (a glob or a sort on a big, busy store): the previous
            # view's rows leave the table instead of standing under the new tabs line.
            self.set_timer(STALE_ROWS_AFTER, self._blank_while_loading)
            # The counts of the new view at once, alongside the page (they once lagged the header by 1-2 s).
            self.console.request_stats()

    def show_query(self, query: JobQuery) -> None:
        """Show exactly ``query`` (the errors view's group), with the filter bar's fields emptied to match."""
        self.query_one(FilterBar).reset_fields()
        self.apply_query(query)

    # -- session events -------------------------------------------------------------------------------
    def on_session_message(self, message: SessionMessage) -> None:
        self._apply(message.event)

    @_while_mounted
    def _apply(self, event: object) -> None:
        """Show one session event: each kind has its ``_show_*`` method (``_SHOWS``); the
        kinds this screen does not show (``JobsChanged``, ``Notice``) are for the app."""
        show = self._SHOWS.get(type(event))
        if show is not None:
            show(self, event)

    def _show_window_loaded(self, event: WindowLoaded) -> None:
        if event.window.rows:
            # The key's own frame first (the tabs line it changed), these rows in the next:
            # drawn together, a whole table of new rows held the key's frame back (issue 10).
            # (An empty window draws at once: it costs nothing, and a QueryFailed follows it.)
            self._waiting = event
            self.console.call_after_key_frame(functools.partial(self._show_loaded, event))
        else:
            self._show_loaded(event)

    def _show_window_extended(self, event: WindowExtended) -> None:
        table = self.table
        if event.window is table.window:
            if event.shifted:
                table.rows_shifted(event.shifted)
            table.window_changed(table.cursor_job.id if table.cursor_job else None)

    def _show_window_changed(self, event: WindowChanged) -> None:
        table = self.table
        if event.window is table.window:
            cursor = self.session.cursor
            table.placeholder = self._placeholder(event.window)
            table.window_changed(cursor.id if cursor else None, flash=set(event.flash))

    def _show_stats(self, event: StatsChanged) -> None:
        table = self.table
        self.query_one(ConsoleHeader).reads = self.session.reads_text()  # the lag moves: with each count
        tabs = self.query_one(StatusTabs)
        tabs.stats = event.stats
        tabs.matching = event.matching
        name = event.query.name
        name_only = not (
            event.query.search or event.query.ranges or event.query.text or event.query.error_group or event.query.data
        )
        if (
            name is not None
            and name_only  # else the counts are the whole view's, not the name's
            and not event.query.name_is_glob
            and self._name_total != (name, event.stats.total)
        ):
            self._name_total = (name, event.stats.total)
            if table.window is not None and not table.window.rows and not self.session.loading:
                table.placeholder = self._placeholder(table.window)  # the count may explain it now
                table.refresh()
        self.show_counts_age()  # fresh counts drop "counts 30s old" now, not at the next tick
        if event.query.name_is_glob and event.query == self.session.query:
            self._show_name_matches(event.query)  # the names were read again with the counts

    def _show_feed(self, event: FeedChanged) -> None:
        header = self.query_one(ConsoleHeader)
        header.feed = event.state
        header.feed_error = event.error

    def _show_marks(self, event: MarksChanged) -> None:
        table = self.table
        header = self.query_one(ConsoleHeader)
        header.marked_all = event.everything
        header.marked = event.marked
        table.all_marked = event.everything
        table.refresh()
        self.refresh_bindings()

    def _show_query_changed(self, event: QueryChanged) -> None:
        self._show_query(event.query)

    def _show_query_failed(self, event: QueryFailed) -> None:
        if event.query == self.session.query:
            table = self.table
            table.placeholder = f"✗ {event.message}"
            table.refresh()
            if event.in_filter:
                self.query_one(FilterBar).show_query_error(event.message)

    def _show_store_state(self, event: StoreStateChanged) -> None:
        header = self.query_one(ConsoleHeader)
        header.store_error = event.error is not None
        header.store_lost = event.lost
        header.store_damaged = event.damaged

    def _show_paused_names(self, event: PausedNamesChanged) -> None:
        self.query_one(ConsoleHeader).paused_names = event.names

    def _show_connected(self, event: Connected) -> None:
        header = self.query_one(ConsoleHeader)
        header.store = event.display_url
        header.worker_names = tuple(event.workers)

    def _show_search(self, event: SearchProgressed) -> None:
        """A "contains" view read in steps: how far it got, in place of the count, and in the
        empty table while no row is found yet; what a stop left."""
        session = self.session
        tabs = self.query_one(StatusTabs)
        table = self.table
        waiting = {running.what: running for running in session.waiting_searches()}
        shown = search_to_show(waiting)
        if shown is None:
            tabs.searching = None
        else:
            doing = "searching" if shown.what in ("count", "page", "mark") else f"counting the jobs to {shown.what}"
            tabs.searching = f"{doing}… {progress_text(shown)} (Esc stops)"
        if "count" in waiting and session.counted_query != session.query:
            tabs.stats = None  # the counts beside it would be the last view's
        rows = table.window is not None and bool(table.window.rows) and table.window.query == session.query
        if event.query != session.query or rows:
            return
        if "page" in waiting:
            table.placeholder = f"Searching… {progress_text(waiting['page'])} (Esc stops)"
            table.refresh()
        elif event.what == "page" and event.stopped:
            text = f"Search stopped after {progress_text(event)}: nothing found so far (Esc again clears the filter)."
            self._stopped_search = (event.query, text)
            table.placeholder = text
            table.refresh()

    #: Session event type -> the method that shows it (exact types: the events are final dataclasses).
    _SHOWS: ClassVar[Mapping[type, Callable[[JobsScreen, Any], None]]] = {
        WindowLoaded: _show_window_loaded,
        WindowExtended: _show_window_extended,
        WindowChanged: _show_window_changed,
        StatsChanged: _show_stats,
        FeedChanged: _show_feed,
        MarksChanged: _show_marks,
        QueryChanged: _show_query_changed,
        QueryFailed: _show_query_failed,
        SearchProgressed: _show_search,
        StoreStateChanged: _show_store_state,
        PausedNamesChanged: _show_paused_names,
        Connected: _show_connected,
    }

    def _catch_up(self) -> None:
        """Show a loaded page still waiting for a key's frame, before a key reads the cursor.

        Between a new view's page arriving (the session no longer "loading") and its rows
        reaching the table (after the pending key's frame, up to 0.25 s), the table still
        held the previous view's rows, or none: Enter pressed then did nothing and said
        nothing (the soak's "1" then Enter, under load; probe 6), and ``c`` took the previous
        view's row. The key needs the rows now, so they are shown now.
        """
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self._show_loaded(waiting)
        # A live change edits the window in place before its WindowChanged message reaches
        # this screen: a key handled in between read the row now at the old index (rows
        # inserted above shift it), so Enter or ``c`` took a neighbour (CI, 41). The session's
        # cursor is the job the operator chose; the table follows it before the key reads.
        cursor, table = self.session.cursor, self.table
        if cursor is not None and table.window is self.session.window:
            shown = table.cursor_job
            if shown is None or shown.id != cursor.id:
                table.window_changed(cursor.id)

    @_while_mounted
    def _show_loaded(self, event: WindowLoaded) -> None:
        if self._waiting is event:
            self._waiting = None
        if event.window is self.table.window:
            return  # already shown (``_catch_up`` ran it before the key's frame)
        if event.window is not self.session.window or event.window.query != self.session.query:
            # A newer window replaced it, or another key changed the view, while it waited for
            # the key's frame: drawing it would only delay that key's frame (issue 10).
            return
        table = self.table
        line = table.cursor_row - int(table.scroll_y)
        table.placeholder = self._placeholder(event.window)
        table.sort_column = event.window.query.sort_by
        table.descending = event.window.query.descending
        table.show_window(event.window, event.cursor_id, to_top=event.at == "top")
        if event.at == "bottom":
            table.move_cursor(len(event.window) - 1)
        elif event.at == "keep":
            table.scroll_to(y=max(0, table.cursor_row - line), animate=False, immediate=True)
        self.refresh_bindings()
        if self._open_when_loaded == event.window.query:
            self._open_when_loaded = None
            self.action_open_job()

    @_while_mounted
    def _blank_while_loading(self) -> None:
        session = self.session
        if session.loading and self.table.window is not None and self.table.window.query != session.query:
            page = next((r for r in session.waiting_searches() if r.what == "page"), None)
            self.table.placeholder = "Loading…" if page is None else f"Searching… {progress_text(page)} (Esc stops)"
            self.table.show_window(JobWindow(session.query))
            self.refresh_bindings()

    def _show_query(self, query: JobQuery) -> None:
        tabs = self.query_one(StatusTabs)
        tabs.active = query.status
        arrow = "↓" if query.descending else "↑"
        tabs.group = (query.group_label or query.error_group) if query.error_group else None
        # Inside a group its name leads the line (``StatusTabs.group``); the rest of the view follows.
        shown = query._replace(error_group=None, status=None) if query.error_group else query
        described = shown.describe(self.console.clock())
        tabs.describe = described.removeprefix("all").lstrip(", ").strip() if query.error_group else described
        tabs.sort_text = f", sorted by {SORT_LABELS[query.sort_by]} {arrow}"
        tabs.matching = None
        self._show_name_matches(query)

    def _show_name_matches(self, query: JobQuery) -> None:
        """A name glob: what it matched ("→ 3 names"), in the tabs line and the filter bar's hint."""
        matched = self.session.matched_names(query)
        bar = self.query_one(FilterBar)
        if matched is None:
            bar.show_name_matches(None, None)
            return
        self.query_one(StatusTabs).describe = (
            query.describe(self.console.clock()) + f" → {plural(len(matched), 'name')}"
        )
        bar.show_name_matches(query.name or "", matched)

    @_while_mounted
    def show_counts_age(self) -> None:
        """Say how old the tabs' counts are once that matters: on a big store they are re-read
        at most every 30 s, and a paused view keeps them; "live" beside them said nothing of it."""
        age = self.session.counts_age
        tabs = self.query_one(StatusTabs)
        # No counts on the tabs (a stopped contains count shows "…"): no age to give either.
        shown = int(age) if age is not None and age >= STALE_COUNTS_AFTER and tabs.stats is not None else None
        tabs.counts_age = shown

    @_while_mounted
    def show_throughput(self) -> None:
        graph = self.query_one(ThroughputGraph)
        completed, failed = self.session.throughput.series(graph.seconds)
        graph.show(completed, failed)

    # -- keys: view ---------------------------------------------------------------------------------------
    def action_status(self, status: str) -> None:
        self.apply_query(self.query_state.with_status(None if status == "all" else JobStatus(status)))

    def action_next_sort(self) -> None:
        self.apply_query(self.query_state.next_sort())

    def action_reverse_sort(self) -> None:
        self.apply_query(self.query_state.reversed())

    def action_filter(self) -> None:
        self.query_one(FilterBar).open()

    def action_clear_filter(self) -> None:
        """Esc: stop a "contains" view's search the operator waits on (its rows found so far
        stay); else clear the filter."""
        if self.session.waiting_searches():
            self.session.stop_search()
            return
        self.query_one(FilterBar).action_clear()

    @on(FilterBar.Changed)
    def _filter_changed(self, event: FilterBar.Changed) -> None:
        self.apply_query(
            self.session.with_filter(
                event.name, event.search, event.ranges, event.text, clear_group=event.cleared, data=event.data
            )
        )
        if event.cleared:
            self.table.focus()  # the bar closed with it

    @on(FilterBar.Left)
    def _filter_left(self, event: FilterBar.Left) -> None:
        event.stop()
        self.table.focus()

    def action_toggle_wide(self) -> None:
        table = self.table
        table.set_wide(not table.wide)
        self.notify(
            "Wide view: every cell whole, ←/→ scroll sideways (z fits the screen again)."
            if table.wide
            else "The table fits the screen again.",
            timeout=3,
        )

    def action_toggle_pause(self) -> None:
        self.console.set_paused(not self.session.paused)
        self.query_one(ConsoleHeader).paused = self.session.paused

    # -- keys: table ----------------------------------------------------------------------------------------
    @on(JobTable.EdgeReached)
    def _edge(self, event: JobTable.EdgeReached) -> None:
        if event.edge == "first":
            self.load("top")
        elif event.edge == "last":
            self.load("bottom")
        else:
            self.load_edge(event.edge)

    @on(JobTable.FirstPaint)
    def _first_paint(self) -> None:
        self.console.first_paint()

    def _follow_cursor(self, job: Job | None, row: int) -> None:
        self.session.cursor = job
        self.session.cursor_row = row

    @on(JobTable.CursorMoved)
    def _cursor_moved(self, event: JobTable.CursorMoved) -> None:
        # Textual rebuilds the whole footer on refresh_bindings: only when what is offered changed
        # (moving with j/k over jobs of one status changes nothing), not on every cursor move.
        jobs, _ = self.session.targets()
        offered = tuple(any(key_applies(kind, job.status) for job in jobs) for kind in ActionKind)
        if offered != self._offered:
            self._offered = offered
            self.refresh_bindings()

    @on(JobTable.Opened)
    def _opened(self, event: JobTable.Opened) -> None:
        self.app.post_message(ShowJob(event.job.id, event.job))

    def action_open_job(self) -> None:
        self._catch_up()
        if self.session.loading:
            # Opened as soon as the view's rows are shown (its first row, or the kept job).
            self._open_when_loaded = self.session.query
            return
        job = self.table.cursor_job
        if job is not None:
            self.app.post_message(ShowJob(job.id, job))

    # -- keys: marks ------------------------------------------------------------------------------------------
    def action_toggle_mark(self) -> None:
        self._catch_up()
        if self.session.loading:
            self.notify(LOADING_NOTICE, severity="warning")
            return
        job = self.table.cursor_job
        if job is None:
            return
        self.session.toggle_mark(job)
        self.table.move_cursor(self.table.cursor_row + 1)

    def action_mark_loaded(self) -> None:
        self.session.mark_loaded()

    def _refuse_unapplied(self) -> bool:
        """Say why and refuse when the filter bar shows a filter the view has not applied.

        Every key that reaches every job of the view (``C`` ``R`` ``D``, ``A``, the marked view's
        ``c`` ``r`` ``d``, ``E``) checks this: an invalid or unapplied payload term or range left the
        view wider than the bar reads (``data.n > 5`` refused, the view still every
        ``orphan.sync``), and ``A`` then ``d`` offered to delete all of them (probe finding).
        """
        unapplied = self.query_one(FilterBar).unapplied
        if unapplied is None:
            return False
        self.notify(unapplied, severity="warning")
        return True

    @work(group="marks")
    async def action_mark_matching(self) -> None:
        if self._refuse_unapplied():
            return
        slow = self.console.say_if_slow("Counting the jobs of this view to mark them all…")
        try:
            await self.session.mark_matching()
        finally:
            slow.stop()

    def action_export(self) -> None:
        if self._refuse_unapplied():
            return
        self.app.post_message(ExportView())

    def action_clear_marks(self) -> None:
        self.session.clear_marks()

    # -- keys: actions ------------------------------------------------------------------------------------------
    @property
    def targets(self) -> tuple[list[Job], bool]:
        """The marked jobs, or else the cursor's job; and whether they are marks."""
        return self.session.targets()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MUTATING_ACTIONS and self.session.read_only:
            return None
        if action == "act" and self.session.marked_view is not None:
            kind = ActionKind(str(parameters[0]))
            status = self.session.marked_view.status
            if kind is ActionKind.RESCHEDULE:
                return None  # no bulk form: reschedule marked rows instead
            return True if status is None or key_applies(kind, status) else None
        if action == "act" and self._waiting is not None:
            return True  # the cursor's row is in a page not yet shown: the key shows it first
        if action == "act":
            jobs, _ = self.targets
            kind = ActionKind(str(parameters[0]))
            return True if any(key_applies(kind, job.status) for job in jobs) else None
        if action == "act_all":
            kind = ActionKind(str(parameters[0]))
            query = self.query_state
            if query.status is not None and not key_applies(kind, query.status):
                return None
        if action == "toggle_name_pause":
            return True if self.query_state.name and not self.query_state.name_is_glob else None
        if action == "clear_filter":
            return self.query_state.has_filter or None
        return True

    def disabled_reason(self, action: str, parameters: tuple[object, ...]) -> str | None:
        """Why a greyed key did nothing (``disabled_keys``): what it applies to, and what is here."""
        if action == "act":
            kind = ActionKind(str(parameters[0]))
            verb = kind.value.capitalize()
            if self.session.marked_view is not None:
                if kind is ActionKind.RESCHEDULE:
                    return "Reschedule works on marked rows, not on all matching (u clears the mark)."
                status = self.session.marked_view.status
                shown = status.value if status is not None else "every"
                return f"{verb} applies to {statuses_for(kind)} jobs; the marked view holds {shown} jobs."
            jobs, marked = self.targets
            if not jobs:
                return LOADING_NOTICE if self.session.loading else "No job under the cursor."
            if marked:
                return f"{verb} applies to {statuses_for(kind)} jobs; none of the {plural(len(jobs), 'marked job')} is."
            job = jobs[0]
            return f"{verb} applies to {statuses_for(kind)} jobs; job {short_id(job.id)} is {job.status.value}."
        if action == "act_all":
            kind = ActionKind(str(parameters[0]))
            status = self.query_state.status
            shown = status.value if status is not None else "every"
            return (
                f"{kind.value.capitalize()} all applies to {statuses_for(kind)} jobs; this view shows {shown} jobs."
                + instead_keys(kind)
            )
        if action == "toggle_name_pause":
            return "P pauses the view's job name: filter by one name first (/ then a name, not a glob)."
        if action == "clear_filter":
            return ""  # Esc with no filter: nothing to say
        return None

    def action_toggle_name_pause(self) -> None:
        if self.query_state.name and not self.query_state.name_is_glob:
            self.app.post_message(TogglePause(self.query_state.name))

    def action_act(self, kind: str) -> None:
        self._catch_up()
        if self.session.marked_view is not None:
            # Every job of the view is marked: one bulk action on the view's filter.
            if kind == ActionKind.RESCHEDULE.value:
                self.notify(
                    "Reschedule works on marked rows, not on all matching (u clears the mark).", severity="warning"
                )
                return
            if self._refuse_unapplied():
                return
            self.app.post_message(ActOnQuery(ActionKind(kind), self.session.marked_view))
            return
        jobs, marked = self.targets
        self.app.post_message(ActOnJobs(ActionKind(kind), jobs, marked))

    def action_act_all(self, kind: str) -> None:
        if self._refuse_unapplied():
            return
        self.app.post_message(ActOnQuery(ActionKind(kind), self.query_state))

"""The console's core, without Textual: the store, what is shown, what is marked, what is live.

``ConsoleSession`` owns the embedded ``Monque``, the query and the marks, the paged window
(with a generation number, so a slow page for an old query never replaces a newer one), the
stats refresh (one at a time, backing off on big stores), the live feed (the engine's
``ResilientWatch``, coalesced by ``ChangeBuffer``) and bulk planning (count, confirm, act
bounded to what was counted). It exposes async methods and emits plain events
(``session.events``); the Textual app turns keys into calls and events into messages.
Everything here can be driven from a plain asyncio test.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from monque_engine import (
    AggregationTimeoutError,
    BulkCount,
    ConnectionError,
    CursorPage,
    InvalidJobDocumentError,
    InvalidJobQueryError,
    Job,
    JobStatus,
    Monque,
    QueueStats,
    ResilientWatch,
    StoreDamagedError,
    StoreLostError,
    WatchEvent,
)
from monque_engine.change_rows import ROW_JOB_ID, ROW_NAME, ROW_OP, ROW_STATUS, ChangeRow
from monque_engine.job import CursorDirection
from monque_engine.store import JobStore, open_store

from ...common.exitcodes import CliError, ExitCode
from ..actions import (
    ActionKind,
    ActionPlan,
    bulk_what,
    count_bulk_in_steps,
    execute,
    instead,
    plan_bulk,
    plan_for_jobs,
    reached_before_failing,
    recount,
)
from ..clock import Clock, system_clock
from ..config import ConsoleConfig
from ..query import JobQuery
from ..window import PAGE_SIZE, JobWindow
from .alerts import AlertsWatch
from .events import (
    Alerts,
    AlertsChanged,
    Connected,
    FeedChanged,
    JobsChanged,
    MarksChanged,
    Notice,
    PausedNamesChanged,
    QueryChanged,
    QueryFailed,
    SearchProgressed,
    SessionEvent,
    StatsChanged,
    StoreStateChanged,
    WindowChanged,
    WindowExtended,
    WindowLoaded,
)
from .feed import ChangeBatch, ChangeBuffer, Throughput
from .fleet import release_owner
from .search import Searches, progress_text

if TYPE_CHECKING:
    from monque_engine.fleet_records import OwnerCheck

#: Counting a big store is a scan of every finished job, so it grows with the store: after a
#: count that took t, the timer waits at least this many t (<= ~3 % of a core). At 10x the soak's
#: counts alone took ~1 point of its 10 % budget after two minutes, and more as the store grew.
#: A changed view (a key, the filter) still counts at once.
STATS_BACKOFF = 30
#: The longest the timer waits between counts, whatever the last one cost. A count's cost is
#: wall time: a console stopped mid-count (ctrl+z, SIGSTOP, a paused VM) for 60 s measured a
#: 60 s count and froze its counts for 30 minutes, under "● live" (probe 6).
STATS_MAX_WAIT = 30.0
#: What the store says about a view it cannot answer (a MongoDB text search over its maxTimeMS,
#: a contains text over 500 characters): shown inline, the console carries on.
QUERY_ERRORS = (AggregationTimeoutError, InvalidJobQueryError)
READ_ONLY_NOTICE = "Read-only console: actions are disabled (started with --read-only)."
#: SQLite page cache per connection for the console (the engine's default is 64 MB): the
#: console reads pages of a busy, growing file, and each connection's cache filled to its
#: cap over a long session (the soak's RSS growth, issue 10). A URL's own cache_mb wins.
CONSOLE_CACHE_MB = 8
#: A flush reads at most this many changed jobs (whole, with their payloads); past it, it
#: reloads the rows around the cursor instead (``PAGE_SIZE`` rows without payloads: the
#: cheaper of the two). Beside a drain of 5,000 jobs/s a flush that came early (timers run
#: late under load, then catch up) held fewer jobs than the buffer's ``MAX_PENDING`` and read
#: ~1,800 jobs to place none of them (issue 40).
MAX_READ = PAGE_SIZE
#: How often the console's SQLite feed looks for other processes' commits (the engine's default
#: is 2 ms, for workers that wake on new jobs). The console applies changes twice a second, so
#: looking 500 times a second only cost CPU: a pull, a transaction and a loop wake-up each (py-spy:
#: more than the UI thread's own work under the soak). 50 ms batches ~25x more rows per pull.
CONSOLE_FEED_INTERVAL_S = 0.05
#: How often the console trims the shared change feed (the engine's default is every 10 s).
#: Every process that opens a file trims its feed, and whoever comes first does the deletes:
#: beside a worker draining 5,000 jobs/s (~15,000 feed rows a second) the console did about
#: half of them, its write thread and checkpointer a third of its CPU (issue 40). A worker
#: trims every 10 s; a console alone adds few rows (its own actions), so once a minute keeps
#: its feed bounded too.
CONSOLE_MAINTENANCE_INTERVAL_S = 60.0


def console_store(url: str) -> str | JobStore:
    """The store for ``url``: for SQLite, a small page cache and a calmer feed, unless the URL
    sets them, and the feed's trim left to the workers (``CONSOLE_MAINTENANCE_INTERVAL_S``)."""
    if not url.lower().startswith("sqlite://"):
        return url
    params = url.partition("?")[2]
    overrides: dict[str, Any] = {}
    if "cache_mb=" not in params:
        overrides["cache_mb"] = CONSOLE_CACHE_MB
    if "feed_interval_ms=" not in params:
        overrides["feed_interval"] = CONSOLE_FEED_INTERVAL_S
    overrides["maintenance_interval"] = CONSOLE_MAINTENANCE_INTERVAL_S
    return open_store(url, **overrides)


class SessionError(Exception):
    """The session cannot start; ``str()`` is one line for the operator, ``code`` the exit code.

    The console exited 1 ("internal error (a bug)") for every one of them, and wrapped an
    ``--app`` failure as "setup failed: CliError: --app …": the store and the app now exit 3
    and 4, as ``--worker`` does (probe finding).
    """

    def __init__(self, message: str, code: int = ExitCode.INTERNAL) -> None:
        super().__init__(message)
        self.code = int(code)


#: A store failure the console already reported is said again only after this long (the timers
#: retry every fraction of a second; one notification per outage is enough).
STORE_ERROR_REPEAT_S = 30.0

_P = ParamSpec("_P")
_R = TypeVar("_R")


#: A key that needs the cursor's job while a new view loads.
LOADING_NOTICE = "The view is still loading: no job under the cursor yet (the rows show when it has loaded)."


def store_unreadable(error: BaseException) -> str:
    """``the store cannot be read (SQLite database jobs.db was deleted …)``: a key's short answer
    during an outage (the "Store error" notice, once per outage, has the whole text)."""
    reason = (" ".join(str(error).split()) or type(error).__name__).split(";")[0]
    if len(reason) > 90:
        reason = reason[:90].rsplit(" ", 1)[0] + " …"
    return f"the store cannot be read ({reason})"


def survives_store_errors(
    default: bool | None,
) -> Callable[[Callable[_P, Awaitable[_R]]], Callable[_P, Awaitable[_R]]]:
    """Turn a store failure (``monque_engine.ConnectionError``) into a notice and ``default``.

    Timers and keys call these methods from Textual; an exception escaping one ends the app
    with a traceback wall. A store that goes away while the console runs (a deleted SQLite
    file, a MongoDB election or outage, a full disk) is an operational state, not a bug:
    the console says so in one line, keeps what it shows, and the next tick tries again.
    """

    def wrap(method: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
        @functools.wraps(method)
        async def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return await method(*args, **kwargs)
            except ConnectionError as error:
                session = args[0]
                assert isinstance(session, ConsoleSession)
                session.store_failed(error)
                return default  # type: ignore[return-value]  # False or None: each method's "nothing done"

        return guarded

    return wrap


class ConsoleSession:
    def __init__(
        self,
        config: ConsoleConfig,
        *,
        clock: Clock = system_clock,
        live: bool = True,
        emit: Callable[[SessionEvent], None] | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self.live = live
        self.read_only = config.read_only
        #: Set by ``run_plan`` when a stop found its job's owner dead (the console offers its release).
        self.offer_release: str | None = None
        self._emit = emit or (lambda event: None)
        self.monque: Monque | None = None
        # what is shown
        self.query = JobQuery()
        self.window = JobWindow(self.query)
        self.generation = 0
        self._edges_loading: set[str] = set()
        #: The job under the table's cursor and its row (the screen reports them).
        self.cursor: Job | None = None
        self.cursor_row = 0
        self.marks: dict[str, Job] = {}
        #: "Mark all matching": every job of this view is marked (a view-level mark, not rows).
        self.marked_view: JobQuery | None = None
        # counts
        self.stats: QueueStats | None = None
        #: Every job name in the store (for Tab completion and to say what a name glob matches).
        self.names: list[str] = []
        self.matching: int | None = None
        self._stats_busy = False
        self._stats_again = False
        self._stats_cost = 0.0
        self._stats_done_at = 0.0
        #: When the shown counts were started (``monotonic``); None before the first.
        self.stats_counted_at: float | None = None
        #: The clock the counts' pacing and age are read on (tests move it).
        self.monotonic: Callable[[], float] = time.monotonic
        #: (count, rows) of the last refresh whose count disagreed with a whole loaded view, and
        #: the last such pair a reload was made for (``_heal_window``).
        self._disagreement: tuple[int, int] | None = None
        self._healed: tuple[int, int] | None = None
        # live
        self.throughput = Throughput(system_clock)
        self.buffer = ChangeBuffer(self.throughput)
        self.watch: ResilientWatch | None = None
        self.feed_state: str = "connecting" if live else "frozen"
        self.feed_error: str | None = None
        self.paused = False
        self._flushing = asyncio.Lock()
        #: The last store failure reported, and when (monotonic); None while the store answers.
        self.store_error: str | None = None
        #: The store's state as last said (``store_failed``): a screen opened meanwhile shows it.
        self.store_state = StoreStateChanged(None)
        self._store_error_at = 0.0
        #: A text view's reads in steps (search.py): stopped when the view changes or on Esc.
        self.searches = Searches(self.emit)
        #: The view whose counts the tabs show (None: none yet).
        self.counted_query: JobQuery | None = None
        #: A text view whose search the operator stopped (Esc): not read again until asked.
        self.stopped_query: JobQuery | None = None
        #: Job names paused in the store (polled with the stats: pauses are not in the job feed).
        self.paused_names: tuple[str, ...] = ()
        #: The alerts line every screen draws (``refresh_alerts``).
        self.alerts_watch = AlertsWatch(STATS_BACKOFF, STATS_MAX_WAIT)
        #: A first page read ahead (``read_ahead_top``) and its view, for the first ``load_top``.
        self._read_ahead: tuple[JobQuery, CursorPage] | None = None

    def emit(self, event: SessionEvent) -> None:
        self._emit(event)

    def store_failed(self, error: BaseException) -> None:
        """Report a store failure once per outage (again after ``STORE_ERROR_REPEAT_S`` or if it changes)."""
        message = " ".join(str(error).split()) or type(error).__name__
        now = time.monotonic()
        if message != self.store_error or now - self._store_error_at >= STORE_ERROR_REPEAT_S:
            # A lost file never comes back in this process: trying again would be a false hope.
            what_next = "q quits" if isinstance(error, StoreLostError) else "the console keeps trying; q quits"
            self.emit(Notice(f"{message} ({what_next})", "error", "Store error"))
            self._store_error_at = now
        if message != self.store_error:
            # The header says so for as long as it lasts: the notice goes after 10 s and the
            # header went on saying "live" over rows the store no longer had (probe finding).
            self.store_state = StoreStateChanged(
                message, lost=isinstance(error, StoreLostError), damaged=isinstance(error, StoreDamagedError)
            )
            # The alerts were read from the store that stopped answering: forgotten, so the
            # first read once it answers again shows its own (the alerts line says the state).
            self.alerts_watch.alerts = Alerts()
            self.emit(self.store_state)
        self.store_error = message
        self.buffer.must_reload()  # changes may be missed meanwhile: reload when the store answers

    def _store_answers(self) -> None:
        if self.store_error is not None:
            self.store_error = None
            self.emit(Notice("The store answers again.", "information", "Store"))
            self.store_state = StoreStateChanged(None)
            self.emit(self.store_state)

    # -- open and close -------------------------------------------------------------------------------
    async def open(self) -> None:
        """Open the store (and start workers and the feed when configured); SessionError on failure."""
        options: dict[str, Any] = dict(self.config.monque_options)
        if not self.config.start_workers:
            # A console that runs no workers only looks: fresh counts, and no stale recovery on open.
            options.setdefault("recover_stale_jobs", False)
        options.setdefault("stats_cache_ttl", 0.5)
        try:
            monque = Monque(console_store(self.config.url), **options)
            await monque.initialize()
        except Exception as error:  # noqa: BLE001 - reported as one line, then exit non-zero
            raise SessionError(f"monque-tui: cannot open {self.config.url}: {error}", ExitCode.STORE) from None
        self.monque = monque
        if self.config.read_preference != "primary":
            setter = getattr(monque.store, "set_display_read_preference", None)
            if setter is None:
                await monque.close()
                raise SessionError(
                    f"monque-tui: --read-preference applies to MongoDB; {self.config.display_url} is not",
                    ExitCode.USAGE,
                )
            setter(self.config.read_preference)
        try:
            if self.config.setup is not None:
                await self.config.setup(monque)
        except CliError as error:  # the --app could not be loaded: its own line and code
            raise SessionError(f"monque-tui: error: {error.message}", error.code) from None
        except Exception as error:  # noqa: BLE001
            raise SessionError(f"monque-tui: setup failed: {type(error).__name__}: {error}", ExitCode.APP) from None
        try:
            if self.config.start_workers:
                await monque.start()
        except Exception as error:  # noqa: BLE001
            raise SessionError(f"monque-tui: cannot start the workers: {type(error).__name__}: {error}") from None
        self.emit(Connected(monque.display_url, tuple(monque.registered_names) if self.config.start_workers else ()))
        if self.live:
            # Without documents: a flush reads the jobs it needs, once each (``_flush``); a pull
            # at a time, as plain rows (``ChangeBuffer.add_rows``).
            self.watch = monque.resilient_watch_rows(self.buffer.add_rows, self._watch_event)
            await self.watch.start()
        else:
            self.emit(FeedChanged("frozen"))

    async def close(self) -> None:
        self.searches.stop()
        watch, self.watch = self.watch, None
        if watch is not None:
            await watch.stop()
        monque, self.monque = self.monque, None
        if monque is not None:
            await monque.close()

    def _watch_event(self, event: WatchEvent) -> None:
        if event.kind in ("history_lost", "error", "fallback"):
            self.buffer.must_reload()  # changes may have been missed: reload what is shown
        error = event.reason if event.kind == "fallback" else (str(event.error) if event.error else None)
        if event.error is not None and event.kind != "fallback":
            error = f"{type(event.error).__name__}: {event.error}"
        self.feed_state = event.state
        self.feed_error = None if event.state == "live" else (error or self.feed_error)
        self.emit(FeedChanged(self.feed_state, self.feed_error))

    @property
    def polling(self) -> bool:
        """No live feed: the view is refreshed by polling."""
        return self.live and self.feed_state in ("fallback", "reconnecting")

    # -- the query ------------------------------------------------------------------------------------
    def set_query(self, query: JobQuery) -> bool:
        """Change what is shown; the caller then loads (``load_top``). False if nothing changed."""
        if query == self.query:
            return False
        self.query = query
        self.matching = None
        self.stopped_query = None
        # The old view's reads in steps stop now (a bulk count included: it counted that view).
        self.searches.stop(keep=lambda running: running.query == query)
        self.emit(QueryChanged(query))
        if self.marked_view is not None:
            self.marked_view = None  # it marked the old view
            self.emit(MarksChanged(len(self.marks)))
        return True

    # -- the window -------------------------------------------------------------------------------------
    def _new_generation(self) -> int:
        self.generation += 1
        self._edges_loading.clear()
        return self.generation

    async def _page(
        self,
        cursor: str | None,
        limit: int,
        direction: CursorDirection,
        query: JobQuery,
        on_rows: Callable[[list[Job]], None] | None = None,
    ) -> CursorPage | None:
        """A page of the view; None when it was a text view's read in steps and that stopped.

        A "contains" view is read in steps (search.py): ``on_rows`` sees the rows found so far."""
        monque = self.monque
        assert monque is not None
        if query.scans:
            steps = monque.get_jobs_in_steps(
                cursor, limit, direction, query.list_filter(), query.sort(), False, step=self.config.scan_step
            )
            last = await self.searches.run(
                "page", query, steps, None if on_rows is None else (lambda progress: on_rows(progress.jobs))
            )
            self._store_answers()
            return None if last is None else last.page
        page = await monque.get_jobs_with_cursor(
            cursor, limit, direction, query.list_filter(), query.sort(), include_data=False
        )
        self._store_answers()  # a listing always reads the store (counts may come from a cache)
        return page

    async def read_ahead_top(self) -> None:
        """Read the view's first page now, for the first ``load_top`` to show at once.

        The launch calls it right after ``open``, before Textual starts (issue 40: launch to
        first rows): the read then no longer waits behind Textual's start-up work on the
        event loop. The change feed is already on (``open``), so what changes after this
        read is applied as every later change is. A text view (read in steps) is not read
        ahead, and a read that fails is left to ``load_top``, which reports it.
        """
        query = self.query
        if self.monque is None or query.scans:
            return
        try:
            page = await self._page(None, PAGE_SIZE, "forward", query)
        except Exception:  # noqa: BLE001 - load_top reads again, and says what went wrong
            return
        if page is not None:
            self._read_ahead = (query, page)

    def _take_read_ahead(self, query: JobQuery, end: str) -> CursorPage | None:
        """The page ``read_ahead_top`` read, once, if it is the one now asked for."""
        ahead, self._read_ahead = self._read_ahead, None
        if ahead is None or end != "top" or ahead[0] != query:
            return None
        return ahead[1]

    @survives_store_errors(False)
    async def load_end(self, end: str = "top") -> bool:
        """Load the first (``top``) or last (``bottom``) page of the view; False if superseded."""
        if self.monque is None:
            return False
        generation = self._new_generation()
        query = self.query
        shown: list[int] = []  # how many rows each partial window showed

        def found_so_far(rows: list[Job]) -> None:
            """A text view's rows as the steps find them, before the page is whole."""
            if generation != self.generation or not rows or (shown and len(rows) == shown[-1]):
                return
            partial = JobWindow(query)
            partial.replace(list(rows), has_before=False, has_after=False)
            self._set_window(partial)
            self.emit(WindowLoaded(partial, at=end if not shown else "keep", cursor_id=self._cursor_id()))
            shown.append(len(rows))

        page = self._take_read_ahead(query, end)
        try:
            if page is None:
                page = await self._page(None, PAGE_SIZE, "forward" if end == "top" else "backward", query, found_so_far)
        except ConnectionError as error:
            if generation == self.generation and self.window.query != query:
                # A new view (a tab, a filter) the store could not answer: the old view's rows
                # stayed under the new tab ("pending" over completed rows; probe 5). Show none,
                # and why; the view loads when the store answers (store_failed asks a reload).
                empty = JobWindow(query)
                self._set_window(empty)
                self.emit(WindowLoaded(empty, at=end))
                self.emit(QueryFailed(f"{store_unreadable(error)}; this view loads when it answers", query, False))
            raise
        except QUERY_ERRORS as error:
            # A MongoDB text search that read too long: show no rows (not the previous view's)
            # and say so where the filter is; the console stays up.
            if generation == self.generation:
                empty = JobWindow(query)
                self._set_window(empty)
                self.emit(WindowLoaded(empty, at=end))
                self.emit(QueryFailed(str(error), query))
            return False
        if generation != self.generation:
            return False
        if page is None:
            if not shown:  # stopped before any row was found: an empty window, not the last view's rows
                empty = JobWindow(query)
                self._set_window(empty)
                self.emit(WindowLoaded(empty, at=end))
            return False
        window = JobWindow(query)
        if end == "top":
            window.replace(page.jobs, has_before=False, has_after=page.has_next_page)
        else:
            window.replace(page.jobs, has_before=page.has_previous_page, has_after=False)
        self._set_window(window)
        self.emit(WindowLoaded(window, at="keep" if shown else end, cursor_id=self._cursor_id() if shown else None))
        return True

    def _cursor_id(self) -> str | None:
        return self.cursor.id if self.cursor is not None else None

    async def load_top(self) -> bool:
        return await self.load_end("top")

    async def load_bottom(self) -> bool:
        return await self.load_end("bottom")

    @survives_store_errors(False)
    async def reload_around_cursor(self) -> bool:
        """Reload the window around the cursor's job (after a burst, a lost feed, or when polling)."""
        monque, anchor = self.monque, self.cursor
        if monque is None or (self.query.scans and self.stopped_query == self.query):
            return False  # the operator stopped this text view's reading: only a key reads it again
        if anchor is None:
            return await self.load_top()
        generation = self._new_generation()
        query = self.query
        cursor = monque.cursor_at(anchor, query.sort())
        half = PAGE_SIZE // 2
        try:
            before = await self._page(cursor, half, "backward", query)
            after = await self._page(cursor, half, "forward", query) if before is not None else None
        except QUERY_ERRORS as error:
            if generation == self.generation:
                self.emit(QueryFailed(str(error), query))
            return False
        if before is None or after is None:
            return False  # a text view's read was stopped
        try:
            current = await monque.get_job(anchor.id)
        except InvalidJobDocumentError:
            current = None  # damaged since it was listed: the window is drawn without it
        if generation != self.generation:
            return False
        middle = (
            [current]
            if current is not None and query.matches(current) and query.order_key(current) == query.order_key(anchor)
            else []
        )
        window = JobWindow(query)
        window.replace(
            before.jobs + middle + after.jobs,
            before.has_previous_page,
            after.has_next_page,
            max(0, self.window.offset + self.cursor_row - len(before.jobs)) if self.window.offset_known else None,
        )
        for job in window.rows:
            if job.id in self.marks:
                self.marks[job.id] = job
        self._set_window(window)
        cursor_id = anchor.id if middle else (after.jobs[0].id if after.jobs else None)
        self.emit(WindowLoaded(window, cursor_id=cursor_id, at="keep"))
        return True

    @survives_store_errors(False)
    async def load_edge(self, edge: str) -> bool:
        """Extend the window at an edge (``before`` / ``after``) and trim it around the cursor."""
        monque, window = self.monque, self.window
        if monque is None or edge in self._edges_loading or not window.rows:
            return False
        if (edge == "after" and not window.has_after) or (edge == "before" and not window.has_before):
            return False
        self._edges_loading.add(edge)
        generation = self.generation
        query = self.query
        try:
            return await self._extend(edge, generation, window, query)
        except QUERY_ERRORS as error:
            if generation == self.generation:
                self.emit(QueryFailed(str(error), query))
            return False
        finally:
            self._edges_loading.discard(edge)

    async def _extend(self, edge: str, generation: int, window: JobWindow, query: JobQuery) -> bool:
        monque = self.monque
        assert monque is not None
        if edge == "after":
            page = await self._page(monque.cursor_at(window.rows[-1], query.sort()), PAGE_SIZE, "forward", query)
            if page is None or generation != self.generation or window is not self.window:
                return False
            window.extend_after(page.jobs, page.has_next_page)
            shifted = 0
        else:
            page = await self._page(monque.cursor_at(window.rows[0], query.sort()), PAGE_SIZE, "backward", query)
            if page is None or generation != self.generation or window is not self.window:
                return False
            size = len(window)
            window.extend_before(page.jobs, page.has_previous_page)
            shifted = len(window) - size
        cut = window.trim(self.cursor_row + shifted)
        self.emit(WindowExtended(window, shifted - cut))
        return True

    def _set_window(self, window: JobWindow) -> None:
        self.window = window

    # -- live changes -----------------------------------------------------------------------------------
    @survives_store_errors(None)
    async def flush(self) -> None:
        """Apply what the feed delivered since the last flush (a few times a second; not while paused)."""
        if self.paused or not self.live:
            return
        async with self._flushing:  # a resume's flush and the timer's: one at a time, in order
            await self._flush()

    async def _flush(self) -> None:
        batch = self.buffer.take()
        undecided = self.throughput.undecided
        if not batch and not undecided:
            return
        window = self.window
        read = self._to_read(batch)
        if len(read) > MAX_READ:
            # Reading them costs more than reloading the rows around the cursor: reload.
            read = set()
            batch.changes.clear()
            batch.reload = True
        jobs = await self._read_jobs([*read, *undecided])
        if self.window is not window:
            # A new view loaded meanwhile: what it may show, by its own query.
            more = self._to_read(batch) - read
            jobs.update(await self._read_jobs(more))
            read |= more
        self.throughput.settle(jobs)
        if not batch:
            return
        self.emit(JobsChanged(frozenset(batch.changes), batch.reload))
        if batch.reload:
            await self.reload_around_cursor()
            await self.refresh_stats_if_due()
            return
        # The jobs as read now (None: gone since), and the deleted ones.
        changed: dict[str, Job | None] = {job_id: jobs.get(job_id) for job_id in read}
        changed.update((job_id, None) for job_id, change in batch.changes.items() if change[ROW_OP] == "delete")
        marks_changed = False
        for job_id, job in changed.items():
            if job_id in self.marks:
                marks_changed = True
                if job is None:
                    del self.marks[job_id]
                else:
                    self.marks[job_id] = job
        window = self.window
        diff = window.apply(changed)
        if len(window) > window.capacity:
            # New jobs keep arriving inside the window (at the top of a newest-first view): keep it
            # bounded around the cursor's job, or it grows by the producer's rate forever.
            cursor = self.cursor
            around = window.position(cursor.id) if cursor is not None else None
            window.trim(self.cursor_row if around is None else around)
        if marks_changed:
            self.emit(MarksChanged(len(self.marks)))
        if diff and not window.rows and (window.has_before or window.has_after):
            # Every loaded row left the view (e.g. a bulk action on them) but the view goes on:
            # load the rows that are there now instead of claiming nothing matches.
            await self.load_top()
        elif diff:
            self.emit(WindowChanged(window, diff, frozenset(diff.updated | diff.inserted)))

    def _to_read(self, batch: ChangeBatch) -> set[str]:
        return {
            job_id for job_id, change in batch.changes.items() if change[ROW_OP] != "delete" and self._may_show(change)
        }

    async def _read_jobs(self, job_ids: Collection[str]) -> dict[str, Job]:
        monque = self.monque
        return await monque.get_jobs_by_id(job_ids) if monque is not None and job_ids else {}

    def _may_show(self, change: ChangeRow) -> bool:
        """Whether a changed job needs reading: it is shown or marked, or the view may show it
        by the status and name its change reported (a processing job never enters "completed")."""
        job_id = change[ROW_JOB_ID]
        if job_id in self.marks or job_id in self.window.index:
            return True
        query = self.window.query
        status, name = change[ROW_STATUS], change[ROW_NAME]
        if query.status is not None and status is not None and status != query.status.value:
            return False
        return query.name is None or name is None or query.name_matches(name)

    @survives_store_errors(None)
    async def poll(self) -> None:
        """Without a live feed: reload the window and the counts."""
        if self.polling and not self.paused:
            await self.reload_around_cursor()
            await self.refresh_stats()

    def set_paused(self, paused: bool) -> None:
        self.paused = paused

    # -- counts -------------------------------------------------------------------------------------------
    @property
    def counts_age(self) -> float | None:
        """Seconds since the shown counts were taken (None: none yet). On a big store they are
        re-read at most every ``STATS_MAX_WAIT``, and not while the view is paused."""
        if self.stats_counted_at is None:
            return None
        return max(0.0, self.monotonic() - self.stats_counted_at)

    async def refresh_stats_if_due(self) -> None:
        """Timer refresh, backing off on big stores: wait ``STATS_BACKOFF`` times what the last count
        cost, at most ``STATS_MAX_WAIT``. Not for a text view whose search the operator stopped."""
        if self.stopped_query is not None and self.stopped_query == self.query:
            return
        if self.monotonic() - self._stats_done_at >= min(STATS_MAX_WAIT, STATS_BACKOFF * self._stats_cost):
            await self.refresh_stats()

    def reads_text(self) -> str | None:
        """The header's word on where counts and listings come from, when not the primary:
        a secondary, and how far behind it is estimated to be (None: the primary)."""
        store = self.monque.store if self.monque is not None else None
        if store is None or store.display_read_preference == "primary":
            return None
        staleness = store.display_staleness_s()
        if staleness is None:
            return "reads: primary (no secondary up)"
        return f"reads: secondary, ~{staleness:.0f} s behind"

    @survives_store_errors(None)
    async def refresh_stats(self) -> None:
        """Refresh counts; never two refreshes at once, and one more if asked meanwhile (not
        for a text view whose search the operator stopped: only a new view reads it again)."""
        if self.monque is None or (self.paused and self.stats is not None):
            return
        if self._stats_busy:
            self._stats_again = True
            return
        self._stats_busy = True
        try:
            while True:
                self._stats_again = False
                started = self.monotonic()
                monque = self.monque
                if monque is None:
                    return
                query = self.query
                if query.scans and self.stopped_query == query:
                    # The operator stopped this view's search (Esc): no refresh reads it again,
                    # not the one queued while it ran, nor polling's or a resume's (docs/console.md).
                    return
                if query.search or query.ranges or query.text or query.error_group or query.data:
                    # The tabs stand beside this view: each counts the view's jobs of its status
                    # (they once followed the name alone, so beside "in error group …" the
                    # tabs read as the group's and were the whole store's).
                    try:
                        viewed = await self._view_stats(monque, query)
                    except QUERY_ERRORS as error:
                        if query == self.query:
                            self.emit(QueryFailed(str(error), query))
                        return
                    if viewed is None:  # a text view's count in steps, stopped (Esc, or the view changed)
                        if not self._stats_again:
                            return
                        continue
                    stats = viewed
                elif query.name_is_glob:
                    # The counts of every name the glob matches (each an indexed count), summed.
                    await self.load_names()
                    stats = sum_stats([await monque.get_queue_stats(n) for n in self.matched_names(query) or ()])
                else:
                    stats = await monque.get_queue_stats(query.name)
                matching: int | None = stats.total if query.status is None else stats.count(query.status)
                if query.is_empty:
                    matching = None
                if query == self.query:
                    self.stats, self.matching = stats, matching
                    self.counted_query = query
                    self.stats_counted_at = started
                    self.emit(StatsChanged(stats, matching, query))
                    if self.marked_view == query:
                        # "all N matching marked" follows the view's count like the tabs do: it
                        # stayed at the count taken when A was pressed (probe 5).
                        self.emit(MarksChanged(stats.total if matching is None else matching, everything=True))
                    await self._heal_window(stats.total if matching is None else matching)
                self._stats_done_at = self.monotonic()
                self._stats_cost = self._stats_done_at - started
                if not self._stats_again:
                    return
        finally:
            self._stats_busy = False

    async def _view_stats(self, monque: Monque, query: JobQuery) -> QueueStats | None:
        """Per-status counts of every job the view's filter matches, its status aside; None
        when that was a text view's count in steps and it was stopped.

        A "contains" view counts every status in one read in steps (five counts read the
        whole store five times: 56 s at 10M jobs). An error group holds only failed jobs and
        pending ones with a failure behind them: the other statuses are zero without asking."""
        counts = {status: 0 for status in JobStatus}
        base = query.with_status(None)
        if query.scans:
            steps = monque.count_jobs_in_steps(base.list_filter(), step=self.config.scan_step)
            last = await self.searches.run("count", query, steps)
            if last is None:
                return None
            counts.update(last.by_status)
        else:
            statuses = (JobStatus.FAILED, JobStatus.PENDING) if query.error_group else tuple(JobStatus)
            for status in statuses:
                counts[status] = await monque.count_jobs(replace(base.list_filter(), status=status))
        return QueueStats(
            pending=counts[JobStatus.PENDING],
            processing=counts[JobStatus.PROCESSING],
            completed=counts[JobStatus.COMPLETED],
            failed=counts[JobStatus.FAILED],
            cancelled=counts[JobStatus.CANCELLED],
            total=sum(counts.values()),
        )

    async def _heal_window(self, count: int) -> None:
        """Reload a wholly loaded view whose row count disagrees with the store's count, twice running.

        Changes the feed does not carry (rows deleted or edited in the ``sqlite3`` shell, ADR
        0001) left the table showing jobs the tabs no longer counted ("All 0" over a listed
        job) and a deleted job's detail as if it existed (probe finding). Only a view loaded
        whole can be checked this cheaply; the disagreement must be the same on two refreshes
        in a row (a busy queue's counts lead its feed by a flush, never twice alike), and each
        disagreement is healed once (unreadable rows are counted but never listed).
        """
        window = self.window
        if self.paused or window.has_before or window.has_after or window.query != self.query:
            self._disagreement = None
            return
        pair = (count, len(window.rows))
        if count == len(window.rows):
            self._disagreement = None
            return
        if pair != self._disagreement:
            self._disagreement = pair
            return
        if pair == self._healed:
            return
        self._healed = pair
        self.emit(JobsChanged(frozenset(), reload=True))  # an open detail reads its job again
        await self.reload_around_cursor()

    # -- names ------------------------------------------------------------------------------------------
    async def load_names(self) -> list[str]:
        """Read the store's job names again (new names appear as producers add them)."""
        if self.monque is not None:
            try:
                self.names = await self.monque.job_names()
            except ConnectionError as error:
                self.store_failed(error)  # keep the names read before
        return self.names

    def matched_names(self, query: JobQuery | None = None) -> list[str] | None:
        """The known names a glob in the name filter matches; None when the filter is not a glob."""
        query = query or self.query
        if not query.name_is_glob:
            return None
        return [name for name in self.names if query.name_matches(name)]

    # -- marks --------------------------------------------------------------------------------------------
    def toggle_mark(self, job: Job) -> None:
        self.marked_view = None  # back to marking rows
        if job.id in self.marks:
            del self.marks[job.id]
        else:
            self.marks[job.id] = job
        self.emit(MarksChanged(len(self.marks)))

    def mark_loaded(self) -> None:
        self.marked_view = None
        for job in self.window.rows:
            self.marks[job.id] = job
        self.emit(MarksChanged(len(self.marks)))

    def clear_marks(self) -> None:
        self.marks.clear()
        self.marked_view = None
        self.emit(MarksChanged(0))

    @survives_store_errors(None)
    async def mark_matching(self) -> int | None:
        """Mark every job of the view (counted in the store, not the loaded rows); the count."""
        monque = self.monque
        if monque is None:
            return None
        query = self.query
        try:
            if query.scans:
                steps = monque.count_jobs_in_steps(query.list_filter(), step=self.config.scan_step)
                last = await self.searches.run("mark", query, steps)
                if last is None:
                    self.emit(Notice("Nothing marked: the count was stopped.", "warning", "Mark all matching"))
                    return None
                count = last.matched
            else:
                count = await monque.count_jobs(query.list_filter())
        except ConnectionError as error:
            self.emit(Notice(f"Nothing marked: {store_unreadable(error)}.", "warning", "Mark all matching"))
            raise
        except QUERY_ERRORS as error:
            self.emit(Notice(f"Nothing marked: {error}", "warning", "Mark all matching"))
            return None
        if query != self.query:
            return None  # the view changed meanwhile
        if count == 0:
            self.emit(Notice("Nothing to mark: no job matches this view.", "warning"))
            return 0
        self.marks.clear()
        self.marked_view = query
        self.emit(MarksChanged(count, everything=True))
        return count

    # -- reads in steps (a "contains" view) -----------------------------------------------------------
    def waiting_searches(self) -> list[SearchProgressed]:
        """The reads in steps the operator waits on for this view: its rows, a bulk or "mark
        all" count, and its counts until it has some (a recount beside shown counts is not)."""
        return [
            running
            for running in self.searches.running
            if running.query == self.query and (running.what != "count" or self.counted_query != self.query)
        ]

    def stop_search(self) -> list[SearchProgressed]:
        """Esc while a text view is being read: stop every read of it now, keep what was found,
        and read it again only when asked (a key, the filter); what was stopped."""
        stopped = self.searches.stop()
        if stopped:
            self.stopped_query = self.query
            furthest = max(stopped, key=lambda running: running.read)
            self.emit(
                Notice(
                    f"Search stopped after {progress_text(furthest)}; the rows found so far stay. "
                    "Esc again clears the filter.",
                    "information",
                    "Search",
                )
            )
        return stopped

    @property
    def loading(self) -> bool:
        """A new view (tab, sort, filter) is chosen but its first page has not arrived: the
        rows still loaded are the previous view's, and no key may act on them as this one's."""
        return self.window.query != self.query

    def targets(self) -> tuple[list[Job], bool]:
        """The marked jobs, or else the cursor's job; and whether they are marks.

        While a new view loads there is no cursor job: the cursor row was the previous view's
        (a slow glob on a busy store left a 'gamma' row under "names 'b*'", and `c` offered to
        cancel it; probe 5). Marks are explicit jobs and stay valid across views.
        """
        if self.marks:
            return list(self.marks.values()), True
        if self.loading:
            return [], False
        return ([self.cursor] if self.cursor is not None else []), False

    # -- acting on jobs -----------------------------------------------------------------------------------
    def plan_for_targets(
        self, kind: ActionKind, jobs: list[Job] | None = None, marked: bool | None = None
    ) -> ActionPlan | None:
        """A plan for the marked jobs (or the cursor's, or ``jobs``); None with a Notice when there is nothing to do."""
        if self.read_only:
            self.emit(Notice(READ_ONLY_NOTICE, "warning"))
            return None
        if jobs is None:
            jobs, marked = self.targets()
        if not jobs:
            self.emit(Notice(LOADING_NOTICE if self.loading else "No job under the cursor.", "warning"))
            return None
        plan = plan_for_jobs(kind, jobs, bool(marked))
        if plan.count == 0 and kind is ActionKind.CANCEL and any(job.status is JobStatus.PROCESSING for job in jobs):
            # ``c`` on running jobs (issue 37): upstream's cancel is for pending ones; a running
            # one is asked to stop (its owner cancels the handler and ends it cancelled).
            plan = plan_for_jobs(ActionKind.STOP, jobs, bool(marked))
        if plan.count == 0:
            reason = plan.details[-1] if plan.skipped else "no job selected"
            self.emit(Notice(f"Nothing to {kind.value}: {reason}", "warning"))
            return None
        return plan

    @survives_store_errors(None)
    async def plan_bulk(
        self, kind: ActionKind, query: JobQuery | None = None, quiet: bool = False
    ) -> ActionPlan | None:
        """Count what a bulk action on the view would reach, as of now; None with a Notice if nothing
        (``quiet``: without the notice, when another question follows)."""
        if self.read_only:
            self.emit(Notice(READ_ONLY_NOTICE, "warning"))
            return None
        query = query or self.query
        if self.monque is None:
            return None
        try:
            counted: BulkCount | None = None
            if query.scans:
                counted = await self._count_bulk_in_steps(kind, query)
                if counted is None:
                    self.emit(Notice(f"Nothing to {kind.value}: the count was stopped.", "warning"))
                    return None
            plan = await plan_bulk(self.monque, kind, query, counted)
        except ConnectionError as error:
            # The key's own answer: the store-error notice comes once per outage and had gone.
            self.emit(Notice(f"Nothing to {kind.value} yet: {store_unreadable(error)}.", "warning"))
            raise
        except QUERY_ERRORS as error:  # a filter the store refuses (a NUL in "contains") acts on nothing
            self.emit(Notice(f"Nothing to {kind.value}: {error}", "warning"))
            return None
        if plan.count == 0:
            if not quiet:
                self.emit(
                    Notice(
                        f"Nothing to {kind.value}: no job matches ({bulk_what(kind, query)}).{instead(kind)}", "warning"
                    )
                )
            return None
        return plan

    async def plan_bulk_and_stop(
        self, kind: ActionKind, query: JobQuery | None = None
    ) -> tuple[ActionPlan | None, ActionPlan | None]:
        """``plan_bulk``, and for a cancel of a view that may hold running jobs (issue 37) the
        plan to stop those, asked apart and after it (stopping is not upstream's cancel). When
        nothing is pending, the stop is the one question."""
        view = query or self.query
        stop = None
        if kind is ActionKind.CANCEL and view.status in (None, JobStatus.PROCESSING):
            stop = await self.plan_bulk(ActionKind.STOP, query, quiet=True)
        plan = await self.plan_bulk(kind, query, quiet=stop is not None)
        return (stop, None) if plan is None else (plan, stop)

    async def _count_bulk_in_steps(
        self, kind: ActionKind, query: JobQuery, as_of: BulkCount | None = None
    ) -> BulkCount | None:
        """A bulk action's count on a "contains" view, read in steps with its progress shown
        (Esc stops it: None). Exact, and bounded as ``count_bulk`` is (ADR 0015)."""
        assert self.monque is not None
        steps = count_bulk_in_steps(self.monque, kind, query, as_of, self.config.scan_step)
        last = await self.searches.run(kind.value, query, steps)
        return None if last is None else last.bulk

    async def run_plan(self, plan: ActionPlan) -> ActionPlan | None:
        """Act on a confirmed plan. Returns a new plan to confirm when more jobs match than were confirmed."""
        if self.monque is None or self.read_only:
            return None
        try:
            counted: BulkCount | None = None
            if plan.query is not None and plan.query.scans and plan.counted is not None:
                counted = await self._count_bulk_in_steps(plan.kind, plan.query, plan.counted)
                if counted is None:
                    self.emit(Notice("Nothing changed: the count was stopped.", "warning"))
                    return None
            grown = await recount(self.monque, plan, counted)
            if grown is not None:
                self.emit(
                    Notice(
                        f"More jobs match now than you confirmed ({plan.count:,} → {grown.count:,}); confirm again.",
                        "warning",
                    )
                )
                return grown
            outcome = await execute(self.monque, plan)
        except Exception as error:  # noqa: BLE001 - shown to the operator
            reached = await reached_before_failing(self.monque, plan)
            self.emit(Notice(f"{plan.kind.value.capitalize()} failed: {error}{reached}", "error"))
            return None
        self.emit(Notice(outcome.message, outcome.severity, plan.kind.value.capitalize()))
        self.offer_release = outcome.release_owner  # issue 37: a dead owner's jobs are released instead
        if not plan.is_bulk and plan.job_ids is not None and self.marks:
            self.clear_marks()  # the marks were used
        elif plan.is_bulk and self.marked_view is not None and plan.query == self.marked_view:
            self.clear_marks()  # the view-level mark was used
        if self.feed_state != "live":
            await self.reload_around_cursor()
        await self.refresh_stats()
        return None

    # -- fleet control: pausing names, releasing dead owners (issue 13) -----------------------------------
    async def refresh_paused_names(self) -> None:
        """Poll the store's paused names (cheap); ``PausedNamesChanged`` when they changed."""
        if self.monque is None:
            return
        try:
            names = tuple(sorted(await self.monque.paused()))
        except Exception:  # noqa: BLE001 - a store hiccup: the next tick asks again
            return
        if names != self.paused_names:
            self.paused_names = names
            self.emit(PausedNamesChanged(names))

    @property
    def alerts(self) -> Alerts:
        return self.alerts_watch.alerts

    @survives_store_errors(None)
    async def refresh_alerts(self) -> None:
        """Read the alerts when due (paced by their cost); ``AlertsChanged`` when they changed.

        Read on every screen: a failure is the store's state (``store_failed``), and a read
        that works after one says the store answers again (the Queues and Workers screens
        read no listing or count of the session's, which said so before)."""
        if self.monque is None:
            return
        due = self.alerts_watch.due
        changed = await self.alerts_watch.refresh(self.monque, self.clock())
        if due:
            self._store_answers()
        if changed is not None:
            self.emit(AlertsChanged(changed))

    async def toggle_pause(self, name: str) -> None:
        """Pause ``name`` for every Python worker on the store, or resume it when it is paused."""
        monque = self.monque
        if monque is None or self.read_only:
            return
        try:
            if name in await monque.paused():
                await monque.resume(name)
                self.emit(Notice(f"Resumed {name!r}: workers claim it again.", "information", "Resume"))
            else:
                await monque.pause(name)
                self.emit(
                    Notice(
                        f"Paused {name!r}: Python workers stop claiming it within a poll interval; running "
                        "jobs finish. Node Monque workers do not honour pauses.",
                        "information",
                        "Pause",
                    )
                )
        except Exception as error:  # noqa: BLE001 - shown to the operator
            self.emit(Notice(f"Pause failed: {error}", "error"))
            return
        await self.refresh_paused_names()

    async def check_owner(self, instance_id: str) -> OwnerCheck | None:
        """Watch owner ``instance_id``'s heartbeat: the check when it is dead with jobs to
        release (the app then asks), else None with a Notice saying why not.

        Dead or alive is the engine's watch of the heartbeat moving, never this console's
        clock (issue 25): up to twice its interval plus 1 s."""
        monque = self.monque
        if monque is None or self.read_only:
            return None
        self.emit(
            Notice(
                f"Watching {instance_id}'s heartbeat (up to twice its interval, plus 1 s): "
                "its jobs are released only if it writes nothing meanwhile.",
                timeout=4,
            )
        )
        try:
            check = await monque.check_owner(instance_id)
        except Exception as error:  # noqa: BLE001 - shown to the operator
            self.emit(Notice(f"Release failed: {error}", "error"))
            return None
        if check.alive or check.releasable == 0:
            reason = (
                "the owner is alive (its heartbeat moved while watched)"
                if check.alive
                else "it holds no processing jobs"
            )
            self.emit(Notice(f"Nothing to release for {instance_id}: {reason}.", "warning"))
            return None
        return check

    async def release_owner(self, instance_id: str) -> bool:
        """Release a dead owner's jobs now (the store has the last word); whether it was asked."""
        monque = self.monque
        if monque is None or self.read_only:
            return False
        try:
            message = await release_owner(monque, instance_id)
        except Exception as error:  # noqa: BLE001 - shown to the operator
            self.emit(Notice(f"Release failed: {error}", "error"))
            return False
        self.emit(Notice(message, "information", "Release"))
        return True

    # -- this console's own workers (--demo, --app): quitting waits for them -------------------------------
    @property
    def runs_workers(self) -> bool:
        """This console started workers (``--demo``, ``--app``) on an open store."""
        return self.monque is not None and self.config.start_workers

    @property
    def running_job_count(self) -> int:
        """Handlers of this console's workers running now."""
        return 0 if self.monque is None else self.monque.running_job_count

    @property
    def workers_claiming(self) -> bool:
        """This console's workers still claim jobs (false once their stop has begun)."""
        return self.monque is not None and self.monque.is_running

    @property
    def shutdown_timeout(self) -> float:
        """How long stopping the workers may wait for running handlers, in seconds."""
        return 0.0 if self.monque is None else float(self.monque.options.shutdown_timeout)

    async def stop_workers(self) -> None:
        """Stop this console's workers (never raises; bounded by ``shutdown_timeout`` and a grace)."""
        if self.monque is not None:
            await self.monque.stop()

    # -- for screens ------------------------------------------------------------------------------------------
    @survives_store_errors(None)
    async def job(self, job_id: str) -> Job | None:
        return None if self.monque is None else await self.monque.get_job(job_id)

    def set_status(self, status: JobStatus | None) -> bool:
        return self.set_query(self.query.with_status(status))

    def with_filter(
        self,
        name: str | None,
        search: str | None,
        ranges: Any,
        text: str | None = None,
        clear_group: bool = False,
        data: tuple[Any, ...] = (),
    ) -> JobQuery:
        """The view with the filter bar's fields; ``clear_group`` also drops an errors-view group filter (Esc)."""
        query = self.query._replace(name=name, search=search, text=text, data=tuple(data))
        if clear_group:
            query = query._replace(error_group=None, group_label=None)
        return query.with_ranges(ranges)


def sum_stats(parts: list[QueueStats]) -> QueueStats:
    """The counts of several names as one (the average duration is not summed: left out)."""
    return QueueStats(
        pending=sum(p.pending for p in parts),
        processing=sum(p.processing for p in parts),
        completed=sum(p.completed for p in parts),
        failed=sum(p.failed for p in parts),
        cancelled=sum(p.cancelled for p in parts),
        total=sum(p.total for p in parts),
    )

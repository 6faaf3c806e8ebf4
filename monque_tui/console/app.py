"""The console app: the Textual shell around a ``ConsoleSession``.

The session (``monque_tui.console.session``, no Textual) owns the store, the query, the marks, the
window, the counts and the live feed, and is the console's only way to the engine: the app
never calls ``Monque`` itself (pausing a name, releasing an owner and stopping this console's
workers are session calls too; ``tests/tui/test_console_one_hub.py`` checks). The app runs its
timers, turns session events into ``SessionMessage`` messages for the screens, and shows
dialogs; screens turn keys into session calls, and reach the app only as ``ConsoleApp``
(protocol.py, handed to them when built) and by posting intents (messages.py). Nothing here
reaches into a screen's internals.
"""

from __future__ import annotations

import asyncio
import sys
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.app import App, ScreenStackError, SystemCommand
from textual.command import CommandPalette
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Input

from monque_engine.store.urls import mask_text

from ..common import startup_gc
from .actions import ActionKind, ActionPlan
from .bindings import bindings_for
from .clock import Clock, system_clock
from .command_palette import ConsolePalette
from .config import ConsoleConfig
from .disabled_keys import explain
from .formatting import plural
from .heap import freeze_startup_objects, thaw
from .keylog import KeyLog, clocked_driver
from .messages import (
    ActOnJobs,
    ActOnQuery,
    ExportView,
    ReleaseOwner,
    SessionMessage,
    ShowErrorGroup,
    ShowJob,
    ShowJobsNamed,
    TogglePause,
)
from .palette import ConsoleCommands
from .query import JobQuery
from .screens.jobs import JobsScreen
from .session import ConsoleSession, SessionError, SessionEvent
from .session.events import AlertsChanged, JobsChanged, Notice, PausedNamesChanged, StoreStateChanged
from .session.export import ExportError, default_path, export_view
from .widgets.alerts_line import AlertsLine

DETAIL_SCREEN = "job-detail"  # the reused detail screen's installed name
FLUSH_INTERVAL = 0.5  # live enough to read; each flush diffs the window and redraws changed rows
#: Counts are re-read every second when cheap (SQLite's kept counts: ~0.2 ms at any size), so
#: counts on screen are never 2 s old under a steady drain (issue 26; at 2.0 the timer's own
#: lateness took the age just past 2 s). Costly counts back off (session.STATS_BACKOFF).
STATS_INTERVAL = 1.0
#: A greyed key's explanation is not shown again while the same one is still on screen.
EXPLAIN_AGAIN_S = 5.0
POLL_INTERVAL = 2.0
THROUGHPUT_INTERVAL = 1.0
#: A key whose store work takes longer than this says what it is doing (``say_if_slow``).
SLOW_KEY_AFTER = 0.3
#: After the first rows, the start-up heap is collected and frozen this much later (``_settle_heap``).
HEAP_SETTLE_AFTER = 0.3
#: The longest a read waits for a key's frame (a key that changed nothing visible draws none).
AFTER_KEY_FRAME_LIMIT = 0.25


if TYPE_CHECKING:
    from .screens.detail import JobDetailScreen

#: The screen each "go to a screen" key opens (module, class): on that screen the key does
#: nothing, so the footer does not offer it there (the Errors screen's footer named
#: ``e Errors``; probe 7).
_SCREEN_OF_ACTION: dict[str, tuple[str, str]] = {
    "show_queues": ("queues", "QueuesScreen"),
    "show_errors": ("errors", "ErrorsScreen"),
    "show_workers": ("workers", "WorkersScreen"),
    "show_help": ("help", "HelpScreen"),
}


def _is_screen(screen: object, module: str, name: str) -> bool:
    """``isinstance(screen, screens.<module>.<name>)`` without importing a screen not opened
    yet: the screens other than the jobs table are imported when first opened, so a console
    starts without them (issue 40: launch to first rows within 300 ms), and a screen whose
    module is not imported cannot be on the stack."""
    loaded = sys.modules.get(f"{__package__}.screens.{module}")
    return loaded is not None and isinstance(screen, getattr(loaded, name))


class MonqueConsole(App[int]):
    TITLE = "monque"
    BINDINGS = bindings_for("app")
    ENABLE_COMMAND_PALETTE = True
    #: Our commands (literal titles, see palette.py), then the few system ones we keep (``get_system_commands``).
    COMMANDS = App.COMMANDS | {ConsoleCommands}

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Only the system entries an operator uses, worded as ours.

        Textual's own ``Quit`` stood beside ours (``Quit [q]``, which waits for running jobs),
        ``Keys`` opened Textual's panel instead of our ``?``, and ``Theme`` / ``Screenshot``
        read as the framework's (issue 28)."""
        yield SystemCommand("Colours", "Change the console's colour theme", self.action_change_theme)
        yield SystemCommand(
            "Save screenshot",
            "Save this screen as an SVG file in the current folder (to share what you see)",
            lambda: self.set_timer(0.1, self.deliver_screenshot),
        )

    def action_command_palette(self) -> None:
        """Textual's palette, with page keys that cannot crash on a list not yet laid out."""
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(ConsolePalette(id="--command-palette"))

    def __init__(
        self, config: ConsoleConfig, *, clock: Clock | None = None, live: bool = True, freeze_heap: bool = False
    ) -> None:
        """``live=False`` (snapshots): no change feed, no timers, no cursor blink.

        ``freeze_heap``: after the first paint, move start-up objects out of the garbage
        collector's full passes (``heap.py``; the command does, tests mostly do not: it is the
        whole process's collector).
        """
        super().__init__()
        self._freeze_heap = freeze_heap
        self._heap_frozen = False
        self._stopping_workers = False  # q was pressed while this console's handlers ran
        self.config = config
        self.clock: Clock = clock or system_clock
        self.live = live
        self.read_only = config.read_only
        self.session = ConsoleSession(config, clock=self.clock, live=live, emit=self._session_event)
        #: Called once the session is closed on the way out (launch.py: after an exit signal,
        #: the terminal may be gone and Textual's own teardown may never finish).
        self.after_close: Callable[[], None] | None = None
        self.error: str | None = None
        self.ready = asyncio.Event()
        self.first_paint_at: float | None = None
        self._started = time.perf_counter()
        self.jobs_screen = JobsScreen(self.session, self)
        #: The store's opening (``start_opening``), begun before Textual starts when launched.
        self._opening: asyncio.Future[None] | None = None
        #: The job detail screen, built on the first open and reused after (``show_job``).
        self._detail: JobDetailScreen | None = None
        #: ``MONQUE_TUI_KEYLOG``: key-to-frame times for the soak benchmark (None: off, no cost).
        self._keylog = KeyLog.from_env()
        if self._keylog is not None:
            # The log's clock stops where the frame's bytes leave (the writer thread), not at hand-over.
            self.driver_class = clocked_driver(self.driver_class)
        self._last_key: tuple[str, float] | None = None
        #: A key arrived and no frame has been written since: its work goes first (``_key_first``).
        self._key_since_frame = False
        #: The last greyed-key explanation shown, and when (monotonic).
        self._explained: tuple[str, float] = ("", 0.0)
        #: Keys handed on to the focused field by ``on_key`` (each goes there once).
        self._rerouted_keys: weakref.WeakSet[events.Key] = weakref.WeakSet()
        #: The live flush already gave way to a key once in a row (it never waits twice).
        self._flush_deferred = False
        #: The last display had nothing to draw (``_display``): not a frame.
        self._empty_display = False
        #: Work waiting for the pending key's frame (``call_after_key_frame``), and its time limit.
        self._after_key_frame: list[Callable[[], None]] = []
        self._after_key_frame_timer: Timer | None = None

    @property
    def paused(self) -> bool:
        return self.session.paused

    @property
    def paused_names(self) -> tuple[str, ...]:
        """Job names paused in the store (the session polls them with the stats)."""
        return self.session.paused_names

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Never markup: messages carry job names and errors, which may contain ``[`` (e.g. "[/]")."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    async def action_quit(self) -> None:
        """q: leave at once, unless this console runs workers (``--demo``, ``--app``) with
        handlers in flight.

        Their stop waits for them (up to ``shutdown_timeout``) and ran in ``on_unmount``, after
        Textual had cleared the screen: quitting the demo sat on a blank terminal for seconds,
        with nothing to say why. The console now stays up, says what it waits for, and closes
        once the workers have stopped (the jobs finish, or stale recovery gets them).

        With no handler running, workers that run still stop before the console closes: a
        claim on its way hands out a job the stop then waits for (the demo's workers claim all
        the time), and that wait is said, here, once it lasts.
        """
        session = self.session
        if not session.runs_workers:
            self.exit()
            return
        if self._stopping_workers:  # (the workers no longer claim: workers_claiming is already false)
            waiting = "waiting for the running jobs to finish" if session.running_job_count else "stopping the workers"
            self.notify(f"Still {waiting}.", title="Quit", timeout=3)
            return
        running = session.running_job_count
        if not running and not session.workers_claiming:
            self.exit()
            return
        self._stopping_workers = True
        slow: Timer | None = None
        if running:
            self._say_stopping()
        else:
            slow = self.set_timer(SLOW_KEY_AFTER, self._say_stopping)
        self._stop_workers_then_exit(slow)

    def _say_stopping(self) -> None:
        timeout = self.session.shutdown_timeout
        running = self.session.running_job_count
        what = f": {plural(running, 'running job')} may finish first" if running else ""
        self.notify(
            f"Stopping the workers{what} (at most {timeout:g} s); the console closes when they have.",
            title="Quit",
            timeout=timeout + 5,
        )

    @work(group="quit")
    async def _stop_workers_then_exit(self, slow: Timer | None = None) -> None:
        try:
            await self.session.stop_workers()  # never raises; bounded by shutdown_timeout and a grace
        finally:
            if slow is not None:
                slow.stop()
            self.exit()

    def action_help_quit(self) -> None:
        """Ctrl+C (Textual's hint that it does not quit): our words, plain text.

        Textual's own hint is markup ("Press [b]ctrl+q[/b] …"), and ``notify`` here never
        renders markup, so the operator read the tags (probe 5).
        """
        self.notify("Press q to quit (ctrl+q from any screen); ctrl+c copies selected text.", title="Quit?")

    # -- key timing (MONQUE_TUI_KEYLOG) -----------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self._key_since_frame = True
            if self._keylog is not None:
                self._last_key = (event.key, event.time)
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """A key bound to an action that does not apply now says why (it used to do nothing at all).

        Runs after the bindings were tried (``App._on_key``); an enabled binding ran, so only
        a disabled one, greyed in the footer, gets a line here.
        """
        screen = self.top_screen
        if (
            screen is not None
            and event.is_printable
            and isinstance(screen.focused, Input)
            and event not in self._rerouted_keys
        ):
            # Text for the field focused now, routed elsewhere before a key ahead of it in the
            # same burst moved the focus (``/email`` pasted, or batched by a slow ssh link: the
            # letters went to the table). A key typed into a field stops there; this one did not.
            # Once only: a copy that comes back (a field that refused it) is not sent again.
            rerouted = events.Key(event.key, event.character)
            self._rerouted_keys.add(rerouted)
            screen.focused._forward_event(rerouted)
            return
        active = None if screen is None else screen.active_bindings.get(event.key)
        if screen is None or active is None or active.enabled:
            return
        reason = explain(screen, active.binding.action, self.session.read_only)
        now = time.monotonic()
        last_reason, last_at = self._explained
        if reason and not (reason == last_reason and now - last_at < EXPLAIN_AGAIN_S):
            self._explained = (reason, now)  # a held key repeats: one toast while the first shows
            self.notify(reason, severity="warning", timeout=5)

    async def run_action(
        self, action: Any, default_namespace: Any = None, namespaces: Mapping[str, Any] | None = None
    ) -> bool:
        result = await super().run_action(action, default_namespace, namespaces)
        if self._keylog is not None and self._last_key is not None:
            self._keylog.handled(*self._last_key)  # the key's binding ran: its frame is the next one
            self._last_key = None
        return result

    def _display(self, screen: Any, renderable: Any) -> None:
        """Textual's frame output; noted when it had nothing to draw (see ``post_display_hook``)."""
        if renderable is None:
            self._empty_display = True
        super()._display(screen, renderable)

    def post_display_hook(self) -> None:
        if self._empty_display:
            # Textual calls this after a "display" with nothing to draw too: that is no frame,
            # and a key awaiting its frame still awaits it (reads stay deferred, the keylog waits).
            self._empty_display = False
            return
        self._key_since_frame = False
        if self._after_key_frame:
            self.call_next(self._run_after_key_frame)  # the key's frame is out: what waited for it
        if self._keylog is not None:
            driver = self._driver
            self._keylog.frame_displayed(driver.write if driver is not None else None)

    # -- start and stop -------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.push_screen(self.jobs_screen)
        self.connect()
        if startup_gc.held():  # no rows yet after this long (a store slow to answer): collect meanwhile
            self.set_timer(startup_gc.HOLD_LIMIT_S, startup_gc.release)

    def start_opening(self) -> asyncio.Future[None]:
        """Open the store (once): ``launch.py`` calls this before Textual starts, ``connect`` after.

        Opened from ``on_mount``, the store's few reads (each a hop to its thread and back)
        waited behind Textual's start-up work on the event loop, so the table painted
        "Loading…" two or three frames before its rows (issue 40: launch to first rows).
        Begun first, a local store is open and its first page read before the first frame,
        and the rows are in it.
        """
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open_and_read_ahead())
        return self._opening

    async def _open_and_read_ahead(self) -> None:
        await self.session.open()
        await self.session.read_ahead_top()

    def opening_failed(self) -> BaseException | None:
        """What an open begun by ``start_opening`` raised, once done (also marks it as seen)."""
        opening = self._opening
        if opening is None or not opening.done() or opening.cancelled():
            return None
        return opening.exception()

    @work(exclusive=True, group="connect")
    async def connect(self) -> None:
        try:
            await self.start_opening()
        except SessionError as error:
            self.fail(str(error), error.code)
            return
        self.jobs_screen.start()
        self._refresh_paused_names_in_background()
        if self.live:
            self.set_interval(FLUSH_INTERVAL, self._apply_changes)
            self.set_interval(STATS_INTERVAL, self._stats_tick)
            self.set_interval(THROUGHPUT_INTERVAL, self._throughput_tick)
            self.set_interval(POLL_INTERVAL, self._poll)

    @property
    def closing(self) -> bool:
        """Textual stops the app's own timers only after it has emptied its screens, so a tick
        can land on a screen with no widgets left (CI, rounds 7 and 8): every tick asks first."""
        return not self.is_running

    def fail(self, message: str, code: int = 1) -> None:
        self.error = mask_text(message.splitlines()[0]) if message else "monque-tui: failed"
        self.exit(return_code=code)

    async def on_unmount(self) -> None:
        if self._keylog is not None:
            self._keylog.close()
            self._keylog = None
        await self.session.close()
        if self._heap_frozen:
            self._heap_frozen = False
            thaw()
        if self.after_close is not None:
            self.after_close()

    def first_paint(self) -> None:
        if self.first_paint_at is None:
            self.first_paint_at = time.perf_counter() - self._started
            if self._freeze_heap or startup_gc.held():
                # Not in the first rows' refresh: the full collection holds the GIL for ~20 ms,
                # and the writer thread still had the frame's bytes to send (issue 40).
                self.set_timer(HEAP_SETTLE_AFTER, self._settle_heap)
        self.ready.set()

    def _settle_heap(self) -> None:
        """After the first rows: collect and freeze what start-up left, then turn the collector
        on again (``common.startup_gc`` kept it off while the console started)."""
        if self._freeze_heap and not self._heap_frozen and self.is_running:
            freeze_startup_objects()
            self._heap_frozen = True
        startup_gc.release()

    # -- session events -------------------------------------------------------------------------------
    def _session_event(self, event: SessionEvent) -> None:
        if isinstance(event, Notice):
            timeout = event.timeout if event.timeout is not None else (10 if event.severity == "error" else None)
            self.notify(event.message, title=event.title, severity=event.severity, timeout=timeout)
            return
        if isinstance(event, AlertsChanged | StoreStateChanged):
            # Every screen draws the line, the ones under the top too (shown as soon as Esc
            # returns); a store that stops answering takes its alerts' place (``AlertsLine``).
            for screen in self.screen_stack:
                for line in screen.query(AlertsLine):
                    line.show(self.session.alerts, self.session.store_state)
            if isinstance(event, AlertsChanged):
                return
        self.jobs_screen.post_message(SessionMessage(event))
        if isinstance(event, JobsChanged | PausedNamesChanged):
            self._tell_top_screen(SessionMessage(event))

    # -- timers -------------------------------------------------------------------------------------------
    def _key_first(self) -> bool:
        """True when the live flush should wait one tick: a key is between its event and its frame.

        A flush (reading the feed, diffing the window, redrawing changed rows) landing there
        delayed the key's frame by its whole cost (issue 10: key p95). It gives way once in a
        row at most, so a stream of keys never starves the live view.
        """
        if self._key_since_frame and not self._flush_deferred:
            self._flush_deferred = True
            return True
        self._flush_deferred = False
        return False

    @property
    def key_frame_pending(self) -> bool:
        """A key was read and the frame after it is not written yet."""
        return self._key_since_frame

    def call_after_key_frame(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the pending key's frame is drawn (at once when no key awaits one).

        A page or job read that lands between a key and its frame made that frame draw the
        read's rows too (a whole table: 13-67 ms of the UI thread under the soak, issue 10),
        so the tab, sort or detail the key asked for reached the screen late. Work that
        follows a read waits here: the key's frame goes out with what the key itself
        changed, the read's result in the next frame. Should no frame come (a key that
        changed nothing visible), ``AFTER_KEY_FRAME_LIMIT`` bounds the wait.
        """
        if not self._key_since_frame:
            callback()
            return
        self._after_key_frame.append(callback)
        if self._after_key_frame_timer is None:
            self._after_key_frame_timer = self.set_timer(AFTER_KEY_FRAME_LIMIT, self._run_after_key_frame)

    async def after_key_frame(self) -> None:
        """Return once the pending key's frame is drawn (``call_after_key_frame``)."""
        if not self._key_since_frame:
            return
        drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done() -> None:
            if not drawn.done():
                drawn.set_result(None)

        self.call_after_key_frame(done)
        await drawn

    def _run_after_key_frame(self) -> None:
        callbacks, self._after_key_frame = self._after_key_frame, []
        timer, self._after_key_frame_timer = self._after_key_frame_timer, None
        if timer is not None:
            timer.stop()
        for callback in callbacks:
            callback()

    async def _apply_changes(self) -> None:
        if self.closing:
            return
        if self._key_first():
            return
        await self.session.flush()

    async def _stats_tick(self) -> None:
        if self.closing:
            return
        if self.counts_shown:
            await self.session.refresh_stats_if_due()
        await self.refresh_paused_names()
        await self.session.refresh_alerts()

    @property
    def top_screen(self) -> Screen[object] | None:
        """The screen in view, or None once the app is closing and its screen stack is empty.

        Feed flushes, timers and finished actions land after the user quit too; reading
        ``self.screen`` there raised ``ScreenStackError`` into the exit (CI, round 7).
        """
        try:
            return self.screen
        except ScreenStackError:
            return None

    def _tell_top_screen(self, message: Message) -> None:
        """Post ``message`` to the screen in view as well, when that is not the jobs screen."""
        screen = self.top_screen
        if screen is not None and screen is not self.jobs_screen:
            screen.post_message(message)

    @property
    def counts_shown(self) -> bool:
        """No Queues or Workers screen is in view (a modal over one included): those read their
        own counts, and under the Queues screen of a 1.8M-job store the session's count went on
        reading every finished job (4 % of a core) for a header nobody could see. A job's
        detail keeps them: the counts notice rows deleted by hand and tell an open detail."""
        for screen in reversed(self.screen_stack):
            if not isinstance(screen, ModalScreen):
                return not _is_screen(screen, "table_screen", "TableScreen")
        return True

    @work(group="stats")
    async def refresh_stats_if_due(self) -> None:
        await self.session.refresh_stats_if_due()

    @work(group="paused")
    async def _refresh_paused_names_in_background(self) -> None:
        """A worker made by ``@work`` creates its coroutine only when it starts: a coroutine
        object handed to ``run_worker`` as the app quits was never awaited (a RuntimeWarning
        printed on stderr at exit)."""
        await self.refresh_paused_names()

    async def refresh_paused_names(self) -> None:
        """Poll the store's paused names (cheap); the session tells the screens when they change."""
        await self.session.refresh_paused_names()

    def _throughput_tick(self) -> None:
        if self.closing:
            return
        if not self.session.paused:
            self.jobs_screen.show_throughput()
        self.jobs_screen.show_counts_age()

    async def _poll(self) -> None:
        if self.closing:
            return
        await self.session.poll()

    @work(group="stats")
    async def request_stats(self) -> None:
        await self.session.refresh_stats()

    def set_paused(self, paused: bool) -> None:
        self.session.set_paused(paused)
        if not paused:
            self._resume()

    @work(group="resume")
    async def _resume(self) -> None:
        await self.session.flush()
        await self.session.refresh_stats()

    # -- screens --------------------------------------------------------------------------------------------
    def show_job(self, job_id: str, row: Any = None) -> None:
        """Open a job's detail on the one reused detail screen (installed, so a pop keeps it).

        Composing a detail screen anew on every open was the slowest key under load (issue
        10). Should the reused screen still be on the stack (under another screen), a fresh
        one opens instead, so the stack never holds one screen twice.
        """
        from .screens.detail import JobDetailScreen

        detail = self._detail
        if detail is None:
            detail = self._detail = JobDetailScreen(self.session, self, job_id, self.clock, row)
            self.install_screen(detail, name=DETAIL_SCREEN)
            self.push_screen(detail)
        elif detail in self.screen_stack:
            self.push_screen(JobDetailScreen(self.session, self, job_id, self.clock, row))
        else:
            self.push_screen(detail)
            detail.reopen(job_id, row)

    def action_show_queues(self) -> None:
        from .screens.queues import QueuesScreen

        if not isinstance(self.screen, QueuesScreen):
            self.push_screen(QueuesScreen(self.session, self))

    def action_show_errors(self) -> None:
        from .screens.errors import ErrorsScreen

        if not isinstance(self.screen, ErrorsScreen):
            self.push_screen(ErrorsScreen(self.session, self, live=self.live))

    def show_error_group(self, query: JobQuery) -> None:
        """Enter on the errors view: the jobs table, filtered to the group."""
        while self.screen is not self.jobs_screen and len(self.screen_stack) > 1:
            self.pop_screen()
        self.jobs_screen.show_query(query)

    def action_show_workers(self) -> None:
        from .screens.workers import WorkersScreen

        if not isinstance(self.screen, WorkersScreen):
            self.push_screen(WorkersScreen(self.session, self))

    def action_show_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.read_only))

    def show_jobs_named(self, name: str) -> None:
        while self.screen is not self.jobs_screen and len(self.screen_stack) > 1:
            self.pop_screen()
        self.jobs_screen.apply_query(self.session.query._replace(name=name))

    # -- acting on jobs ------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        screen_class = _SCREEN_OF_ACTION.get(action)
        return screen_class is None or not _is_screen(self._screen_in_view(), *screen_class)

    def _screen_in_view(self) -> Screen[Any] | None:
        """The top screen, the command palette aside (the footer under it belongs to this one)."""
        for screen in reversed(self.screen_stack):
            if not isinstance(screen, CommandPalette):
                return screen  # type: ignore[no-any-return]
        return None

    def act_on_jobs(self, kind: ActionKind, jobs: list[Any] | None = None, marked: bool | None = None) -> None:
        """Cancel, retry, reschedule or delete explicit jobs (default: the marked ones, or the cursor's)."""
        plan = self.session.plan_for_targets(kind, jobs, marked)
        if plan is None:
            return
        if kind is ActionKind.RESCHEDULE:
            question = f"Reschedule {plan.subject}: when should {'it' if plan.count == 1 else 'they'} run?"

            def chosen(moment: Any) -> None:
                if moment is not None:
                    self.run_plan(replace(plan, run_at=moment))

            from .screens.when import WhenScreen

            self.push_screen(WhenScreen(question, self.clock, blink=self.live), chosen)
            return
        self.confirm(plan)

    def say_if_slow(self, message: str) -> Timer:
        """Notify ``message`` should the work that follows take longer than ``SLOW_KEY_AFTER``.

        ``C`` ``R`` ``D`` and ``A`` count the view in the store before they show anything: on a
        busy 1.8M-job store that took over a second with nothing on screen, and a key that
        seems to do nothing gets pressed again (probe 6). The caller stops the timer when done.
        """
        return self.set_timer(SLOW_KEY_AFTER, lambda: self.notify(message, timeout=3))

    # -- intents the screens post (messages.py) -------------------------------------------------------
    def on_show_job(self, intent: ShowJob) -> None:
        self.show_job(intent.job_id, intent.row)

    def on_show_error_group(self, intent: ShowErrorGroup) -> None:
        self.show_error_group(intent.query)

    def on_show_jobs_named(self, intent: ShowJobsNamed) -> None:
        self.show_jobs_named(intent.name)

    def on_act_on_jobs(self, intent: ActOnJobs) -> None:
        self.act_on_jobs(intent.kind, intent.jobs, intent.marked)

    def on_export_view(self, intent: ExportView) -> None:
        self.export_view()

    def on_act_on_query(self, intent: ActOnQuery) -> None:
        self.act_on_query(intent.kind, intent.query)

    def on_toggle_pause(self, intent: TogglePause) -> None:
        self.toggle_name_pause(intent.job_name)

    def on_release_owner(self, intent: ReleaseOwner) -> None:
        self.release_owner(intent.instance_id)

    @work(group="plan")
    async def act_on_query(self, kind: ActionKind, query: JobQuery | None = None) -> None:
        slow = self.say_if_slow(f"Counting the jobs to {kind.value}…")
        try:
            # ``C`` on a view holding running jobs (issue 37): the stop is a second question.
            plan, stop = await self.session.plan_bulk_and_stop(kind, query)
        finally:
            slow.stop()
        if plan is not None:
            self.confirm(plan, then=stop)

    def confirm(self, plan: ActionPlan, then: ActionPlan | None = None) -> None:
        """Ask, then run ``plan``; ``then``: a second question asked after the first is answered."""

        def answered(ok: bool | None) -> None:
            if ok:
                self.run_plan(plan)
            else:
                self.notify("Nothing changed.", timeout=2)
            if then is not None:
                self.confirm(then)

        from .screens.confirm import ConfirmScreen

        self.push_screen(ConfirmScreen(plan, blink=self.live), answered)

    @work(group="plan")
    async def run_plan(self, plan: ActionPlan) -> None:
        slow = self.say_if_slow(f"{plan.kind.value.capitalize()}: working on {plan.subject}…")
        try:
            again = await self.session.run_plan(plan)
        finally:
            slow.stop()
        if again is not None:
            self.confirm(again)
            return
        dead_owner, self.session.offer_release = self.session.offer_release, None
        if dead_owner is not None:
            self.release_owner(dead_owner)  # a stop cannot reach a dead owner: release its jobs instead
        from .screens.detail import JobDetailScreen
        from .screens.errors import ErrorsScreen

        screen = self.top_screen
        if isinstance(screen, ErrorsScreen):
            screen.refresh_groups()
        if isinstance(screen, JobDetailScreen):
            if plan.kind is ActionKind.DELETE and screen.job_id in (plan.job_ids or ()):
                screen.dismiss(None)
            else:
                screen.load()

    # -- fleet and queue control (issue 13) ---------------------------------------------------------------
    @work(group="fleet")
    async def release_owner(self, instance_id: str) -> None:
        """Watch a dead owner, ask with the count, then release (the store has the last word).

        Dead or alive is the engine's watch of the owner's heartbeat moving (the session's
        ``check_owner``), never this console's clock (issue 25).
        """
        check = await self.session.check_owner(instance_id)
        if check is None:
            return  # the session said why
        jobs = plural(check.releasable, "processing job")

        def answered(ok: bool | None) -> None:
            if ok:
                self._release(instance_id)
            else:
                self.notify("Nothing changed.", timeout=2)

        from .screens.ask import AskScreen

        self.push_screen(
            AskScreen(
                f"Release {jobs} of dead owner {instance_id}?",
                [
                    "They go back to pending now and any worker may claim them (their handlers may run again).",
                    f"Nothing of {instance_id} moved for {check.watched:.1f} s, twice its heartbeat interval. "
                    "The store releases them only if nothing has moved since.",
                ],
                "Release",
            ),
            answered,
        )

    @work(group="fleet")
    async def toggle_name_pause(self, name: str) -> None:
        """Pause ``name`` for every Python worker on the store, or resume it when it is paused."""
        await self.session.toggle_pause(name)

    def export_view(self) -> None:
        """Ask for a path, then write every job of the view there in a worker thread."""
        query = self.session.query
        what = f"every job of the view ({query.describe(self.clock())}"
        if self.session.matching is not None:
            what += f", {plural(self.session.matching, 'job')}"
        what += ")"

        def chosen(path: str | None) -> None:
            if path:
                self._export(path, query.list_filter())

        from .screens.export import ExportScreen

        self.push_screen(
            ExportScreen(what, default_path(self.clock()), blink=self.live, store_url=self.config.url), chosen
        )

    @work(thread=True, group="export")
    def _export(self, path: str, list_filter: Any) -> None:
        """Off the UI thread: its own loop and store connection; progress at most once a second."""
        shown = [0.0]

        def progress(written: int, total: int) -> None:
            now = time.monotonic()
            if written and now - shown[0] >= 1.0:
                shown[0] = now
                self.call_from_thread(
                    self.notify, f"Exporting… {written:,} of {total:,} jobs", title="Export", timeout=2
                )

        try:
            written = export_view(self.config.url, self.config.monque_options, list_filter, path, progress)
        except ExportError as error:
            self.call_from_thread(self.notify, mask_text(str(error)), severity="error", timeout=10)
            return
        self.call_from_thread(self.notify, f"Exported {plural(written, 'job')} to {path}", title="Export")

    @work(group="fleet")
    async def _release(self, instance_id: str) -> None:
        if not await self.session.release_owner(instance_id):
            return
        screen = self.top_screen
        from .screens.detail import JobDetailScreen
        from .screens.workers import WorkersScreen

        if isinstance(screen, WorkersScreen | JobDetailScreen):
            screen.load()


__all__ = ["MonqueConsole", "SessionMessage", "plural"]

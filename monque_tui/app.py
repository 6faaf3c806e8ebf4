"""The console app: owns the event loop, the embedded `Monque`, the change feed and the screens."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from textual import work
from textual.app import App

from monque_engine import Job, Monque

from .actions import ActionKind, ActionPlan, execute, plan_bulk, plan_for_jobs, recount
from .bindings import bindings_for
from .clock import Clock, system_clock
from .config import ConsoleConfig
from .feed import ChangeBatch, LiveFeed
from .formatting import plural
from .palette import ConsoleCommands
from .query import JobQuery
from .screens.confirm import ConfirmScreen
from .screens.detail import JobDetailScreen
from .screens.help import HelpScreen
from .screens.jobs import JobsScreen
from .screens.queues import QueuesScreen
from .screens.when import WhenScreen

FLUSH_INTERVAL = 0.25
STATS_INTERVAL = 2.0
POLL_INTERVAL = 2.0


class MonqueConsole(App[int]):
    TITLE = "monque"
    BINDINGS = bindings_for("app")
    ENABLE_COMMAND_PALETTE = True
    #: Our commands (literal titles, see palette.py), then Textual's own (theme, keys, screenshot).
    COMMANDS = App.COMMANDS | {ConsoleCommands}

    def __init__(self, config: ConsoleConfig, *, clock: Clock | None = None, live: bool = True) -> None:
        """``live=False`` (snapshots): no change feed, no timers, no cursor blink."""
        super().__init__()
        self.config = config
        self.clock: Clock = clock or system_clock
        self.live = live
        self.read_only = config.read_only
        self.monque: Monque | None = None
        self.feed: LiveFeed | None = None
        self.paused = False
        self.error: str | None = None
        self.ready = asyncio.Event()
        self.first_paint_at: float | None = None
        self._started = time.perf_counter()
        self._stats_busy = False
        self._stats_again = False
        self._stats_cost = 0.0
        self._stats_done_at = 0.0
        self.jobs_screen = JobsScreen()

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Never markup: messages carry job names and errors, which may contain ``[`` (e.g. "[/]")."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    # -- start and stop -------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.push_screen(self.jobs_screen)
        self.connect()

    @work(exclusive=True, group="connect")
    async def connect(self) -> None:
        options: dict[str, Any] = dict(self.config.monque_options)
        if not self.config.start_workers:
            # A console that runs no workers only looks: fresh counts, and no stale recovery on open.
            options.setdefault("recover_stale_jobs", False)
        options.setdefault("stats_cache_ttl", 0.5)
        try:
            monque = Monque(self.config.url, **options)
            await monque.initialize()
        except Exception as error:  # noqa: BLE001 - reported as one line, then exit non-zero
            self.fail(f"monque-tui: cannot open {self.config.url}: {error}")
            return
        self.monque = monque
        try:
            if self.config.setup is not None:
                await self.config.setup(monque)
            if self.config.start_workers:
                await monque.start()
        except Exception as error:  # noqa: BLE001
            self.fail(f"monque-tui: setup failed: {type(error).__name__}: {error}")
            return
        self.jobs_screen.connected()
        if self.live:
            self.feed = LiveFeed(monque, self.clock, on_state=lambda state: self._feed_state_changed())
            self.run_worker(self.feed.run(), group="feed", name="change-feed")
            self.set_interval(FLUSH_INTERVAL, self._apply_pending_changes)
            self.set_interval(STATS_INTERVAL, self._stats_tick)
            self.set_interval(1.0, self._show_throughput)
            self.set_interval(POLL_INTERVAL, self._poll_if_needed)
        else:
            self.jobs_screen.show_feed("frozen", None)
        self._show_workers()

    def fail(self, message: str) -> None:
        self.error = message.splitlines()[0] if message else "monque-tui: failed"
        self.exit(return_code=1)

    async def on_unmount(self) -> None:
        await self.close_monque()

    async def close_monque(self) -> None:
        monque, self.monque = self.monque, None
        if monque is not None:
            await monque.close()

    def first_paint(self) -> None:
        if self.first_paint_at is None:
            self.first_paint_at = time.perf_counter() - self._started
        self.ready.set()

    # -- live -------------------------------------------------------------------------------------------
    def _feed_state_changed(self) -> None:
        if self.feed is not None:
            self.jobs_screen.show_feed(self.feed.state, self.feed.error)

    def _apply_pending_changes(self) -> None:
        if self.paused or self.feed is None:
            return
        batch = self.feed.take()
        if batch:
            self.apply_batch(batch)

    def apply_batch(self, batch: ChangeBatch) -> None:
        with self.batch_update():
            self.jobs_screen.apply_changes(batch)
            screen = self.screen
            if screen is not self.jobs_screen and hasattr(screen, "apply_changes"):
                screen.apply_changes(batch)
        self._stats_tick()
        self._show_workers()

    def _poll_if_needed(self) -> None:
        if self.feed is not None and self.feed.state == "polling" and not self.paused:
            self.jobs_screen.reload_around_cursor()
            self.request_stats()

    def _show_throughput(self) -> None:
        if self.feed is not None and not self.paused:
            completed, failed = self.feed.throughput.series(60)
            self.jobs_screen.show_throughput(completed, failed)

    def _show_workers(self) -> None:
        if self.monque is None or not self.config.start_workers:
            return
        from .widgets.console_header import ConsoleHeader

        names = self.monque.registered_names
        self.jobs_screen.query_one(ConsoleHeader).worker_info = f"workers: {', '.join(names)}" if names else ""

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        if not paused:
            self._apply_pending_changes()
            self.request_stats()

    def _stats_tick(self) -> None:
        """Timer refresh, backing off on big stores: wait at least 4x what the last count cost."""
        if time.monotonic() - self._stats_done_at >= 4 * self._stats_cost:
            self.request_stats()

    def request_stats(self) -> None:
        """Refresh counts; never two refreshes at once, and one more if asked meanwhile."""
        if self.monque is None or (self.paused and self.jobs_screen.stats is not None):
            return
        if self._stats_busy:
            self._stats_again = True
            return
        self._stats_busy = True
        self._load_stats()

    @work(group="stats")
    async def _load_stats(self) -> None:
        try:
            while True:
                self._stats_again = False
                started = time.monotonic()
                monque = self.monque
                if monque is None:
                    return
                query = self.jobs_screen.query_state
                stats = await monque.get_queue_stats(query.name)
                if query.search or query.ranges:
                    matching: int | None = await monque.count_jobs(query.list_filter())
                else:
                    matching = stats.total if query.status is None else stats.count(query.status)
                if query.is_empty:
                    matching = None
                self.jobs_screen.show_stats(stats, matching)
                self._stats_done_at = time.monotonic()
                self._stats_cost = self._stats_done_at - started
                if not self._stats_again:
                    return
        finally:
            self._stats_busy = False

    # -- screens --------------------------------------------------------------------------------------------
    def show_job(self, job_id: str) -> None:
        self.push_screen(JobDetailScreen(job_id, self.clock))

    def action_show_queues(self) -> None:
        if not isinstance(self.screen, QueuesScreen):
            self.push_screen(QueuesScreen())

    def action_show_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.read_only))

    def show_jobs_named(self, name: str) -> None:
        while self.screen is not self.jobs_screen and len(self.screen_stack) > 1:
            self.pop_screen()
        screen = self.jobs_screen
        screen._set_query(replace(screen.query_state, name=name))

    # -- acting on jobs ------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return True

    def act_on_jobs(self, kind: ActionKind, jobs: list[Job], marked: bool) -> None:
        if self.read_only:
            self.notify("Read-only console: actions are disabled (started with --read-only).", severity="warning")
            return
        if not jobs:
            self.notify("No job under the cursor.", severity="warning")
            return
        plan = plan_for_jobs(kind, jobs, marked)
        if plan.count == 0:
            self.notify(f"Nothing to {kind.value}: {plan.details[-1] if plan.skipped else 'no job selected'}",
                        severity="warning")
            return
        if kind is ActionKind.RESCHEDULE:
            question = f"Reschedule {plan.subject}: when should it run?"

            def chosen(moment: Any) -> None:
                if moment is not None:
                    self.run_plan(replace(plan, run_at=moment))

            self.push_screen(WhenScreen(question, self.clock, blink=self.live), chosen)
            return
        self.confirm(plan)

    @work(group="plan")
    async def act_on_query(self, kind: ActionKind, query: JobQuery) -> None:
        if self.read_only:
            self.notify("Read-only console: actions are disabled (started with --read-only).", severity="warning")
            return
        if self.monque is None:
            return
        if query.bulk_blocker is not None:
            self.notify(query.bulk_blocker, severity="warning")
            return
        plan = await plan_bulk(self.monque, kind, query)
        if plan.count == 0:
            self.notify(f"Nothing to {kind.value}: no job matches ({plan.subject}).", severity="warning")
            return
        self.confirm(plan)

    def confirm(self, plan: ActionPlan) -> None:
        def answered(ok: bool | None) -> None:
            if ok:
                self.run_plan(plan)
            else:
                self.notify("Nothing changed.", timeout=2)

        self.push_screen(ConfirmScreen(plan, blink=self.live), answered)

    @work(group="plan")
    async def run_plan(self, plan: ActionPlan) -> None:
        if self.monque is None or self.read_only:
            return
        try:
            grown = await recount(self.monque, plan)
            if grown is not None:
                self.notify(f"More jobs match now than you confirmed ({plan.count:,} → {grown.count:,}); "
                            "confirm again.", severity="warning")
                self.confirm(grown)
                return
            message = await execute(self.monque, plan)
        except Exception as error:  # noqa: BLE001 - shown to the operator
            self.notify(f"{plan.kind.value.capitalize()} failed: {error}", severity="error", timeout=10)
            return
        self.notify(message, title=plan.kind.value.capitalize())
        if not plan.is_bulk and plan.job_ids is not None:
            self.jobs_screen.action_done()
        if self.feed is None or self.feed.state != "live":
            self.jobs_screen.reload_around_cursor()
        if isinstance(self.screen, JobDetailScreen):
            if plan.kind is ActionKind.DELETE and self.screen.job_id in (plan.job_ids or ()):
                self.screen.dismiss(None)
            else:
                self.screen.load()
        self.request_stats()


__all__ = ["MonqueConsole", "plural"]

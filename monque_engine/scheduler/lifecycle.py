"""Background duties while the scheduler runs: poll, heartbeat, stale recovery, retention,
and the change-feed listener that wakes the processor.

Each duty is its own task with its own error handling, and each re-arms only after its
previous round finished, so a slow database never piles rounds up.

The change feed is followed by the engine's one ``ResilientWatch`` (resilient_watch.py:
reconnect after 1, 2, 4 s, fall back to polling after three failures in a row, back to the
feed when it works, a failure counting until the stream has proved itself by time); this
module maps its transitions to the ``changestream:*`` events and polls faster while in
fallback.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import cast

from ..errors import MonqueError
from ..events import ChangeStreamEventName
from ..job import ChangeEvent, JobStatus
from ..store import ports
from ..timeutil import now_ms
from .clockjump import WallClockJumps
from .context import SchedulerContext
from .fleet import Fleet
from .processor import JobProcessor
from .resilient_watch import FALLBACK_RETRY_INTERVAL, RECONNECT_DELAYS, FeedState, ResilientWatch, WatchEvent
from .retention import Retention
from .stop_budget import StopBudget

log = logging.getLogger("monque_engine.lifecycle")

#: A wake-up heard on the change feed is delayed by a random 0 … this many seconds, on a
#: store that asks for it (``wake_jitter_s`` on the feed: MongoDB, where every worker of a
#: name hears the same insert at once and 20 workers raced for the same first document;
#: issue 36 item 6). Bounded and small next to a claim's w:majority round trip times the
#: workers; a job due later gets the same spread on its timer. SQLite asks for none.
WAKE_JITTER_MAX_S = 0.05
#: A heartbeat later than this (or than one heartbeat interval, if longer) means the event
#: loop was blocked: warn, naming the likely cause.
STALL_WARNING_MIN = 1.0


#: The name of a started worker's poll task: how ``SyncMonque.wait`` tells that the loop it
#: is called from runs a worker (``sync/client.py``).
POLL_TASK = "monque-poll"


class Lifecycle:
    def __init__(
        self,
        ctx: SchedulerContext,
        processor: JobProcessor,
        fleet: Fleet,
        *,
        liveness: ports.Liveness,
        feed: ports.Feed,
        retention: ports.Retention,
    ) -> None:
        self._ctx = ctx
        self._processor = processor
        self._fleet = fleet
        self._liveness = liveness
        self._feed = feed
        self._tasks: list[asyncio.Task[None]] = []
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._watch: ResilientWatch | None = None
        self.reconnect_delays = RECONNECT_DELAYS
        self.fallback_retry_interval = FALLBACK_RETRY_INTERVAL
        self._poll_now = asyncio.Event()
        #: Seconds of wake jitter (``WAKE_JITTER_MAX_S`` at most) and the random source.
        self.wake_jitter = min(WAKE_JITTER_MAX_S, float(getattr(feed, "wake_jitter_s", 0.0)))
        self._random = random.Random()
        self._refilters: set[asyncio.Task[None]] = set()
        policy = ctx.options.job_retention
        self.retention = None if policy is None else Retention(retention, policy, ctx.instance_id)
        #: A jump under a second is drift or a slow round, not a clock step (ADR 0012).
        self._clock_jumps = WallClockJumps(tolerance_ms=1000, settle_seconds=ctx.options.lock_timeout)

    # -- start / stop ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Open the change feed first, then start the duties.

        The feed is opened before anything is claimed so that every commit after start()
        returns is heard; what was committed before is found by the first poll.
        """
        loop = asyncio.get_running_loop()
        options = self._ctx.options
        # Registered and with the paused set loaded before the processor's first claim.
        await self._fleet.join()
        self._watch = ResilientWatch(
            self._feed,
            self._on_change,
            self._on_watch_event,
            full_document=False,
            statuses=(JobStatus.PENDING,),
            names=lambda: tuple(self._processor.workers),
            reconnect_delays=self.reconnect_delays,
            fallback_retry_interval=self.fallback_retry_interval,
        )
        await self._watch.start()
        self._processor.on_new_name = self._names_changed
        self._tasks = [loop.create_task(self._poll_loop(), name=POLL_TASK)]
        # Paused names set by other processes are followed within one poll interval.
        self._tasks.append(
            loop.create_task(self._every(options.poll_interval, self._fleet.refresh_paused), name="monque-control")
        )
        if options.recover_stale_jobs:
            self._tasks.append(
                loop.create_task(
                    self._every(options.effective_stale_recovery_interval, self.recover_stale), name="monque-stale"
                )
            )
        retention = options.job_retention
        if retention is not None and (retention.completed is not None or retention.failed is not None):
            self._tasks.append(loop.create_task(self._retention_loop(), name="monque-retention"))
        self._heartbeat_task = loop.create_task(self._heartbeat_loop(), name="monque-heartbeat")

    async def stop_background(self, budget: StopBudget | None = None) -> None:
        """Stop everything but the heartbeat, which keeps running while jobs drain. The
        lease release and the stream's close are store steps, bounded by ``budget``."""
        budget = budget if budget is not None else StopBudget()
        self._processor.on_new_name = None
        tasks, self._tasks = self._tasks + list(self._refilters), []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.retention is not None:
            try:
                # Another process takes over at its next tick.
                await budget.run(
                    "releasing the retention lease", self.retention.release(), "the lease expires by itself"
                )
            except Exception:
                log.warning("could not release the retention lease; it expires by itself", exc_info=True)
        watch = self._watch
        if watch is not None:
            # Emits changestream:closed if the stream was live, as upstream, however long
            # closing takes: on MongoDB that is killCursors, which waits for a server.
            await budget.run(
                "closing the change stream", watch.stop(), "the server drops the cursor after its idle timeout"
            )

    async def stop_heartbeat(self) -> None:
        task, self._heartbeat_task = self._heartbeat_task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    # -- duties -----------------------------------------------------------------------------------
    async def _every(self, interval: float, duty: Callable[[], Awaitable[object]]) -> None:
        from ..event_payloads import JobErrorEvent

        while True:
            await asyncio.sleep(interval)
            try:
                await duty()
            except MonqueError as error:
                self._ctx.events.emit("job:error", JobErrorEvent(error))
            except Exception as error:
                log.exception("background duty failed")
                self._ctx.events.emit("job:error", JobErrorEvent(error))

    async def _heartbeat_loop(self) -> None:
        """``_every(heartbeat_interval, _heartbeat)``, and say so when the loop was blocked.

        An async handler that blocks (``time.sleep``, CPU-bound work, blocking I/O) stops
        the heartbeat with everything else; past ``lock_timeout`` its job is handed to
        another worker and runs twice, and this instance's late outcome is refused. The
        sleep's own lateness measures the block (a slow heartbeat write does not count).
        """
        from ..event_payloads import JobErrorEvent

        loop = asyncio.get_running_loop()
        interval = self._ctx.options.heartbeat_interval
        threshold = max(interval, STALL_WARNING_MIN)
        while True:
            self._processor.long_ran.clear()
            asleep = loop.time()
            await asyncio.sleep(interval)
            late = loop.time() - asleep - interval
            if late > threshold:
                self._warn_stalled(late)
            try:
                await self._heartbeat()
            except MonqueError as error:
                self._ctx.events.emit("job:error", JobErrorEvent(error))
            except Exception as error:
                log.exception("background duty failed")
                self._ctx.events.emit("job:error", JobErrorEvent(error))

    def _warn_stalled(self, late: float) -> None:
        options = self._ctx.options
        # The handler that blocked has usually ended meanwhile: name the long runs too.
        names = sorted({job.name for job in self._processor.active_jobs} | self._processor.long_ran)
        log.warning(
            "The event loop was blocked for %.1f s, so heartbeats were that late (due every %g s; a job whose "
            "heartbeat is older than lock_timeout %g s is handed to another worker and runs twice). An async "
            "handler probably blocks (time.sleep, CPU-bound work, blocking I/O)%s: make it a plain def, which "
            "runs in a thread, or await non-blocking calls",
            late,
            options.heartbeat_interval,
            options.lock_timeout,
            f"; running: {', '.join(names)}" if names else "",
        )

    async def _heartbeat(self) -> None:
        try:
            running = self._processor.heartbeat_ids()
            if running:
                # Only the jobs this process runs: one it claimed but dropped (its outcome
                # could not be written) ages out and stale recovery returns it.
                await self._liveness.heartbeat(self._ctx.instance_id, now_ms(), running)
                if not self.feed_live:
                    # No feed to carry stop requests (MongoDB without change streams, or a
                    # feed in fallback): look for them on the jobs running here.
                    await self._processor.look_for_stops()
        finally:
            # The registry record and counters ride on the same tick, even if the jobs'
            # heartbeat failed (each failure is reported on its own, as a job:error).
            await self._fleet.beat_guarded()

    async def recover_stale(self) -> int:
        from ..event_payloads import CountEvent

        now = now_ms()
        judged = self._clock_jumps.judging_now(now)  # before a clock jump's heartbeats are renewed: the old clock
        count = await self._liveness.recover_stale(judged - int(self._ctx.options.lock_timeout * 1000), now)
        if count > 0:
            self._ctx.events.emit("stale:recovered", CountEvent(count))
            self._processor.wake()
        return count

    async def purge_expired(self) -> int:
        """An explicit purge (``Monque.purge_expired_jobs``): see retention.py."""
        return 0 if self.retention is None else await self.retention.now()

    async def _retention_loop(self) -> None:
        from ..event_payloads import JobErrorEvent

        retention = self._ctx.options.job_retention
        duty = self.retention
        assert retention is not None and duty is not None
        try:
            await duty.round()
        except Exception as error:  # noqa: BLE001 - as in _every: the loop must survive to try again
            self._ctx.events.emit("job:error", JobErrorEvent(error))
        await self._every(retention.interval, duty.round)

    def poll_soon(self) -> None:
        self._poll_now.set()

    async def _poll_loop(self) -> None:
        """The safety net: wake every worker, and arm a timer for the next future job."""
        from ..event_payloads import JobErrorEvent

        processor = self._processor
        while True:
            processor.wake()
            try:
                # Per name: one name's overdue job must not hide another name's future one,
                # and (rearm) its own future ones either: jobs stored before start() or
                # while the feed was down are known only from this read.
                for name in list(processor.workers):
                    due = await processor.next_due_ms(name)
                    if due is not None:
                        processor.wake_at(name, due, rearm=True)
            except MonqueError as error:
                self._ctx.events.emit("job:error", JobErrorEvent(error))
            except Exception as error:
                log.exception("poll round failed")
                self._ctx.events.emit("job:error", JobErrorEvent(error))
            options = self._ctx.options
            interval = options.safety_poll_interval if self.feed_live else options.poll_interval
            self._poll_now.clear()
            try:
                await asyncio.wait_for(self._poll_now.wait(), interval)
            except TimeoutError:
                pass

    # -- change feed ----------------------------------------------------------------------------
    @property
    def feed_state(self) -> FeedState:
        return self._watch.state if self._watch is not None else "stopped"

    @property
    def feed_live(self) -> bool:
        return self.feed_state == "live"

    def _on_change(self, change: ChangeEvent) -> None:
        if change.stop_requested:  # an operator asks to stop a running job (issue 37)
            self._processor.stop_heard(change.job_id)
            return
        self._route(change.name, change.status, change.next_run_at_ms, change.operation)

    def _on_watch_event(self, event: WatchEvent) -> None:
        from ..event_payloads import ChangeStreamEvent

        if event.kind == "history_lost":
            self.poll_soon()  # changes were missed: the poll finds the due work
            return
        name = cast(ChangeStreamEventName, f"changestream:{event.kind}")  # history_lost returned above
        self._ctx.events.emit(name, ChangeStreamEvent(error=event.error, reason=event.reason))
        if event.kind == "fallback" or (event.kind == "connected" and event.previous == "fallback"):
            self.poll_soon()  # re-arm the poll at the interval of the new state

    def _names_changed(self, _name: str) -> None:
        """A name registered while running: reopen the feed so its filter includes it."""
        watch = self._watch
        if watch is None:
            return
        task = asyncio.get_running_loop().create_task(watch.refilter(), name="monque-feed-refilter")
        self._refilters.add(task)
        task.add_done_callback(self._refilters.discard)

    def _route(self, name: str | None, status: JobStatus | None, next_run_at_ms: int | None, operation: str) -> None:
        """Wake the workers a change may concern. A worker's stream carries no post-image
        (issue 36 item 2), so an update names no job name: a pending one wakes every
        registered name, and a ``nextRunAt``-only update (a reschedule: status unknown) is
        taken as possibly pending. Anything else not pending wakes nobody."""
        if operation == "delete":
            return
        if status is not JobStatus.PENDING and not (status is None and operation == "update" and next_run_at_ms):
            return
        processor = self._processor
        if name is not None and name not in processor.workers:
            return
        names = [name] if name is not None else list(processor.workers)
        jitter = self._random.uniform(0.0, self.wake_jitter) if self.wake_jitter > 0 else 0.0
        for each in names:
            if next_run_at_ms is None or next_run_at_ms <= now_ms():
                if jitter > 0:
                    asyncio.get_running_loop().call_later(jitter, processor.wake, each)
                else:
                    processor.wake(each)
            else:
                processor.wake_at(each, next_run_at_ms + int(jitter * 1000))

"""The headless processor pool behind ``monque-tui --worker`` (and ``--demo --headless``).

Runs the engine until SIGINT, SIGTERM or SIGHUP, then stops it the way the engine promises: stop
claiming, let in-flight jobs finish within ``shutdown_timeout``, close the store. A second
signal means "now": the process exits at once with 128 + the signal number and whatever is
still running stays ``processing`` for stale recovery, which is what a crash would leave
and what the engine is built to clean up.

Nothing here imports Textual: this is the mode that runs in containers and on servers.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from monque_engine import (
    ConnectionError,
    InvalidOptionError,
    JobErrorEvent,
    Monque,
    MonqueError,
    StoreDamagedError,
    StoreLostError,
)
from monque_engine.scheduler.monque import SHUTDOWN_GRACE
from monque_engine.store.urls import mask_secrets, mask_url

from ..common.exitcodes import STOP_SIGNALS, CliError, ExitCode
from .app_loader import Setup
from .child_link import ChildLink
from .job_log import JobEventLog, emit
from .logging_setup import flush_logging, tag_slot
from .metrics_listen import listen
from .setup_stop import LOOP_ANSWER_S, LifelineStop, SetupInterrupted, interruptible


@dataclass(slots=True)
class WorkerConfig:
    #: Store URL; ignored when ``instance`` is given (the instance is bound to its own store).
    url: str
    monque_options: dict[str, Any] = field(default_factory=dict)
    instance: Monque | None = None
    setup: Setup | None = None
    app_label: str = "app"
    summary_interval: float = 30.0
    #: Stop cleanly after this many seconds; None runs until a signal.
    duration: float | None = None
    mode: str = "worker"
    #: ``--metrics``: (host, port) to serve Prometheus metrics on; None for none.
    metrics: tuple[str, int] | None = None
    #: ``MonqueCollector`` options (``names``, ``max_names``) for ``--metrics``.
    metrics_options: dict[str, Any] = field(default_factory=dict)


#: How long past its jobs' shutdown_timeout and the cancelled handlers' grace a stop may find
#: its event loop blocked before the worker gives up on it (a loop that answers is left to
#: the stop's own bounds: the store's steps may take 15 s more).
STOP_CLOSE_MARGIN = 5.0


class StopRequest:
    """Counts stop signals: the first asks for a graceful stop, the second forces the exit.

    A supervisor (``--processes``) asks its children to stop over their lifeline pipe, not by
    a signal (``request``): a child that also got the signal itself (``pkill -f``, systemd's
    control-group kill, a terminal's Ctrl-C to the whole group) heard one stop, not two, and
    finishes its jobs. Only a second *signal* forces; the supervisor forces with ``force``.
    """

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.signal_name: str | None = None
        self._heard = 0
        self._installed: list[int] = []
        #: Seconds a stop may take before a loop found blocked then is given up on (None:
        #: unbounded); set from the worker's shutdown_timeout once it is known.
        self.bound: float | None = None
        #: Set when the worker has finished (``run_worker`` returned): nothing left to bound.
        self.finished = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._bounding = False

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        for sig in STOP_SIGNALS:
            try:
                loop.add_signal_handler(sig, self._received, sig)
                self._installed.append(sig)
            except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix or not main thread
                pass
        # The loop hears a signal only when it runs: an async handler blocking it (time.sleep,
        # a blocking client) left the worker deaf to every signal, the second included, and
        # only SIGKILL ended it. The Python-level handler runs in the main thread between
        # bytecodes (not inside a C call that holds the GIL) whatever the loop does (the loop
        # still learns of the signal from its wakeup fd): it forces the exit on a second
        # signal, and bounds the first's stop.
        for number in self._installed:
            signal.signal(number, self._heard_in_main_thread)

    def _heard_in_main_thread(self, sig: int, _frame: object) -> None:
        self._heard += 1
        if self._heard > 1:
            self.force(sig, f"second {signal.Signals(sig).name}")
        else:
            self.arm(signal.Signals(sig).name)

    def arm(self, why: str) -> None:
        """Watch the stop under way (a signal, or the supervisor's request): said at once if
        the loop does not answer, and ended with exit 5 if past ``bound`` it still does not.
        A loop that answers is left to the stop's own bounds, however long the store takes."""
        if self._bounding or self.bound is None or self._loop is None:
            return
        self._bounding = True
        threading.Thread(
            target=self._watch_the_loop, args=(why, self.bound), name="monque-stop-bound", daemon=True
        ).start()

    def _watch_the_loop(self, why: str, bound: float) -> None:
        if self.finished.wait(LOOP_ANSWER_S):
            return
        if not self._loop_answers():
            _last_words(
                logging.WARNING,
                "worker:stopping",
                f"{why} received, but the event loop is blocked (an async handler that does not await): the "
                f"worker stops once it is free, or exits in {bound:g} s; send a signal again to exit now",
                reason=why,
            )
        if self.finished.wait(max(0.0, bound - LOOP_ANSWER_S)):
            return
        while not self.finished.is_set():
            if not self._loop_answers():
                _last_words(
                    logging.ERROR,
                    "worker:shutdown-timeout",
                    f"still running {bound:g} s after {why}: the event loop is blocked (an async handler that does not "
                    "await: time.sleep, a blocking client, CPU work); exiting now; in-flight jobs stay processing "
                    "until stale recovery returns them",
                    reason=why,
                )
                os._exit(ExitCode.SHUTDOWN_TIMEOUT)
            self.finished.wait(1.0)

    def _loop_answers(self) -> bool:
        answered = threading.Event()
        try:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(answered.set)
        except RuntimeError:  # the loop is closed: the worker has finished
            return True
        return answered.wait(LOOP_ANSWER_S) or self.finished.is_set()

    def remove(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()

    def _received(self, sig: int) -> None:
        """The first stop signal, as the loop hears it: a second one never gets here, its
        Python-level handler (``_heard_in_main_thread``) exits first."""
        name = signal.Signals(sig).name
        if self.event.is_set():  # the supervisor asked first: the same stop
            emit(
                logging.INFO,
                "worker:stopping",
                f"{name} received: already finishing in-flight jobs, as the supervisor asked "
                "(send it again to exit now)",
                signal=name,
            )
            return
        self.signal_name = name
        emit(
            logging.WARNING,
            "worker:stopping",
            f"{name} received: finishing in-flight jobs (send it again to exit now)",
            signal=name,
        )
        self.event.set()

    def request(self, why: str) -> None:
        """A graceful stop asked without a signal (the supervisor, over the lifeline): the
        same stop as a first signal, whichever of the two comes first."""
        emit(
            logging.INFO if self.event.is_set() else logging.WARNING,
            "worker:stop-requested",
            f"{why}: " + ("already finishing in-flight jobs" if self.event.is_set() else "finishing in-flight jobs"),
            reason=why,
        )
        if not self.event.is_set():
            self.signal_name = why
            self.event.set()

    def force(self, sig: int, why: str) -> None:
        """Exit now, with 128 + ``sig``: what is running stays processing for stale recovery.
        From a signal handler or the lifeline's thread: the exit happens whatever the line
        meets (a write the handler interrupted raises "reentrant call")."""
        try:
            emit(
                logging.ERROR,
                "worker:forced",
                f"{why}: exiting now; in-flight jobs stay processing until stale recovery returns them",
                signal=signal.Signals(sig).name,
            )
            flush_logging()
        finally:
            os._exit(ExitCode.FORCED_BASE + sig)


def _last_words(level: int, event: str, message: str, **fields: Any) -> None:
    """Log from a thread of its own, waited for 1 s at most: the blocked main thread may hold
    a handler's lock, and the exit that follows must not wait on it."""

    def say() -> None:
        emit(level, event, message, **fields)
        flush_logging()

    speaker = threading.Thread(target=say, name="monque-last-words", daemon=True)
    speaker.start()
    speaker.join(1.0)


def _on_loop(loop: asyncio.AbstractEventLoop, call: Callable[..., Any], *args: Any) -> None:
    """From the lifeline's thread: run ``call`` on the loop, unless the worker has finished."""
    try:
        loop.call_soon_threadsafe(call, *args)
    except RuntimeError:  # the loop is closed: the worker stopped already
        pass


def _build(config: WorkerConfig) -> Monque:
    if config.instance is not None:
        return config.instance
    try:
        return Monque(config.url, **config.monque_options)
    except InvalidOptionError as error:
        raise CliError(str(error), ExitCode.USAGE) from None
    except MonqueError as error:
        raise CliError(mask_secrets(str(error), config.url), ExitCode.STORE) from None


def _require_handlers(monque: Monque, config: WorkerConfig) -> None:
    if not monque.registered_names:
        raise CliError(
            f"{config.app_label} registered no handlers; register some with monque.register(name, handler) "
            "or @monque.worker(name)",
            ExitCode.APP,
        )


async def run_worker(config: WorkerConfig) -> int:
    """Run until a signal (or ``duration``); return the exit code. Raises ``CliError``."""
    stop = StopRequest()
    try:
        return await _run_worker(config, stop)
    finally:
        stop.finished.set()  # a stop's watch (``StopRequest.arm``) has nothing left to bound


async def _run_worker(config: WorkerConfig, stop: StopRequest) -> int:
    loop = asyncio.get_running_loop()
    stop.install(loop)
    link = ChildLink.from_environment()  # started by --processes' supervisor: tell it, and follow it
    lifeline_stop = LifelineStop()
    if link is not None:

        def supervisor_stop(why: str) -> None:
            _on_loop(loop, stop.request, why)
            lifeline_stop.request(loop, why)  # a setup blocking the loop would not hear it
            stop.arm(why)  # nor a handler blocking it: the stop is bounded as a signal's is

        link.watch_lifeline(
            supervisor_stop,
            # From the lifeline's thread, not through the loop: a blocked loop outlived the
            # supervisor's forced exit (its children have a process group of their own).
            lambda sig: stop.force(sig, f"the supervisor forces the stop ({sig.name})"),
        )
        tag_slot(link.slot)
    monque = _build(config)
    # A stop's own bound (the jobs' shutdown_timeout, their cancelled handlers' grace) and
    # time to close the store: past it, the loop is taken to be blocked.
    stop.bound = monque.options.shutdown_timeout + SHUTDOWN_GRACE + STOP_CLOSE_MARGIN
    if config.instance is not None:
        _require_handlers(monque, config)
    url = mask_url(monque.display_url)
    try:
        opened = await _initialize_unless_stopped(monque, stop)
    except ConnectionError as error:
        raise CliError(f"{url}: {mask_secrets(str(error), config.url)}", ExitCode.STORE) from None
    if not opened:
        emit(logging.INFO, "worker:stopped", f"stopped before it started ({stop.signal_name} first)", code=0)
        return ExitCode.OK
    if monque.store.read_only:
        await monque.close()
        raise CliError(
            f"{url} is opened read-only (mode=ro), but {config.mode} mode claims and completes jobs; "
            "drop mode=ro from the URL",
            ExitCode.USAGE,
        )
    events = JobEventLog(monque)
    summary_task: asyncio.Task[None] | None = None
    lost = _store_lost_signal(monque)
    metrics: Any = None
    try:
        if config.metrics is not None:
            metrics = _serve_metrics(monque, *config.metrics, config.metrics_options)
        if config.setup is not None:
            try:
                # A setup blocking the loop hears a stop too: a signal, or the supervisor's request.
                with interruptible(config.setup, STOP_SIGNALS), lifeline_stop.setup_running():
                    set_up = await _unless_stopped(config.setup(monque), stop)
            except ConnectionError as error:  # the demo's seeding writes; an --app's setup reports its own
                raise CliError(f"{url}: {mask_secrets(str(error), config.url)}", ExitCode.STORE) from None
            except SetupInterrupted as interrupted:  # it blocked the loop: the signal interrupted it
                set_up = False
                stop.signal_name = stop.signal_name or lifeline_stop.reason or interrupted.signal_name
                stop.remove(loop)  # that signal is this stop, not a first one still to come; another forces
            if not set_up:  # a setup that hangs (a server that never answers) held the first stop
                emit(
                    logging.INFO,
                    "worker:stopped",
                    f"stopped before it started, while the setup of {config.app_label} ran ({stop.signal_name} first)",
                    code=0,
                )
                return ExitCode.OK
            _require_handlers(monque, config)
        events.attach()
        if stop.event.is_set():  # a signal arrived while starting: nothing ran, nothing to stop
            emit(logging.INFO, "worker:stopped", f"stopped before it started ({stop.signal_name} first)", code=0)
            return ExitCode.OK
        paused = await _paused_here(monque)
        try:
            await monque.start()
        except ConnectionError as error:  # the store went away or refused writes between open and start
            raise CliError(f"{url}: {mask_secrets(str(error), config.url)}", ExitCode.STORE) from None
        # From start() on, with no await before the report: the first claimed job runs at the
        # next one, and a job that kills its process (a segfault) or blocks the loop once ran
        # before the supervisor heard "started" (a crash loop at start, exit 7, was diagnosed;
        # a kill line named the instance "None"), and before this line was logged.
        emit(
            logging.INFO,
            "worker:started",
            # Each name's own concurrency, as registered: the line once gave the worker default
            # ("email.send (concurrency 5)" for a concurrency=10 registration; issue 28).
            f"{config.mode} started on {url} as {monque.instance_id}: "
            + ", ".join(
                f"{name} (concurrency {size}{', PAUSED' if name in paused else ''})"
                for name, size in monque.registered_concurrency.items()
            )
            + f" (shutdown timeout {monque.options.shutdown_timeout:g} s)",
            url=url,
            instance_id=monque.instance_id,
            names=monque.registered_names,
            concurrency=monque.options.worker_concurrency,
            concurrency_by_name=monque.registered_concurrency,
            paused=sorted(paused),
            pid=os.getpid(),
            **({} if link is None else {"supervisor": link.supervisor_id, "slot": link.slot}),
        )
        if link is not None:
            link.report_started(monque.instance_id, None if metrics is None else metrics.address[1])
        for name, due in sorted(paused.items()):
            # A paused name looked like any other in the log while 2.5k of its jobs were due (issue 40).
            emit(
                logging.WARNING,
                "worker:paused-name",
                f"{name} is paused in the store: this worker claims none of its jobs "
                f"({due:,} due now) until `monque-tui resume {name}`",
                name=name,
                due=due,
            )
        if config.summary_interval > 0:
            summary_task = loop.create_task(_summaries(events, config.summary_interval))
        await _wait_for_stop(stop, config.duration, lost.event)
        if lost.error is not None:
            damaged = isinstance(lost.error, StoreDamagedError)
            emit(
                logging.ERROR,
                "worker:store-lost",
                f"stopping: {url} is damaged; check it and restore a backup before starting the worker again"
                if damaged
                else f"stopping: {url} can no longer be used by this process; start it again to open "
                "the file now at that path",
                reason="store-damaged" if damaged else "store-lost",
            )
        elif not stop.event.is_set():
            emit(
                logging.INFO,
                "worker:stopping",
                f"ran for {config.duration:g} s: finishing in-flight jobs",
                reason="duration",
            )
        await monque.stop()
    finally:
        if summary_task is not None:
            summary_task.cancel()
            await asyncio.gather(summary_task, return_exceptions=True)
        if metrics is not None:
            await asyncio.to_thread(metrics.close)  # waits for a scrape in progress, not on the loop it reads on
        await monque.close()
    await events.summary(final=True)
    if lost.error is not None:
        raise CliError(f"{url}: {mask_secrets(str(lost.error), config.url)}", ExitCode.STORE)
    if events.counters.shutdown_timed_out:
        emit(
            logging.ERROR,
            "worker:stopped",
            "stopped; shutdown timed out and left jobs for stale recovery",
            code=int(ExitCode.SHUTDOWN_TIMEOUT),
        )
        return ExitCode.SHUTDOWN_TIMEOUT
    emit(logging.INFO, "worker:stopped", "stopped cleanly", code=0)
    return ExitCode.OK


def _serve_metrics(monque: Monque, host: str, port: int, options: dict[str, Any]) -> Any:
    """Start ``/metrics`` (``monque_engine.metrics``) before any job runs, so every one is counted."""
    from monque_engine.metrics import MetricsUnavailableError

    try:
        return listen(lambda: monque.metrics(**options).serve(port, host), host, port, "Prometheus metrics")
    except MetricsUnavailableError as error:
        raise CliError(str(error).split(" (", 1)[0], ExitCode.USAGE) from None


async def _initialize_unless_stopped(monque: Monque, stop: StopRequest) -> bool:
    """Open the store; False when a stop signal came first (the open is then cancelled).

    A store locked by another process (a long transaction, a ``sqlite3`` shell in ``BEGIN``)
    kept the worker opening it for the whole busy timeout: the first SIGTERM only asked it to
    stop after that. Nothing has run yet, so there is nothing to finish: the open is given up.
    """
    return await _unless_stopped(monque.initialize(), stop)


async def _unless_stopped(step: Awaitable[Any], stop: StopRequest) -> bool:
    """Await a starting step (the store's open, the --app's setup); False when a stop came
    first: the step is then cancelled and awaited, what it raised meanwhile dropped.

    Nothing is claimed before ``monque.start()``, so a stop while starting has nothing to
    finish: an async setup hung on a server that never answers kept a single worker until a
    second signal, and a ``--processes`` group until its --shutdown-timeout (exit 5).
    """
    starting = asyncio.ensure_future(step)
    stopping = asyncio.ensure_future(stop.event.wait())
    try:
        await asyncio.wait((starting, stopping), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        starting.cancel()  # this task was cancelled: the step goes with it
        raise
    finally:
        stopping.cancel()
    if starting.done():
        starting.result()  # raises what the step raised
        return True
    starting.cancel()
    await asyncio.wait((starting,))  # the step cleans up what it had opened (no lock wait outlives it)
    if not starting.cancelled():
        starting.exception()  # the step failed as it was given up: nothing more to say
    return False


class _StoreLost:
    """Set when the engine reports its store lost for good (``StoreLostError``: the SQLite file
    was deleted, replaced or found damaged). The worker used to run on, every poll, heartbeat
    and completion failing, and then exit 0 "stopped cleanly"; it stops instead, and exits 3."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.error: StoreLostError | None = None

    def __call__(self, event: JobErrorEvent) -> None:
        if isinstance(event.error, StoreLostError) and self.error is None:
            self.error = event.error
            self.event.set()


def _store_lost_signal(monque: Monque) -> _StoreLost:
    lost = _StoreLost()
    monque.on("job:error", lost)
    return lost


async def _wait_for_stop(stop: StopRequest, duration: float | None, lost: asyncio.Event) -> None:
    """Until a signal, the store's loss, or ``duration`` seconds."""
    waiters = [asyncio.ensure_future(stop.event.wait()), asyncio.ensure_future(lost.wait())]
    try:
        await asyncio.wait(waiters, timeout=duration or None, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


async def _paused_here(monque: Monque) -> dict[str, int]:
    """The registered names paused in the store, each with its jobs due now. Said at start only:
    a failed read (a store that just went away) leaves the start line as it was."""
    try:
        paused = await monque.paused()
        mine = [name for name in monque.registered_names if name in paused]
        if not mine:
            return {}
        due = {health.name: health.due for health in await monque.queue_health(window_minutes=1)}
    except MonqueError:
        return {}
    return {name: due.get(name, 0) for name in mine}


async def _summaries(events: JobEventLog, interval: float) -> None:
    while True:
        await asyncio.sleep(interval)
        await events.summary()


def run_worker_blocking(config: WorkerConfig) -> int:
    """``asyncio.run`` the worker, then exit hard if a handler thread outlived the shutdown.

    Sync handlers run in threads that cannot be cancelled; after a shutdown timeout the
    interpreter would otherwise wait for them at exit, turning "timed out" into "hangs".
    """
    with asyncio.Runner() as runner:
        code = runner.run(run_worker(config))
        if code == ExitCode.SHUTDOWN_TIMEOUT:
            # Leaving the runner would join the default executor, i.e. wait for the stuck thread.
            flush_logging()
            os._exit(code)
    return int(code)

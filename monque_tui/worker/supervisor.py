"""``monque-tui --worker --processes N``: N worker processes under one supervisor.

Why processes: a handler that uses the CPU holds the GIL, so one worker process uses one
core however high its concurrency. The supervisor starts N ordinary ``monque-tui --worker``
processes (``python -m monque_tui --worker``, settings in their environment), each with its
own instance id and the registered concurrency, and does nothing else: it claims no job and
opens no store. What it does:

* **restarts** a child that dies, after a backoff that doubles while the child keeps dying
  soon after its start (0.5 s up to 30 s; a child that ran ``STABLE_SECONDS`` starts again
  after the first step), logging why (exit code and its meaning, or the signal);
* **stops on a crash loop**: a child that exits before its worker has started (the report
  line of ``child_link``) ``START_FAILURES`` times in a row stops the whole group with an
  error naming the slot and the code. When no child has ever started and the exit code is
  one of the worker's own "will fail again" codes (2 usage, 3 store, 4 app), the group
  stops at the first one with that code: restarting cannot fix a bad --app;
* **on SIGINT / SIGTERM / SIGHUP asks every child to stop gracefully** over its lifeline
  pipe (``child_link``), not by a signal: under ``pkill -f monque-tui`` or systemd's
  control-group kill each child also gets the signal itself, and a forwarded signal made
  that two, which is "exit now". A child counts the request and one signal as one stop.
  The supervisor waits for their graceful stop up to ``--shutdown-timeout`` plus
  ``STOP_GRACE`` (opening and closing the store), then kills what is left (exit 5, as a
  worker whose shutdown timed out). A second signal to the supervisor forces the children
  (a ``force`` line: each exits at once with 128 + that signal) and the supervisor exits
  128 + signal. Children run in a process group of their own, so a terminal's Ctrl-C
  reaches only the supervisor;
* serves ``--metrics`` for the group (``group_metrics``).

Hard time limits for sync handlers are not offered here: ending a child to stop one late
job would end every other job the child runs, and the engine already marks the late
attempt ``timed_out`` and retries it (``--timeout``). See docs/engine.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..common.exitcodes import STOP_SIGNALS, ExitCode
from .child_link import (
    LIFELINE_FD_ENV,
    REPORT_FD_ENV,
    SLOT_ENV,
    STOP_REQUEST,
    SUPERVISOR_ENV,
    ChildEndpoint,
    force_request,
)
from .job_log import emit
from .logging_setup import flush_logging
from .metrics_listen import listen

#: Failed starts in a row (a child exiting before its worker started) that stop the group.
START_FAILURES = 5
#: A child that ran this long before dying is restarted after the first backoff step again.
STABLE_SECONDS = 10.0
#: Beyond --shutdown-timeout, what a child may take to open and close its store when stopping.
STOP_GRACE = 10.0
#: Exit codes a worker gives for what restarting cannot fix (see ``ExitCode``).
WILL_FAIL_AGAIN = frozenset({ExitCode.USAGE, ExitCode.STORE, ExitCode.APP})

_MEANINGS = {
    int(ExitCode.OK): "a clean stop",
    int(ExitCode.INTERNAL): "an internal error",
    int(ExitCode.USAGE): "a bad flag, environment value or URL",
    int(ExitCode.STORE): "the store cannot be opened or reached, or was lost",
    int(ExitCode.APP): "the --app cannot be loaded or has no handlers",
    int(ExitCode.SHUTDOWN_TIMEOUT): "its shutdown timed out",
}


def describe_exit(code: int) -> str:
    """A child's return code in words: ``exit code 4 (the --app cannot be loaded …)`` or ``signal SIGKILL``."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    meaning = _MEANINGS.get(code)
    if meaning is None and code > ExitCode.FORCED_BASE:
        meaning = "a forced exit"
    return f"exit code {code}" + (f" ({meaning})" if meaning else "")


def backoff(failures: int, first: float = 0.5, most: float = 30.0) -> float:
    """Seconds before restart number ``failures`` (1, 2, …) of a child that keeps dying."""
    return float(min(first * 2 ** max(failures - 1, 0), most))


def resolve_processes(value: int | str) -> int:
    """``--processes``' value as a count: ``auto`` is the cores this process may run on."""
    if value != "auto":
        return int(value)
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - not Linux
        return max(os.cpu_count() or 1, 1)


@dataclass(slots=True)
class SupervisorConfig:
    processes: int
    #: What every child's environment adds to the supervisor's own (MONQUE_URL, MONQUE_APP, the
    #: settings given as flags); ``remove`` names variables a child must not inherit.
    child_environment: dict[str, str]
    remove: tuple[str, ...] = ()
    #: ``--instance-id``: each child gets ``ID-SLOT``; None lets each pick its own.
    instance_id: str | None = None
    shutdown_timeout: float = 30.0
    duration: float | None = None
    #: ``--metrics``: the group's endpoint; the children serve their own on loopback ports.
    metrics: tuple[str, int] | None = None
    command: list[str] = field(default_factory=lambda: [sys.executable, "-m", "monque_tui", "--worker"])
    start_failures: int = START_FAILURES


@dataclass(slots=True)
class Child:
    slot: int
    process: asyncio.subprocess.Process
    report: asyncio.StreamReader
    transport: asyncio.BaseTransport
    #: The supervisor's end of this child's lifeline: requests are written here; closed once
    #: the child has exited (or with the supervisor, which the child reads as end of file).
    lifeline: int
    instance_id: str | None = None
    metrics_port: int | None = None

    def tell(self, request: bytes) -> None:
        """Write a request on the lifeline (a few bytes: never blocks on a pipe's buffer)."""
        if self.lifeline < 0 or self.process.returncode is not None:
            return
        try:
            os.write(self.lifeline, request)
        except OSError:  # it exited meanwhile (EPIPE)
            pass

    def close_lifeline(self) -> None:
        if self.lifeline >= 0:
            os.close(self.lifeline)
            self.lifeline = -1


class CrashLoop(Exception):
    def __init__(self, slot: int, code: int, failures: int) -> None:
        super().__init__(slot, code, failures)
        self.slot, self.code, self.failures = slot, code, failures


class Supervisor:
    def __init__(self, config: SupervisorConfig) -> None:
        self.config = config
        self.id = config.instance_id or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.children: dict[int, Child] = {}
        self.restarts = 0
        self._stopping = asyncio.Event()
        self._stop_signal: int | None = None
        self._ever_started = False

    # -- one slot ---------------------------------------------------------------------------------
    def _environment(self, slot: int, report_fd: int, lifeline_fd: int) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in self.config.remove}
        env.update(self.config.child_environment)
        env.update(
            {
                SUPERVISOR_ENV: self.id,
                REPORT_FD_ENV: str(report_fd),
                LIFELINE_FD_ENV: str(lifeline_fd),
                SLOT_ENV: str(slot),
            }
        )
        if self.config.instance_id is not None:
            env["MONQUE_INSTANCE_ID"] = f"{self.config.instance_id}-{slot}"
        if self.config.metrics is not None:
            env["MONQUE_METRICS"] = "127.0.0.1:0"  # its own, on loopback: the group's endpoint reads it
        return env

    async def _spawn(self, slot: int) -> Child:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        lifeline_read, lifeline_write = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *self.config.command,
                env=self._environment(slot, write_fd, lifeline_read),
                pass_fds=(write_fd, lifeline_read),
                process_group=0,
            )
        except BaseException:
            os.close(read_fd)
            os.close(lifeline_write)
            raise
        finally:
            os.close(write_fd)
            os.close(lifeline_read)
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
        )
        child = Child(slot, process, reader, transport, lifeline_write)
        self.children[slot] = child
        if self._stopping.is_set():  # the stop came while it was being started
            child.tell(STOP_REQUEST)
        return child

    async def _exited(self, child: Child) -> int:
        """Wait for the child's exit; its code. Its lifeline closes with it."""
        try:
            return await child.process.wait()
        finally:
            child.close_lifeline()

    async def _started(self, child: Child) -> bool:
        """Wait for the child's report line (True) or its exit before one (False)."""
        line = await child.report.readline()
        child.transport.close()
        if not line:
            await self._exited(child)
            return False
        try:
            report = json.loads(line)
            child.instance_id = str(report["started"])
            port = report.get("metrics_port")
            child.metrics_port = int(port) if port is not None else None
        except (ValueError, KeyError, TypeError):
            pass
        return True

    async def keep(self, slot: int) -> int:
        """Keep slot ``slot`` filled until the stop; the last child's exit code. Raises ``CrashLoop``."""
        failed_starts = 0
        quick_deaths = 0
        while True:
            try:
                child = await self._spawn(slot)
            except OSError as error:  # no process at all (EAGAIN: a process limit): a failed start
                emit(
                    logging.ERROR, "supervisor:spawn-failed", f"cannot start worker process {slot}: {error}", slot=slot
                )
                started, code = False, int(ExitCode.INTERNAL)
            else:
                started = await self._started(child)
                code = child.process.returncode if child.process.returncode is not None else 0
            if not started:
                if self._stopping.is_set():
                    return code
                failed_starts += 1
                if (not self._ever_started and code in WILL_FAIL_AGAIN) or failed_starts >= self.config.start_failures:
                    raise CrashLoop(slot, code, failed_starts)
                delay = backoff(failed_starts)
                emit(
                    logging.WARNING,
                    "supervisor:start-failed",
                    f"worker process {slot} exited with {describe_exit(code)} before it started; restarting in "
                    f"{delay:g} s ({failed_starts} of {self.config.start_failures} failed starts in a row stop the group)",
                    slot=slot,
                    code=code,
                    failed_starts=failed_starts,
                    delay=delay,
                )
                if await self._pause(delay):
                    return code
                continue
            failed_starts = 0
            self._ever_started = True
            began = time.monotonic()
            emit(
                logging.INFO,
                "supervisor:child-started",
                f"worker process {slot} started as {child.instance_id} (pid {child.process.pid})",
                slot=slot,
                instance_id=child.instance_id,
                pid=child.process.pid,
            )
            code = await self._exited(child)
            if self._stopping.is_set():
                return code
            quick_deaths = quick_deaths + 1 if time.monotonic() - began < STABLE_SECONDS else 1
            delay = backoff(quick_deaths)
            self.restarts += 1
            emit(
                logging.ERROR,
                "supervisor:child-died",
                f"worker process {slot} ({child.instance_id}, pid {child.process.pid}) exited with "
                f"{describe_exit(code)}; restarting in {delay:g} s (its processing jobs return by stale recovery)",
                slot=slot,
                code=code,
                instance_id=child.instance_id,
                pid=child.process.pid,
                delay=delay,
            )
            if await self._pause(delay):
                return code

    async def _pause(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the stop comes first (True then)."""
        try:
            await asyncio.wait_for(self._stopping.wait(), seconds)
        except TimeoutError:
            return False
        return True

    # -- stopping -----------------------------------------------------------------------------------
    def begin_stop(self, sig: int | None, why: str) -> None:
        if self._stopping.is_set():
            return
        self._stop_signal = sig
        self._stopping.set()
        emit(
            logging.WARNING if sig is not None else logging.INFO,
            "supervisor:stopping",
            f"{why}: stopping {len(self.children)} worker process(es) (each finishes its in-flight jobs)",
            signal=None if sig is None else signal.Signals(sig).name,
        )
        for child in self.children.values():
            child.tell(STOP_REQUEST)

    def _received(self, sig: int) -> None:
        name = signal.Signals(sig).name
        if not self._stopping.is_set() or self._stop_signal is None:
            self.begin_stop(sig, f"{name} received")
            return
        emit(
            logging.ERROR,
            "supervisor:forced",
            f"second {name}: every worker process exits now; in-flight jobs stay processing until stale recovery",
            signal=name,
        )
        for child in self.children.values():
            child.tell(force_request(sig))
        flush_logging()
        os._exit(ExitCode.FORCED_BASE + sig)

    # -- the whole ---------------------------------------------------------------------------------
    async def run(self, on_started: Callable[[Supervisor], Any] | None = None) -> int:
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._received, sig)
        emit(
            logging.INFO,
            "supervisor:started",
            f"supervisor {self.id} (pid {os.getpid()}) starting {self.config.processes} worker process(es)",
            supervisor=self.id,
            processes=self.config.processes,
            pid=os.getpid(),
        )
        slots = {
            loop.create_task(self.keep(slot), name=f"slot-{slot}"): slot for slot in range(1, self.config.processes + 1)
        }
        if on_started is not None:
            on_started(self)
        timer = None
        if self.config.duration:
            timer = loop.call_later(self.config.duration, self.begin_stop, None, f"ran for {self.config.duration:g} s")
        crash: CrashLoop | None = None
        try:
            stopping = asyncio.ensure_future(self._stopping.wait())
            pending = set(slots)
            while pending and not self._stopping.is_set():
                done, pending = await asyncio.wait(pending | {stopping}, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(stopping)
                for task in done - {stopping}:
                    error = task.exception()
                    if isinstance(error, CrashLoop):
                        crash = error
                        break
                    if error is not None:
                        raise error
                if crash is not None:
                    break
            stopping.cancel()
            if crash is not None:
                self._report_crash(crash)
                self.begin_stop(None, "a worker process keeps failing at start")
            codes, killed = await self._collect(slots)
        finally:
            if timer is not None:
                timer.cancel()
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
            for child in self.children.values():
                child.close_lifeline()
        return self._exit_code(crash, codes, killed)

    def _report_crash(self, crash: CrashLoop) -> None:
        first = not self._ever_started and crash.code in WILL_FAIL_AGAIN
        emit(
            logging.ERROR,
            "supervisor:crash-loop",
            f"worker process {crash.slot} exited with {describe_exit(crash.code)} before it started"
            + (
                " (restarting cannot fix that; its own error is above)"
                if first
                else f", {crash.failures} times in a row"
            )
            + ": stopping the group",
            slot=crash.slot,
            code=crash.code,
            failed_starts=crash.failures,
        )

    async def _collect(self, slots: dict[asyncio.Task[int], int]) -> tuple[list[int], int]:
        """Wait for every slot's last child within the stop budget; kill those past it."""
        budget = self.config.shutdown_timeout + STOP_GRACE
        _, late = await asyncio.wait(slots, timeout=budget)
        killed = 0
        for task in late:
            child = self.children.get(slots[task])
            if child is not None and child.process.returncode is None:
                killed += 1
                emit(
                    logging.ERROR,
                    "supervisor:killed",
                    f"worker process {child.slot} ({child.instance_id}) still running {budget:g} s after the stop: "
                    "killed; its jobs stay processing until stale recovery",
                    slot=child.slot,
                )
                child.process.kill()
        codes: list[int] = []
        for task in slots:
            try:
                codes.append(await task)
            except CrashLoop as error:
                codes.append(error.code)
        return codes, killed

    def _exit_code(self, crash: CrashLoop | None, codes: list[int], killed: int) -> int:
        if crash is not None:
            code = crash.code if crash.code in WILL_FAIL_AGAIN else ExitCode.CRASH_LOOP
            emit(logging.ERROR, "supervisor:stopped", f"stopped after a crash loop (exit {int(code)})", code=int(code))
            return int(code)
        if killed or ExitCode.SHUTDOWN_TIMEOUT in codes:
            emit(
                logging.ERROR,
                "supervisor:stopped",
                "stopped; a worker process's shutdown timed out and left jobs for stale recovery",
                code=int(ExitCode.SHUTDOWN_TIMEOUT),
            )
            return int(ExitCode.SHUTDOWN_TIMEOUT)
        failed = [code for code in codes if code != 0 and code != -(self._stop_signal or 0)]
        code = failed[0] if failed else 0
        if code < 0:
            code = ExitCode.FORCED_BASE - code
        emit(
            logging.INFO if code == 0 else logging.ERROR,
            "supervisor:stopped",
            "stopped cleanly" if code == 0 else f"stopped; a worker process ended with {describe_exit(code)}",
            code=code,
            restarts=self.restarts,
        )
        return int(code)

    def endpoints(self) -> list[ChildEndpoint]:
        """The live children's own ``/metrics`` (for ``group_metrics``; read from its thread)."""
        return [
            ChildEndpoint(child.slot, child.instance_id, child.metrics_port)
            for child in list(self.children.values())
            if child.metrics_port is not None and child.instance_id is not None and child.process.returncode is None
        ]


def _serve_metrics(supervisor: Supervisor, host: str, port: int) -> Any:
    from .group_metrics import serve_group

    return listen(
        lambda: serve_group(supervisor.endpoints, supervisor.config.processes, lambda: supervisor.restarts, host, port),
        host,
        port,
        f"Prometheus metrics of the {supervisor.config.processes} worker processes",
    )


def run_supervisor(config: SupervisorConfig) -> int:
    """Run the group until a signal (or ``duration``), a crash loop; the exit code."""
    supervisor = Supervisor(config)
    server = None if config.metrics is None else _serve_metrics(supervisor, *config.metrics)
    try:
        return asyncio.run(supervisor.run())
    finally:
        if server is not None:
            server.close()


__all__ = [
    "CrashLoop",
    "Supervisor",
    "SupervisorConfig",
    "backoff",
    "describe_exit",
    "resolve_processes",
    "run_supervisor",
]

"""A worker process's link to the supervisor that started it (``monque-tui --worker --processes N``).

The supervisor hands each child two pipe ends, named by environment variables:

* the *report* pipe, on which the child writes one JSON line once its worker has started
  (instance id, pid, the port of its own loopback ``/metrics``). A child that exits before
  writing it failed *at start*: that is what the supervisor's crash-loop rule counts;
* the *lifeline*, a pipe of its own on which the supervisor writes requests, one line
  each: ``stop`` (stop gracefully: the same stop as a first SIGTERM, so a child that also
  gets the signal from outside, from ``pkill -f`` or systemd's control-group kill, counts
  one stop and finishes its jobs) and ``force SIGNUM`` (exit now, as on a second signal:
  the supervisor's own second signal). Its end of file means the supervisor is gone
  (killed with SIGKILL, say): the child then stops gracefully on its own instead of running
  on unsupervised. Children run in a process group of their own (a terminal's Ctrl-C
  reaches only the supervisor), so without the lifeline nothing would tell them.

A worker started any other way has neither variable and ``ChildLink.from_environment`` is None.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .job_log import emit
from .logging_setup import flush_logging

#: The supervisor's id, which the engine also records on each child's registry record
#: (``monque_engine.scheduler.fleet.SUPERVISOR_ENV``: the same name, held equal by a test).
SUPERVISOR_ENV = "MONQUE_SUPERVISOR_ID"
REPORT_FD_ENV = "MONQUE_SUPERVISOR_REPORT_FD"
LIFELINE_FD_ENV = "MONQUE_SUPERVISOR_LIFELINE_FD"
#: Which of the supervisor's slots (1..N) this child fills, for log lines.
SLOT_ENV = "MONQUE_SUPERVISOR_SLOT"
INTERNAL_ENV = (SUPERVISOR_ENV, REPORT_FD_ENV, LIFELINE_FD_ENV, SLOT_ENV)


#: The supervisor's requests on the lifeline (one line each).
STOP_REQUEST = b"stop\n"


def force_request(sig: int) -> bytes:
    return f"force {int(sig)}\n".encode()


def parse_request(line: bytes) -> str | signal.Signals | None:
    """A lifeline line: the reason of a graceful stop, the signal of a forced one, or None
    (unknown: ignored, so that a newer supervisor's requests do not stop an older child)."""
    words = line.decode("ascii", "replace").split()
    if words == ["stop"]:
        return "the supervisor asks to stop"
    if len(words) == 2 and words[0] == "force":
        try:
            return signal.Signals(int(words[1]))
        except ValueError:
            return None
    return None


@dataclass(frozen=True, slots=True)
class ChildEndpoint:
    """A running child's own ``/metrics`` port, as it reported it; ``instance`` tells a
    restarted child from its predecessor in the same slot (``group_metrics``)."""

    slot: int
    instance: str
    port: int


@dataclass(slots=True)
class ChildLink:
    supervisor_id: str
    report_fd: int
    lifeline_fd: int
    slot: int
    #: Where the lifeline's requests go now: (stop, force). Swapped by a later
    #: ``watch_lifeline``: the CLI watches from the start (the --app import may hang), the
    #: worker takes over once its loop runs.
    _route: list[Callable[..., Any]] = field(default_factory=list)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> ChildLink | None:
        """The link the environment names; from ``os.environ`` the same object each call, so
        that the CLI and the worker share its one lifeline reader."""
        global _process_link
        if environ is None and _process_link is not None and _process_link.pid == os.getpid():
            return _process_link.link
        env = os.environ if environ is None else environ
        try:
            link = cls(
                env[SUPERVISOR_ENV], int(env[REPORT_FD_ENV]), int(env[LIFELINE_FD_ENV]), int(env.get(SLOT_ENV, "0"))
            )
        except (KeyError, ValueError):
            return None
        if environ is None:
            _process_link = _ProcessLink(os.getpid(), link)
        return link

    def watch_lifeline(self, stop: Callable[[str], Any], force: Callable[[signal.Signals], Any]) -> None:
        """From a daemon thread: call ``stop(why)`` when the supervisor asks for a graceful stop
        or its end closes, and ``force(signal)`` when it forces the stop. Thread-safe callables.
        Called again, it hands the requests still to come to the new callables (one reader)."""
        watching = bool(self._route)
        self._route[:] = [stop, force]  # one slice assignment: the reader sees the old pair or the new
        if watching:
            return

        def watch() -> None:
            pending = b""
            try:
                while chunk := os.read(self.lifeline_fd, 256):
                    pending += chunk
                    while b"\n" in pending:
                        line, pending = pending.split(b"\n", 1)
                        request = parse_request(line)
                        if isinstance(request, signal.Signals):
                            self._route[1](request)
                        elif request is not None:
                            self._route[0](request)
            except OSError:
                pass
            self._route[0]("the supervisor is gone (its lifeline closed)")

        threading.Thread(target=watch, name="monque-supervisor-lifeline", daemon=True).start()

    def report_started(self, instance_id: str, metrics_port: int | None) -> None:
        """One line (under PIPE_BUF, so written whole) saying this child's worker runs."""
        line = json.dumps({"started": instance_id, "pid": os.getpid(), "metrics_port": metrics_port}) + "\n"
        try:
            os.write(self.report_fd, line.encode())
        except OSError:  # the supervisor is gone; the lifeline stops this process
            pass


@dataclass(frozen=True, slots=True)
class _ProcessLink:
    pid: int
    link: ChildLink


_process_link: _ProcessLink | None = None


def stop_before_start(why: str) -> None:
    """A stop asked while the child is still loading its --app (a slow or hung import, a
    store check): nothing is open and no job claimed yet, so it just exits, 0 as a worker
    stopped before it started. The worker replaces this once its loop runs."""
    emit(logging.INFO, "worker:stopped", f"stopped before it started, while loading: {why}", code=0)
    flush_logging()
    os._exit(0)


def force_before_start(sig: signal.Signals) -> None:
    flush_logging()
    os._exit(128 + int(sig))


__all__ = [
    "INTERNAL_ENV",
    "LIFELINE_FD_ENV",
    "REPORT_FD_ENV",
    "SLOT_ENV",
    "STOP_REQUEST",
    "SUPERVISOR_ENV",
    "ChildEndpoint",
    "ChildLink",
    "force_before_start",
    "force_request",
    "parse_request",
    "stop_before_start",
]

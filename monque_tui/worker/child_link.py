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
import os
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

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

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> ChildLink | None:
        env = os.environ if environ is None else environ
        try:
            return cls(
                env[SUPERVISOR_ENV], int(env[REPORT_FD_ENV]), int(env[LIFELINE_FD_ENV]), int(env.get(SLOT_ENV, "0"))
            )
        except (KeyError, ValueError):
            return None

    def watch_lifeline(self, stop: Callable[[str], Any], force: Callable[[signal.Signals], Any]) -> None:
        """From a daemon thread: call ``stop(why)`` when the supervisor asks for a graceful stop
        or its end closes, and ``force(signal)`` when it forces the stop. Thread-safe callables."""

        def watch() -> None:
            pending = b""
            try:
                while chunk := os.read(self.lifeline_fd, 256):
                    pending += chunk
                    while b"\n" in pending:
                        line, pending = pending.split(b"\n", 1)
                        request = parse_request(line)
                        if isinstance(request, signal.Signals):
                            force(request)
                        elif request is not None:
                            stop(request)
            except OSError:
                pass
            stop("the supervisor is gone (its lifeline closed)")

        threading.Thread(target=watch, name="monque-supervisor-lifeline", daemon=True).start()

    def report_started(self, instance_id: str, metrics_port: int | None) -> None:
        """One line (under PIPE_BUF, so written whole) saying this child's worker runs."""
        line = json.dumps({"started": instance_id, "pid": os.getpid(), "metrics_port": metrics_port}) + "\n"
        try:
            os.write(self.report_fd, line.encode())
        except OSError:  # the supervisor is gone; the lifeline stops this process
            pass


__all__ = [
    "INTERNAL_ENV",
    "LIFELINE_FD_ENV",
    "REPORT_FD_ENV",
    "SLOT_ENV",
    "STOP_REQUEST",
    "SUPERVISOR_ENV",
    "ChildEndpoint",
    "ChildLink",
    "force_request",
    "parse_request",
]

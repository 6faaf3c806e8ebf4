"""A worker process's link to the supervisor that started it (``monque-tui --worker --processes N``).

The supervisor hands each child two pipe ends, named by environment variables:

* the *report* pipe, on which the child writes one JSON line once its worker has started
  (instance id, pid, the port of its own loopback ``/metrics``). A child that exits before
  writing it failed *at start*: that is what the supervisor's crash-loop rule counts;
* the *lifeline*, a pipe the supervisor never writes to. Its end of file means the
  supervisor is gone (killed with SIGKILL, say): the child then stops gracefully on its own,
  as on SIGTERM, instead of running on unsupervised. Children run in a process group of
  their own (a terminal's Ctrl-C reaches only the supervisor, which passes it on once), so
  without the lifeline nothing would tell them.

A worker started any other way has neither variable and ``ChildLink.from_environment`` is None.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass

#: The supervisor's id, which the engine also records on each child's registry record
#: (``monque_engine.scheduler.fleet.SUPERVISOR_ENV``: the same name, held equal by a test).
SUPERVISOR_ENV = "MONQUE_SUPERVISOR_ID"
REPORT_FD_ENV = "MONQUE_SUPERVISOR_REPORT_FD"
LIFELINE_FD_ENV = "MONQUE_SUPERVISOR_LIFELINE_FD"
#: Which of the supervisor's slots (1..N) this child fills, for log lines.
SLOT_ENV = "MONQUE_SUPERVISOR_SLOT"
INTERNAL_ENV = (SUPERVISOR_ENV, REPORT_FD_ENV, LIFELINE_FD_ENV, SLOT_ENV)


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

    def watch_lifeline(self) -> None:
        """From a daemon thread: when the supervisor's end closes, SIGTERM this process (a graceful stop)."""

        def watch() -> None:
            try:
                while os.read(self.lifeline_fd, 1):
                    pass
            except OSError:
                pass
            os.kill(os.getpid(), signal.SIGTERM)

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
    "SUPERVISOR_ENV",
    "ChildEndpoint",
    "ChildLink",
]

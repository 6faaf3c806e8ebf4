"""Exit codes of the ``monque-tui`` command, the exceptions that carry them, and the signals that stop it.

Scripts and process supervisors branch on the exit code, so each failure class has its own
number and the numbers never change meaning. User errors travel as ``CliError`` up to
``cli.main``, which prints the one-line message (never a traceback) and returns the code.
"""

from __future__ import annotations

import signal
from enum import IntEnum

#: Signals that ask for a graceful stop, in every mode and command. SIGHUP is among them
#: because it is what a worker started in a terminal receives when that terminal (an ssh
#: session, a tmux pane) goes away; its default action would kill the process on the spot
#: and leave every running job ``processing`` until ``lock_timeout`` (30 min by default) and
#: a dead registry record.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class ExitCode(IntEnum):
    OK = 0
    #: An unexpected internal error (a bug): one line, and a traceback with --log-level debug.
    INTERNAL = 1
    #: Bad flag, bad environment value, malformed URL or unknown scheme, option not valid here.
    USAGE = 2
    #: The store cannot be opened: missing directory, unreadable file, not a database, unreachable MongoDB.
    STORE = 3
    #: The --app cannot be imported, is of the wrong kind, registers no handlers, or its setup raised.
    APP = 4
    #: Shutdown timed out: in-flight jobs were left processing for stale recovery.
    SHUTDOWN_TIMEOUT = 5
    #: ``monque-tui check`` found at least one ``fail`` line (warnings alone exit 0).
    CHECK_FAILED = 6
    #: ``--worker --processes N``: a worker process kept exiting before it started (a crash loop).
    CRASH_LOOP = 7
    #: Whoever read stdout went away (``monque-tui export | head``): 128 + SIGPIPE, as a shell reports it.
    BROKEN_PIPE = 141
    #: A second SIGHUP/SIGINT/SIGTERM forced the exit: 128 + the signal number (129, 130 or 143).
    FORCED_BASE = 128


class CliError(Exception):
    """A user-facing failure: ``message`` is one line that names what is wrong and the fix."""

    def __init__(self, message: str, code: ExitCode | int = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())  # always exactly one line
        self.code = int(code)


class StoppedBeforeStart(BaseException):
    """A stop signal came before anything started (the start-up ping of a server that does
    not answer): ``line`` says so. A ``BaseException``, as ``KeyboardInterrupt``: no ``except
    Exception`` on the way swallows it. A mode (a worker, the console) exits 0 with it, as a
    worker stopped before it started; a command exits 128 + ``signum``, as a stopped command."""

    def __init__(self, signum: int, line: str) -> None:
        super().__init__(line)
        self.signum = signum
        self.line = line
